"""The Report: every host of one profile run analysed, as plain data with a stable JSON form.

`build_report(run)` analyses each host profile (report/analyze.py); `Report.to_json()` writes the
report JSON (docs/ARCHITECTURE.md §2, `tb-advisor/report/1`; keys are only ever added) from the table
of sections (report/sections.py): one host's own values, or for several hosts each section pooled
once (report/combine.py), plus `per_host` and `stragglers`. Times in JSON are milliseconds, shares
percent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.report.analyze import analyze_profile
from tb_plugin_advisor.report.combine import Pool
from tb_plugin_advisor.report.host import HostReport
from tb_plugin_advisor.report.sections import SECTIONS
from tb_plugin_advisor.sources.local_cpu import LocalCpu

SCHEMA = "tb-advisor/report/1"


@dataclass
class Report:
    """A run's report: one HostReport per host, written as one host's report or the hosts pooled."""

    run: str
    hosts: List[str]
    host_reports: List[HostReport]
    selected_host: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        """Every section's value: the one host's own, or the hosts' pooled (each pooling once)."""
        out: Dict[str, Any] = {"schema": SCHEMA, "run": self.run, "hosts": self.hosts}
        reports = self.host_reports
        several = Pool(reports) if len(reports) > 1 else None
        for section in SECTIONS:
            if several is not None:
                values = [] if section.several_hosts else [section.of(r) for r in reports]
                out[section.key] = section.to_json(section.pooling.pool(values, several))
            elif not section.several_hosts:
                out[section.key] = section.to_json(section.of(reports[0]))
        out["host"] = self.selected_host
        return out


def build_report(
    run: RunProfiles, host: Optional[str] = None, local_cpu: Optional[LocalCpu] = None
) -> Report:
    """Analyse every host of `run` (or only `host`); raises AdvisorError for an unknown host or no data."""
    profiles = run.profiles
    if host is not None:
        profiles = [p for p in profiles if p.host == host]
        if not profiles:
            known = ", ".join(repr(h) for h in run.hosts) or "none"
            raise AdvisorError(f"run {run.run!r} has no host {host!r}; its hosts: {known}")
    if not profiles:
        raise AdvisorError(f"run {run.run!r} has no profile to analyse")
    reports = [analyze_profile(p, local_cpu) for p in profiles]
    return Report(run=run.run, hosts=[p.host for p in profiles], host_reports=reports, selected_host=host)
