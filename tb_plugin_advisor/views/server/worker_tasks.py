"""The analyses that run in the Advisor's worker processes (picklable, module-level functions).

Each returns the answer's JSON bytes and their gzip, with paths already relative to the logdir, so
the server process receives two byte strings and never a Profile or a report object.
"""

from __future__ import annotations

import gzip
import importlib
import json
from typing import Any, Callable, Dict, Hashable, Optional, Tuple

from tb_plugin_advisor.errors import ProfileChangedError, ProfileReadError
from tb_plugin_advisor.process_memory.heap import release_free_memory
from tb_plugin_advisor.process_memory.orphans import end_with_parent
from tb_plugin_advisor.process_memory.resident import resident_bytes
from tb_plugin_advisor.sources.session import Scan, Session
from tb_plugin_advisor.views.server.http_errors import ApiError, PathMapper

GZIP_LEVEL = 5

Encoded = Tuple[bytes, bytes]


def encode(value: Any) -> Encoded:
    body = json.dumps(value, allow_nan=False).encode("utf-8")
    return body, gzip.compress(body, GZIP_LEVEL, mtime=0)


# What a worker imports before its first task: the report and diff engines and the run readers.
ENGINE_MODULES = (
    "tb_plugin_advisor.report.run",
    "tb_plugin_advisor.diff.compare",
    "tb_plugin_advisor.sources.runs",
)


# This worker's resident set once its engine was imported (warm_up): what it holds between tasks
# when the analyses it ran left nothing behind. None until warmed up, or where /proc is absent.
_warm_resident: Optional[int] = None


def warm_up(server: int) -> None:
    """Pool initializer: end this worker when the server (`server`, its pid) is gone, then import the
    engine while the worker is idle, not when its first task arrives (a recycled worker is spawned
    right after its predecessor's last task)."""
    end_with_parent(server)
    for module in ENGINE_MODULES:
        importlib.import_module(module)
    global _warm_resident
    _warm_resident = resident_bytes()


def measured(fn: Callable[..., Any], *args: Any) -> Tuple[Any, Optional[int]]:
    """`fn(*args)` and the bytes this worker still holds beyond its warm start once the freed pages
    went back (None where that cannot be told). The server keeps a worker that serves small
    analyses and replaces one that a large analysis left holding memory, so many small captures
    cost one process start, not one each, and a large profile's memory still goes back to the OS."""
    try:
        value = fn(*args)
    except Exception as e:  # a refused profile may have been read up to the size cap: say so too
        e.held_bytes = _held_beyond_warm()  # type: ignore[attr-defined]  # pickled with the error
        raise
    return value, _held_beyond_warm()


def _held_beyond_warm() -> Optional[int]:
    release_free_memory()
    now = resident_bytes()
    if now is None or _warm_resident is None:
        return None
    return max(0, now - _warm_resident)


def to_jsonable(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        value = to_json()
    if isinstance(value, (bytes, str)):
        return json.loads(value)
    return value


def report_answer(
    session: Session,
    host: Optional[str],
    logdir: str,
    scheduler: Optional[str] = None,
    progress_path: Optional[str] = None,
) -> Encoded:
    """The engine's report for a session (all hosts, or one), encoded. A run's hosts are analysed in
    parallel (report/hostpool.py: a local pool, or the Dask cluster at `scheduler`). Bytes read so far go
    to `progress_path` (progress_board.py), which the server reads to answer polls."""
    from tb_plugin_advisor.report.disk_cache import open_cache
    from tb_plugin_advisor.report.door import ReportDoor
    from tb_plugin_advisor.views.server.progress_board import ProgressWriter

    paths = PathMapper(logdir)
    on_progress = ProgressWriter(progress_path) if progress_path else None
    try:
        # the host was validated by the route; a report analysed before (this or another process,
        # before a restart) comes from the persistent cache (report/door.py)
        door = ReportDoor(open_cache(logdirs=[logdir]), scheduler=scheduler)
        report, _cached = door.report(session, host, on_progress=on_progress)
    except ProfileChangedError as e:  # being written: say so, and read again on the next request
        message = f"cannot read the profile of run '{session.run}' now: {e}"
        raise ApiError(409, paths.text(message), retry=True) from None
    except ProfileReadError as e:
        raise ApiError(422, paths.text(f"cannot read the profile of run '{session.run}': {e}")) from None
    return encode(paths.json(report))


def cached_answer(session: Session, host: Optional[str], logdir: str) -> Optional[Encoded]:
    """The report answer from the persistent cache alone, or None on a miss. No profile is read (the
    key comes from the scan), so the server may call it in its own process: a report analysed before
    a restart then costs a cache read, not a worker started for it."""
    from tb_plugin_advisor.report.disk_cache import open_cache
    from tb_plugin_advisor.report.door import ReportDoor

    report = ReportDoor(open_cache(logdirs=[logdir])).cached(session, host)
    return None if report is None else encode(PathMapper(logdir).json(report))


def diff_answer(baseline: bytes, candidate: bytes) -> Encoded:
    """The diff of two report answers (the diff works on what the user saw in the reports)."""
    from tb_plugin_advisor.diff import compare as differ

    return encode(to_jsonable(differ.diff_reports(json.loads(baseline), json.loads(candidate))))


Checks = Dict[Hashable, Any]


def doctor_answer(scan: Scan, memo: Checks, logdir: str) -> Tuple[bytes, bytes, Checks]:
    """Doctor for a scan (it reads every host file it has no result for), encoded; and the per-file
    results, so the server remembers them without ever reading a profile itself."""
    from tb_plugin_advisor.sources.doctor import diagnose as doctor

    memo = dict(memo)
    diagnosis = doctor.diagnose_scan(scan, memo=memo).to_json()
    return (*encode(PathMapper(logdir).json(diagnosis)), memo)
