"""The Report: every analysis of one profile run, as plain data with a stable JSON form.

`build_report(run)` runs the analyses per host profile and, for runs with several hosts, adds an
all-hosts summary (steps pooled over hosts, categories averaged per step) plus `per_host`. JSON
follows ARCHITECTURE.md §2 in docs/ (`tb-advisor/report/1`); keys are only ever added. Times in JSON
are milliseconds, shares percent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.deep.memory_peaks import device_peak_bytes
from tb_plugin_advisor.analysis.step_time.verdict import decide_verdict
from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.report.analyze import analyze_profile
from tb_plugin_advisor.report.deep import combined_deep_json, deep_json
from tb_plugin_advisor.report.host import HostReport
from tb_plugin_advisor.report.merge import (
    argmax,
    merged_recommendations,
    merged_rows,
    merged_tensor_cores,
    pooled_breakdown,
    pooled_steps,
    pooled_steps_json,
    weighted_pct,
)
from tb_plugin_advisor.report.stragglers import find_stragglers
from tb_plugin_advisor.sources.local_cpu import LocalCpu

SCHEMA = "tb-advisor/report/1"


@dataclass
class Report:
    """A run's report: one HostReport per host and, for several hosts, an all-hosts summary."""

    run: str
    hosts: List[str]
    host_reports: List[HostReport]
    selected_host: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        if len(self.host_reports) == 1:
            out = _single_json(self.run, self.hosts, self.host_reports[0])
        else:
            out = _combined_json(self.run, self.hosts, self.host_reports)
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


def _single_json(run: str, hosts: List[str], r: HostReport) -> Dict[str, Any]:
    return {
        "schema": SCHEMA,
        "run": run,
        "hosts": hosts,
        "steps": r.steps_json(),
        "breakdown_ms": {k: _r(v) for k, v in r.breakdown.mean_ms().items()},
        "breakdown_pct": {k: _r(v, 2) for k, v in r.breakdown.pct().items()},
        "verdict": r.verdict.to_json(),
        "input_pipeline": r.input_pipeline.to_json(),
        "precision_pct": dict(r.precision_pct),
        "precision": dict(r.precision),
        "tensor_cores": dict(r.tensor_cores),
        "recommendations": [x.to_json() for x in r.recommendations],
        "ops": [o.to_json() for o in r.ops],
        "kernels": [k.to_json() for k in r.kernels],
        "devices": [dict(d, host=r.host) for d in r.devices],
        "peak_memory_bytes": device_peak_bytes(r.memory_peaks),
        "memory_peak_bytes_by_allocator": dict(r.memory_peaks),
        "framework": r.signals.framework,
        "preprocessing": r.preprocessing.to_json(),
        "host_sync": r.host_sync.to_json(),
        "cpu_16bit": r.cpu_16bit.to_json() if r.cpu_16bit else None,
        "profile": {"host": r.host, "path": r.path, "size_bytes": r.size_bytes},
        "warnings": list(r.warnings),
        **(deep_json(r.deep) if r.deep else {}),
    }


def _combined_json(run: str, hosts: List[str], reports: List[HostReport]) -> Dict[str, Any]:
    """All hosts: steps pooled (one entry per host and step), categories averaged over pooled steps."""
    pooled = pooled_breakdown(reports)
    steps_part = pooled_steps_json(reports)
    pct = pooled.pct()
    device_kind = next((r.signals.device_kind for r in reports if r.signals.device_kind), "")
    # the verdict of the pooled numbers, worded from the host whose input pipeline waits most
    slowest_input = max(reports, key=lambda r: r.breakdown.mean_ms()["input"])
    verdict = decide_verdict(pooled, pooled_steps(reports), slowest_input.input_pipeline, device_kind)
    weights = [float(r.tensor_core_result.compute_ns or r.precision_result.compute_ns) for r in reports]
    recommendations = merged_recommendations(reports)
    peaks = [p for p in (device_peak_bytes(r.memory_peaks) for r in reports) if p is not None]
    stragglers = find_stragglers([r.figures() for r in reports])
    straggling = tuple(s.host for s in stragglers)
    return {
        "schema": SCHEMA,
        "run": run,
        "hosts": hosts,
        "steps": steps_part,
        "breakdown_ms": {k: _r(v) for k, v in pooled.mean_ms().items()},
        "breakdown_pct": {k: _r(v, 2) for k, v in pct.items()},
        "verdict": verdict.to_json(),
        "input_pipeline": slowest_input.input_pipeline.to_json(),
        "precision_pct": weighted_pct([r.precision_pct for r in reports], weights),
        "precision": dict(reports[argmax(weights)].precision),  # the host with the most device time
        "tensor_cores": merged_tensor_cores(reports, weights),
        "recommendations": [x.to_json() for x in recommendations],
        "ops": [o.to_json() for o in merged_rows([r.ops for r in reports], reports, th.TOP_OPS)],
        "kernels": [k.to_json() for k in merged_rows([r.kernels for r in reports], reports, th.TOP_KERNELS)],
        "devices": [dict(d, host=r.host) for r in reports for d in r.devices],
        "peak_memory_bytes": max(peaks) if peaks else None,
        "memory_peak_bytes_by_allocator": {
            f"{r.host}:{k}": v for r in reports for k, v in r.memory_peaks.items()
        },
        "framework": reports[0].signals.framework,
        "preprocessing": max(reports, key=lambda r: r.preprocessing.share_pct).preprocessing.to_json(),
        "host_sync": max(reports, key=lambda r: r.host_sync.time_pct).host_sync.to_json(),
        "cpu_16bit": next((r.cpu_16bit.to_json() for r in reports if r.cpu_16bit), None),
        "profile": [{"host": r.host, "path": r.path, "size_bytes": r.size_bytes} for r in reports],
        "per_host": [r.summary_json(straggling) for r in reports],
        "stragglers": [s.to_json() for s in stragglers],
        "warnings": [f"{r.host}: {w}" for r in reports for w in r.warnings],
        **combined_deep_json([(r.host, r.deep) for r in reports if r.deep]),
    }
