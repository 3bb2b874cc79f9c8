"""Which captures form a series, and their order. Without a pattern every run directory is a series
(PyTorch captures in one directory, TF/JAX sessions of one run); a pattern picks runs by name (the
path-component rules of sources/runs.py's match_runs) or by a shell glob (`'ctl*'`) across
directories, and all of one pattern's captures form one series. Patterns are bounded in length
(rules.SELECT) and globs matched by run_glob.py, which keeps nothing between calls."""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.formatting import format_number
from tb_plugin_advisor.sources.runs import known_runs, match_runs
from tb_plugin_advisor.sources.session import Session
from tb_plugin_advisor.trend.rules import SELECT
from tb_plugin_advisor.trend.run_glob import glob_match
from tb_plugin_advisor.trend.series import capture_time

GLOB_CHARS = "*?["
ORDERS = ("time", "given")


def captured_at(session: Session) -> str:
    mtimes = [h.mtime_ns for h in session.hosts if h.mtime_ns is not None]
    return capture_time(session.run, max(mtimes) if mtimes else None)


def _by_time(sessions: Sequence[Session]) -> List[Session]:
    return sorted(sessions, key=lambda s: (captured_at(s), s.run))


def match_pattern(sessions: Sequence[Session], pattern: str) -> List[Session]:
    """The sessions `pattern` names: a glob over run names and run directories, or match_runs."""
    if len(pattern) > SELECT["max_pattern_chars"]:
        raise AdvisorError(f"the run pattern is {format_number(len(pattern))} characters long; at most "
                           f"{SELECT['max_pattern_chars']} are accepted")
    if any(ch in pattern for ch in GLOB_CHARS):
        pat = pattern.rstrip("/")
        return [
            s for s in sessions
            if glob_match(s.run, pat) or glob_match(s.run_dir_rel, pat) or glob_match(s.run, pat + "/*")
        ]
    return match_runs(sessions, pattern)


def select_series(
    sessions: Sequence[Session], patterns: Sequence[str], order: str = "time", where: str = ""
) -> List[Tuple[str, List[Session]]]:
    """(series name, its sessions in order) for the patterns given, or per run directory."""
    if order not in ORDERS:
        raise AdvisorError(f"unknown order {order!r}; one of {', '.join(ORDERS)}")
    if not patterns:
        groups: Dict[str, List[Session]] = {}
        for s in sessions:
            groups.setdefault(s.run_dir_rel or s.run.rsplit("/", 1)[0], []).append(s)
        return [(name, _by_time(group)) for name, group in sorted(groups.items())]
    chosen: List[Session] = []
    for pattern in patterns:
        found = match_pattern(sessions, pattern)
        if not found:
            known = known_runs(s.run for s in sessions)
            raise AdvisorError(f"no run matches '{pattern}' in {where}; {known}")
        found = [s for s in found if s not in chosen]
        chosen += _by_time(found)
    if order == "time":
        chosen = _by_time(chosen)
    return [(" + ".join(patterns), chosen)]
