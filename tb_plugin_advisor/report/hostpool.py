"""Analyse the hosts of one run in parallel: a local process pool, or an existing Dask cluster.

A 64-host run is 64 files of hundreds of MB; reading them one after another leaves all but one core
idle. Each task reads one host file and returns only its HostReport (per-step arrays and top-N
tables, a few hundred kB), never the Profile, so results are cheap to send back and the merge in
report/run.py sees exactly what a sequential run sees: the JSON is the same whichever way it ran.

The local pool is sized by cores and by memory: a host's peak is estimated from its file size
(PEAK_BYTES_PER_FILE_BYTE, measured with bench/bench_pod.py) and a host only starts when the
estimates of the hosts in flight plus its own fit into the RAM available now. A one-host run (or a
machine where only one fits) runs in-process and never pays for a pool. Workers come from the spawn
context and are not daemons, so this also runs inside a worker of the server's own process pool.
Dask is imported only when a scheduler address is given.
"""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence

from tb_plugin_advisor.errors import AdvisorError, ProfileReadError
from tb_plugin_advisor.process_memory.orphans import end_with_parent
from tb_plugin_advisor.readers.formats.registry import format_named
from tb_plugin_advisor.report.imported_meanwhile import imported_meanwhile
from tb_plugin_advisor.sources.remote import explain
from tb_plugin_advisor.sources.runs import host_files

if TYPE_CHECKING:
    from tb_plugin_advisor.report.host import HostReport
    from tb_plugin_advisor.report.run import Report

# The analyses and the run report, imported while a host's file is read (report/imported_meanwhile.py).
# So this module, and what reaches the read (report/door.py, the CLI's report command), imports none
# of them before it: tests/report/test_imported_meanwhile.py checks.
ANALYSES_MODULE = "tb_plugin_advisor.report.run"

# Peak resident memory of reading + analysing one host, per byte of its .xplane.pb. bench/bench_pod.py
# measured the RSS growth of a fresh process: 89 MB for a 24 MB make_profile.py host (3.6 ×) and
# 38 MB for a 6.4 MB one (a fixed ~15 MB plus ~3.5 ×); 4 × plus WORKER_BASE_BYTES covers both.
PEAK_BYTES_PER_FILE_BYTE = 4.0
# Memory a fresh spawn worker costs before it reads anything (interpreter + numpy + the package).
WORKER_BASE_BYTES = 150 * 2**20
# Share of the RAM available now that the pool may plan to use; the rest is left to everything else.
RAM_SHARE = 0.8
# How long to try reaching a Dask scheduler before saying it cannot be reached.
DASK_CONNECT_TIMEOUT_S = 20

# on_progress(done_bytes, total_bytes) over all the hosts of a run: what progress bars show. Hosts read
# in this process report as they are read; hosts read by a pool or a cluster when each one is done.
RunProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class HostTask:
    """One host file to analyse: what travels to a worker (a path, never bytes)."""

    host: str
    path: str
    size_bytes: int
    format: str  # Session.format: the format id whose reader reads it (readers/formats/)


def analyze_host_file(
    path: str, host: str, fmt: str, on_progress: Optional[RunProgress] = None
) -> HostReport:
    """The worker's job: read one host file of format `fmt` (a format id) and keep only its analysed
    result."""
    reader = format_named(fmt)
    if reader is None or not reader.analysed:
        raise AdvisorError(f"{path}: no reader for the format '{fmt}'")
    try:
        with imported_meanwhile(ANALYSES_MODULE):
            profile = reader.read(path, host, on_progress)
    except ProfileReadError as exc:
        reason = explain(path, exc.__cause__) if exc.__cause__ is not None else None
        if reason is None:
            raise
        raise ProfileReadError(path, reason) from None
    from tb_plugin_advisor.report.analyze import analyze_profile

    return analyze_profile(profile)


def estimated_peak_bytes(size_bytes: int) -> int:
    return int(size_bytes * PEAK_BYTES_PER_FILE_BYTE) + WORKER_BASE_BYTES


def available_memory_bytes() -> Optional[int]:
    """RAM available to new work now (Linux MemAvailable); None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def pool_size(sizes: Sequence[int], cores: int, memory_bytes: Optional[int]) -> int:
    """How many workers to start: no more than cores, hosts, or the smallest hosts that fit in RAM."""
    if not sizes:
        return 0
    limit = min(cores, len(sizes))
    if memory_bytes is None:
        return max(1, limit)
    budget = memory_bytes * RAM_SHARE
    fitting, used = 0, 0
    for size in sorted(sizes):
        used += estimated_peak_bytes(size)
        if used > budget:
            break
        fitting += 1
    return max(1, min(limit, fitting))


def analyze_hosts(
    tasks: Sequence[HostTask],
    workers: Optional[int] = None,
    scheduler: Optional[str] = None,
    memory_bytes: Optional[int] = None,
    on_progress: Optional[RunProgress] = None,
) -> List[HostReport]:
    """HostReports in the order of `tasks`: on Dask with `scheduler`, else a local pool, else in-process.

    `workers` overrides the core count (1 = sequential); `memory_bytes` overrides the RAM available.
    """
    progress = _HostsProgress(tasks, on_progress)
    if scheduler:
        reports = _on_dask(tasks, scheduler)
        progress.all_done()
        return reports
    memory = available_memory_bytes() if memory_bytes is None else memory_bytes
    size = pool_size([t.size_bytes for t in tasks], workers or usable_cores(), memory)
    if size <= 1:
        reports = []
        for t in tasks:
            reports.append(analyze_host_file(t.path, t.host, t.format, progress.reading(t)))
            progress.host_done(t)
        return reports
    return _on_local_pool(tasks, size, memory, progress)


class _HostsProgress:
    """Sums bytes over a run's hosts for one on_progress callback (which may be None)."""

    def __init__(self, tasks: Sequence[HostTask], on_progress: Optional[RunProgress]):
        self.total = sum(t.size_bytes for t in tasks)
        self.finished = 0
        self.on_progress = on_progress

    def reading(self, task: HostTask) -> Optional[RunProgress]:
        if self.on_progress is None:
            return None
        before, report = self.finished, self.on_progress
        return lambda done, _size: report(min(self.total, before + done), self.total)

    def host_done(self, task: HostTask) -> None:
        self.finished += task.size_bytes
        if self.on_progress is not None:
            self.on_progress(min(self.total, self.finished), self.total)

    def all_done(self) -> None:
        self.finished = self.total
        if self.on_progress is not None:
            self.on_progress(self.total, self.total)


def host_pool(size: int) -> ProcessPoolExecutor:
    """`size` worker processes that end themselves when the process that started them is gone: in a
    server's analysis worker, that worker is ended with TensorBoard, and its hosts' workers would
    otherwise wait on their queue for good (process_memory/orphans.py)."""
    return ProcessPoolExecutor(max_workers=size, mp_context=get_context("spawn"), initializer=end_with_parent,
                               initargs=(os.getpid(),))


def _on_local_pool(
    tasks: Sequence[HostTask], size: int, memory: Optional[int], progress: Optional[_HostsProgress] = None
) -> List[HostReport]:
    """At most `size` hosts at once, and a host starts only when its memory estimate fits."""
    budget = None if memory is None else memory * RAM_SHARE
    results: Dict[int, HostReport] = {}
    pending = list(range(len(tasks)))
    running: Dict[Future, int] = {}
    in_flight = 0
    with host_pool(size) as pool:
        try:
            while pending or running:
                while pending and len(running) < size:
                    cost = estimated_peak_bytes(tasks[pending[0]].size_bytes)
                    if running and budget is not None and in_flight + cost > budget:
                        break  # wait for a host to finish; a lone host always runs
                    index = pending.pop(0)
                    task = tasks[index]
                    running[pool.submit(analyze_host_file, task.path, task.host, task.format)] = index
                    in_flight += cost
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in done:
                    index = running.pop(future)
                    in_flight -= estimated_peak_bytes(tasks[index].size_bytes)
                    results[index] = future.result()  # a worker's ProfileReadError is raised here
                    if progress is not None:
                        progress.host_done(tasks[index])
        except BaseException:
            for future in running:
                future.cancel()
            raise
    return [results[i] for i in range(len(tasks))]


def _on_dask(tasks: Sequence[HostTask], scheduler: str) -> List[HostReport]:
    """Each host on the cluster; workers open the paths themselves (shared filesystem or s3:// / gs://)."""
    try:
        from distributed import Client
    except ImportError:
        raise AdvisorError(
            "--scheduler needs dask.distributed: pip install 'tb-plugin-advisor[dask]'"
        ) from None
    try:
        client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise AdvisorError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    with client:
        futures = [
            client.submit(
                analyze_host_file, t.path, t.host, t.format,
                key=f"tb-advisor-{i}-{t.host}-{os.getpid()}", pure=False,
            )
            for i, t in enumerate(tasks)
        ]
        return client.gather(futures)


def build_session_report(
    session,
    host: Optional[str] = None,
    scheduler: Optional[str] = None,
    workers: Optional[int] = None,
    role: str = "",
    on_progress: Optional[RunProgress] = None,
) -> Report:
    """The run report of a discovered session (all hosts, or only `host`), hosts analysed in parallel."""
    files = host_files(session, host, role)
    if not files:
        raise AdvisorError(f"run {session.run!r} has no profile to analyse")
    tasks = [HostTask(f.host, f.path, int(f.size_bytes or 0), session.format) for f in files]
    reports = analyze_hosts(tasks, workers=workers, scheduler=scheduler, on_progress=on_progress)
    from tb_plugin_advisor.report.run import Report

    return Report(run=session.run, hosts=[t.host for t in tasks], host_reports=reports, selected_host=host)
