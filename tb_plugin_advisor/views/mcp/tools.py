"""What each MCP tool answers, as plain JSON-ready dicts, without the MCP SDK: the same discovery, run
lookup, report door (disk cache, guarded I/O, size cap) and JSON schemas as the CLI.

An agent's context is small and a whole report or diff is 100 KB and more, so the large documents
are cut to named sections of their own schema (the keys of the report, the diff, a trend series),
chosen by the caller, with defaults that answer "what is wrong and what do I change" in a few KB.
Every value kept is exactly what `tb-advisor … --format json` writes for the same run.

Run names are looked up among the runs discovery found, never opened as paths: a name that is a path
(absolute, `..`, a URL) is refused with an error saying what is accepted. Every failure on purpose is
an AdvisorError whose message is the CLI's one line; the server turns it into a tool error.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.readers.formats.registry import is_analysed
from tb_plugin_advisor.report.disk_cache import ReportCache
from tb_plugin_advisor.report.document import Advice, ReportDocument, read_report
from tb_plugin_advisor.report.door import ReportDoor
from tb_plugin_advisor.report.hostpool import RunProgress
from tb_plugin_advisor.report.sections import SECTIONS
from tb_plugin_advisor.sources.session import Session

# The report keys that say which report an answer is of: always kept.
REPORT_IDENTITY = ("schema", "run", "hosts", "host")
# Every key of the report a caller may name (report/sections.py, docs/ARCHITECTURE.md §2).
REPORT_SECTIONS: Tuple[str, ...] = tuple(s.key for s in SECTIONS)
# What a report answers by default: the verdict and what to change, in at most 4.6 KB of JSON on the
# committed H200 captures (tests hold it under 8 KB) once each recommendation's evidence spans are
# left to the `evidence_spans` tool; with them it reaches 12 KB.
DEFAULT_REPORT_SECTIONS = ("verdict", "recommendations")

DIFF_IDENTITY = ("schema", "baseline", "candidate", "baseline_hosts", "candidate_hosts")
# What a diff answers by default: is the change real, where did the time go, did the fixes work.
# The per-op and per-kernel tables (`ops`, `kernels`: most of a diff's 90 KB) are there on request.
DEFAULT_DIFF_SECTIONS = ("step_time", "breakdown_delta_ms", "significant_change", "recommendation_outcomes",
                         "warnings", "summary")

# What a trend series answers by default: where the series changed and why; the captures themselves
# (one row of figures each) on request.
DEFAULT_TREND_SERIES_KEYS = ("run", "change_points", "noise_pct", "newest_change", "notes")
TREND_CAPTURES = "captures"

ACCEPTED_RUN_NAMES = ("a run name as list_runs gives it, a unique start of one, or its run directory's "
                      "name, relative to the server's logdir")


def check_run_name(name: str, what: str = "run") -> str:
    """`name` when it can only be a run name; AdvisorError naming what is accepted when it is a path
    (absolute, `..`, a drive or a URL) — the server never opens what a caller names."""
    text = str(name).strip()
    parts = text.replace("\\", "/").split("/")
    if (not text or text.startswith(("/", "\\", "~")) or ".." in parts or "://" in text
            or (len(text) > 1 and text[1] == ":")):
        raise AdvisorError(f"{what} {text!r} is not a run name: paths (absolute, '..', '~', URLs) are not "
                           f"accepted; give {ACCEPTED_RUN_NAMES} (call list_runs)")
    return text


def _pick(document: Dict[str, Any], identity: Sequence[str], names: Sequence[str], known: Sequence[str],
          what: str) -> Dict[str, Any]:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise AdvisorError(f"unknown {what} section {', '.join(map(repr, unknown))}; the sections are "
                           f"{', '.join(known)}")
    out = {k: document[k] for k in identity if k in document}
    out["sections"] = list(names)
    for name in names:
        out[name] = document.get(name)
    return out


def _without_spans(rows: Any) -> Any:
    if not isinstance(rows, list):
        return rows
    return [{k: v for k, v in row.items() if k != "evidence_spans"} if isinstance(row, dict) else row
            for row in rows]


def report_sections(report: Dict[str, Any], sections: Optional[Sequence[str]] = None,
                    with_evidence_spans: bool = False) -> Dict[str, Any]:
    """The report's identity and the chosen sections as the report has them; recommendations without
    their `evidence_spans` unless asked (`evidence_spans_left_out` then says so)."""
    names = list(dict.fromkeys(sections or DEFAULT_REPORT_SECTIONS))
    out = _pick(report, REPORT_IDENTITY, names, REPORT_SECTIONS, "report")
    if not with_evidence_spans and "recommendations" in names:
        out["recommendations"] = _without_spans(out["recommendations"])
        out["evidence_spans_left_out"] = True
    return out


def diff_sections(diff: Dict[str, Any], sections: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The diff's identity and the chosen sections as the diff has them."""
    names = list(dict.fromkeys(sections or DEFAULT_DIFF_SECTIONS))
    known = [k for k in diff if k not in DIFF_IDENTITY]
    return _pick(diff, DIFF_IDENTITY, names, known, "diff")


def trend_change_points(trend: Dict[str, Any], with_captures: bool = False) -> Dict[str, Any]:
    """The trend with each series cut to its change points and their causes (and its captures when
    asked); `rules` and `cache` as the CLI writes them."""
    keys = DEFAULT_TREND_SERIES_KEYS + ((TREND_CAPTURES,) if with_captures else ())
    out = dict(trend)
    out["series"] = [{k: s.get(k) for k in keys} for s in trend.get("series") or []]
    return out


def findings_with_spans(document: ReportDocument) -> List[Advice]:
    """Every piece of advice in the report that can carry evidence spans: the recommendations, then
    the deeper views' findings."""
    views = (document.kernel_stats, document.memory, document.collectives, document.roofline)
    return list(document.recommendations) + [f for view in views for f in view.findings]


def evidence_of(report: Dict[str, Any], advice_id: str) -> Dict[str, Any]:
    """The evidence spans of the recommendation or finding `advice_id`, with what identifies it."""
    document = read_report(report)
    found = [a for a in findings_with_spans(document) if a.id == advice_id]
    if not found:
        ids = ", ".join(dict.fromkeys(a.id for a in findings_with_spans(document) if a.id)) or "none"
        raise AdvisorError(f"run '{document.run}' has no recommendation or finding '{advice_id}'; "
                           f"its ids: {ids}")
    out = {k: report[k] for k in REPORT_IDENTITY if k in report}
    advice = found[0].raw
    out.update(id=advice_id, title=advice.get("title"), severity=advice.get("severity"),
               evidence=advice.get("evidence"), evidence_spans=advice.get("evidence_spans") or [])
    return out


@dataclass
class AdvisorTools:
    """The tools over one logdir and one analysis cache. One analysis runs at a time (an agent that
    calls in parallel waits, and memory stays what one report needs)."""

    logdir: str
    cache: ReportCache
    _analysis: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _scan(self):
        from tb_plugin_advisor.sources.discovery import scan_logdir

        return scan_logdir(self.logdir)

    def _session(self, run: str, role: str = "") -> Session:
        from tb_plugin_advisor.sources.runs import find_run

        return find_run(self._scan(), check_run_name(run, f"{role} run" if role else "run"), role)

    def _report(self, session: Session, host: Optional[str], role: str = "",
                on_progress: Optional[RunProgress] = None) -> Dict[str, Any]:
        with self._analysis:
            report, _cached = ReportDoor(self.cache).report(session, host or None, role=role,
                                                            on_progress=on_progress)
        return report

    def list_runs(self) -> Dict[str, Any]:
        """Every run discovery finds (the `runs` route's entries) and whether the Advisor reads it."""
        scan = self._scan()
        return {"runs": [dict(s.to_json(), analysed=is_analysed(s.format)) for s in scan.sessions]}

    def report(self, run: str, host: Optional[str] = None, sections: Optional[Sequence[str]] = None,
               with_evidence_spans: bool = False, on_progress: Optional[RunProgress] = None
               ) -> Dict[str, Any]:
        report = self._report(self._session(run), host, on_progress=on_progress)
        return report_sections(report, sections, with_evidence_spans)

    def diff(self, baseline: str, candidate: str, baseline_host: Optional[str] = None,
             candidate_host: Optional[str] = None, sections: Optional[Sequence[str]] = None,
             on_progress: Optional[RunProgress] = None) -> Dict[str, Any]:
        from tb_plugin_advisor.diff.compare import diff_reports

        base = self._session(baseline, "baseline")
        cand = self._session(candidate, "candidate")
        before = self._report(base, baseline_host, "baseline", on_progress)
        after = self._report(cand, candidate_host, "candidate", on_progress)
        return diff_sections(diff_reports(before, after), sections)

    def trend(self, runs: Sequence[str] = (), order: str = "time", with_captures: bool = False,
              on_progress: Optional[RunProgress] = None) -> Dict[str, Any]:
        from tb_plugin_advisor.trend.build import trend_of
        from tb_plugin_advisor.trend.select import select_series

        patterns = [check_run_name(p, "run pattern") for p in runs]
        series = select_series(self._scan().sessions, patterns, order, self.logdir)
        sessions = list({s.run: s for _, group in series for s in group}.values())
        with self._analysis:
            outcomes, from_cache = ReportDoor(self.cache).reports(sessions, on_progress)
        trend = trend_of(series, outcomes)
        trend["cache"] = dict(self.cache.stats(), served=from_cache, captures=len(sessions))
        return trend_change_points(trend, with_captures)

    def doctor(self) -> Dict[str, Any]:
        from tb_plugin_advisor.sources.doctor.diagnose import diagnose_scan

        with self._analysis:  # doctor reads the head of every profile, and each run's report
            diagnosis = diagnose_scan(self._scan())
            out = diagnosis.to_json()
            matrices = ReportDoor(self.cache).validity([r.session for r in diagnosis.sessions])
            for session in out["sessions"]:
                session["validity"] = matrices.get(session["run"])
            return out

    def evidence_spans(self, run: str, recommendation_id: str, host: Optional[str] = None,
                       on_progress: Optional[RunProgress] = None) -> Dict[str, Any]:
        return evidence_of(self._report(self._session(run), host, on_progress=on_progress), recommendation_id)
