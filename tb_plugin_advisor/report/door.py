"""The one way a run's report is obtained: from the persistent analysis cache (report/disk_cache.py)
when the run was analysed before with its files unchanged, else built (report/hostpool.py: the hosts
analysed in parallel, here, on a process pool or on a Dask cluster) and stored for the next caller.

The CLI's `report`, `diff` and `trend`, TensorBoard's workers and its in-process cache check all go
through a `ReportDoor`, so a run analysed by any of them is read from the cache by the others, and
what counts as "the same run" (the cache key) and what is stored (the report JSON, §2) are decided
once. A trend asks for many captures at once (`reports`): every capture missing from the cache goes
to one pool, so a series of one-host captures is read in parallel; a capture that cannot be read is
returned as its error, not raised.

What it does not own: the cache's files and their safety (disk_cache.py), how hosts are analysed and
pooled (hostpool.py, sections.py), and anything a caller shows while it waits (a progress callback
is passed in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from tb_plugin_advisor.errors import AdvisorError, ProfileReadError
from tb_plugin_advisor.readers.formats.registry import is_analysed
from tb_plugin_advisor.report.disk_cache import ReportCache
from tb_plugin_advisor.report.hostpool import HostTask, RunProgress, analyze_hosts, build_session_report
from tb_plugin_advisor.sources.session import Session

ReportJson = Dict[str, Any]
Outcome = Union[ReportJson, str]  # a report, or why the capture could not be read


@dataclass
class ReportDoor:
    """Reports by session, from `cache` or built with these parallelism choices (`scheduler`: a Dask
    scheduler's address; `workers`: at most this many hosts at once here, 1 = sequential)."""

    cache: ReportCache
    scheduler: Optional[str] = None
    workers: Optional[int] = None

    def cached(self, session: Session, host: Optional[str] = None) -> Optional[ReportJson]:
        """The report from the cache alone, or None. Reads no profile (the key comes from the scan),
        so a server may call it in its own process."""
        return self.cache.get(session, host)

    def report(self, session: Session, host: Optional[str] = None, role: str = "",
               on_progress: Optional[RunProgress] = None) -> Tuple[ReportJson, bool]:
        """The report of `session` (all hosts, or only `host`) and whether it came from the cache.
        `role` ("baseline", "candidate") words the error of a run with no profile."""
        hit = self.cache.get(session, host)
        if hit is not None:
            return hit, True
        report = build_session_report(session, host, scheduler=self.scheduler, workers=self.workers,
                                      role=role, on_progress=on_progress).to_json()
        self.cache.put(session, host, report)
        return report, False

    def reports(self, sessions: Sequence[Session], on_progress: Optional[RunProgress] = None
                ) -> Tuple[Dict[str, Outcome], int]:
        """Every session's report (all hosts) or why it could not be read, by run name; and how many
        came from the cache. The missing ones are analysed together, then stored."""
        outcomes: Dict[str, Outcome] = {}
        missing: List[Session] = []
        from_cache = 0
        for s in sessions:
            if not is_analysed(s.format) or not s.hosts:
                files = ", ".join(s.files[:4]) or "nothing"
                outcomes[s.run] = f"holds no profile the Advisor reads ({files})"
                continue
            hit = self.cache.get(s, None)
            if hit is not None:
                outcomes[s.run] = hit
                from_cache += 1
            else:
                missing.append(s)
        if missing:
            built = self._analyse(missing, on_progress)
            for s in missing:
                value = built[s.run]
                if isinstance(value, dict):
                    self.cache.put(s, None, value)
                outcomes[s.run] = value
        return outcomes, from_cache

    def validity(self, sessions: Sequence[Session]) -> Dict[str, Dict[str, Any]]:
        """What each analysed run's trace supports, as doctor writes it beside the run: {`rows`: the
        report's `validity.rows`} or {`error`: why the run could not be read}. Runs the Advisor does
        not analyse are left out."""
        analysed = [s for s in sessions if is_analysed(s.format) and s.hosts]
        if not analysed:
            return {}
        outcomes, _ = self.reports(analysed)
        out: Dict[str, Dict[str, Any]] = {}
        for run, outcome in outcomes.items():
            if isinstance(outcome, dict):
                validity = outcome.get("validity")
                out[run] = {"rows": list(validity.get("rows") or []) if isinstance(validity, dict) else []}
            else:
                out[run] = {"error": outcome}
        return out

    def _analyse(self, missing: Sequence[Session], on_progress: Optional[RunProgress]) -> Dict[str, Outcome]:
        tasks = [HostTask(f.host, f.path, int(f.size_bytes or 0), s.format) for s in missing for f in s.hosts]
        out: Dict[str, Outcome] = {}
        try:
            host_reports = analyze_hosts(tasks, workers=self.workers, scheduler=self.scheduler,
                                         on_progress=on_progress)
        except (AdvisorError, ProfileReadError, OSError):
            # one bad capture fails the batch: read them one by one to tell which
            for s in missing:
                try:
                    out[s.run] = build_session_report(s, None, scheduler=self.scheduler, workers=1).to_json()
                except (AdvisorError, ProfileReadError, OSError) as e:
                    out[s.run] = str(e) or type(e).__name__
            return out
        from tb_plugin_advisor.report.run import Report  # imported while the hosts were read (hostpool.py)

        at = 0
        for s in missing:
            n = len(s.hosts)
            report = Report(run=s.run, hosts=[f.host for f in s.hosts], host_reports=host_reports[at: at + n],
                            selected_host=None)
            out[s.run] = report.to_json()
            at += n
        return out
