"""The reports a trend needs, from the persistent cache (report/disk_cache.py) or analysed: all the
missing captures' hosts go to one pool at once (report/hostpool.py), so a series of many one-host
captures is read in parallel; a capture that cannot be read is listed with its error, not fatal."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from tb_plugin_advisor.errors import AdvisorError, ProfileReadError
from tb_plugin_advisor.readers.formats.registry import is_analysed
from tb_plugin_advisor.report.disk_cache import ReportCache
from tb_plugin_advisor.report.hostpool import HostTask, analyze_hosts, build_session_report
from tb_plugin_advisor.report.run import Report
from tb_plugin_advisor.sources.session import Session
from tb_plugin_advisor.trend.build import SeriesInput, build_trend
from tb_plugin_advisor.trend.select import captured_at
from tb_plugin_advisor.trend.series import Capture, capture_from_report, failed_capture

Outcome = Union[Dict[str, Any], str]  # a report dict, or why the capture could not be read
Progress = Callable[[int, int], None]


def _analyse(missing: Sequence[Session], workers: Optional[int], scheduler: Optional[str],
             on_progress: Optional[Progress]) -> Dict[str, Outcome]:
    tasks = [HostTask(f.host, f.path, int(f.size_bytes or 0), s.format) for s in missing for f in s.hosts]
    out: Dict[str, Outcome] = {}
    try:
        host_reports = analyze_hosts(tasks, workers=workers, scheduler=scheduler, on_progress=on_progress)
    except (AdvisorError, ProfileReadError, OSError):
        # one bad capture fails the batch: read them one by one to tell which
        for s in missing:
            try:
                out[s.run] = build_session_report(s, None, scheduler=scheduler, workers=1).to_json()
            except (AdvisorError, ProfileReadError, OSError) as e:
                out[s.run] = str(e) or type(e).__name__
        return out
    at = 0
    for s in missing:
        n = len(s.hosts)
        report = Report(run=s.run, hosts=[f.host for f in s.hosts], host_reports=host_reports[at : at + n],
                        selected_host=None)
        out[s.run] = report.to_json()
        at += n
    return out


def collect_reports(
    sessions: Sequence[Session],
    cache: ReportCache,
    workers: Optional[int] = None,
    scheduler: Optional[str] = None,
    on_progress: Optional[Progress] = None,
) -> Tuple[Dict[str, Outcome], int]:
    """Every session's report (or error) by run name, and how many came from the cache."""
    outcomes: Dict[str, Outcome] = {}
    missing: List[Session] = []
    from_cache = 0
    for s in sessions:
        if not is_analysed(s.format) or not s.hosts:
            outcomes[s.run] = f"holds no profile the Advisor reads ({', '.join(s.files[:4]) or 'nothing'})"
            continue
        hit = cache.get(s, None)
        if hit is not None:
            outcomes[s.run] = hit
            from_cache += 1
        else:
            missing.append(s)
    if missing:
        built = _analyse(missing, workers, scheduler, on_progress)
        for s in missing:
            value = built[s.run]
            if isinstance(value, dict):
                cache.put(s, None, value)
            outcomes[s.run] = value
    return outcomes, from_cache


def trend_of(
    series: Sequence[Tuple[str, Sequence[Session]]], outcomes: Dict[str, Outcome]
) -> Dict[str, Any]:
    """The trend JSON from the selected series and their reports."""
    inputs = []
    for name, sessions in series:
        captures: List[Capture] = []
        for s in sessions:
            value = outcomes.get(s.run, "not analysed")
            when = captured_at(s)
            if isinstance(value, dict):
                captures.append(capture_from_report(s.run, when, value))
            else:
                captures.append(failed_capture(s.run, when, value))
        inputs.append(SeriesInput(name, captures))
    return build_trend(inputs)
