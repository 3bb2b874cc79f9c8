"""The Report: every analysis of one profile run, as plain data with a stable JSON form.

`build_report(run)` runs the analyses per host profile and, for runs with several hosts, adds an
all-hosts summary (steps pooled over hosts, categories averaged per step) plus `per_host`. JSON
follows ARCHITECTURE.md §2 in docs/ (`tb-advisor/report/1`); keys are only ever added. Times in JSON
are milliseconds, shares percent.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import recommend as rec
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.breakdown import CATEGORIES, Breakdown, compute_breakdown
from tb_plugin_advisor.analysis.cpu_precision import CpuSixteenBit, assess_cpu_16bit
from tb_plugin_advisor.analysis.host_sync import HostSync, analyze_host_sync
from tb_plugin_advisor.analysis.inputs import InputPipeline, analyze_input_pipeline
from tb_plugin_advisor.analysis.kernel_view import kernel_view
from tb_plugin_advisor.analysis.memory import device_peak_bytes, peak_by_allocator
from tb_plugin_advisor.analysis.ops import OpRow, kernel_table, op_table
from tb_plugin_advisor.analysis.precision import PrecisionResult, analyze_precision
from tb_plugin_advisor.analysis.prefilter import release_batches
from tb_plugin_advisor.analysis.preprocessing import Preprocessing, analyze_preprocessing
from tb_plugin_advisor.analysis.signals import Signals, collect_signals
from tb_plugin_advisor.analysis.steps import Steps, find_steps
from tb_plugin_advisor.analysis.stragglers import HostFigures, find_stragglers
from tb_plugin_advisor.analysis.tensor_cores import TensorCoreResult, analyze_tensor_cores
from tb_plugin_advisor.analysis.torch_signals import TorchSignals, collect_torch_signals
from tb_plugin_advisor.analysis.verdict import Verdict, decide_verdict
from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.gc_pause import collector_paused
from tb_plugin_advisor.heap import hands_back_memory
from tb_plugin_advisor.model import Device, Profile, RunProfiles
from tb_plugin_advisor.report_deep import DeepViews, analyze_deep, combined_deep_json, deep_json
from tb_plugin_advisor.report_facts import facts_of
from tb_plugin_advisor.report_merge import (
    argmax,
    merged_recommendations,
    merged_rows,
    merged_tensor_cores,
    pooled_breakdown,
    pooled_steps,
    pooled_steps_json,
    steps_summary,
    weighted_pct,
)
from tb_plugin_advisor.sources.local_cpu import LocalCpu, read_local_cpu

SCHEMA = "tb-advisor/report/1"


def _r(value: float, digits: int = 4) -> float:
    return round(float(value), digits)


# ---------------------------------------------------------------------------------------------------
# One host


@dataclass
class HostReport:
    """Everything computed for one host's profile (no reference to the Profile: it can be freed)."""

    host: str
    path: str
    size_bytes: int
    steps: Steps
    breakdown: Breakdown
    verdict: Verdict
    input_pipeline: InputPipeline
    signals: Signals
    precision_result: PrecisionResult
    tensor_core_result: TensorCoreResult
    precision_pct: Dict[str, float]  # JSON parts of the two results above
    precision: Dict[str, Any]
    tensor_cores: Dict[str, Any]
    recommendations: List[rec.Recommendation]
    ops: List[OpRow]
    kernels: List[OpRow]
    devices: List[Dict[str, Any]]
    memory_peaks: Dict[str, int]
    warnings: List[str] = field(default_factory=list)
    preprocessing: Preprocessing = field(default_factory=Preprocessing)
    cpu_16bit: Optional[CpuSixteenBit] = None
    host_sync: HostSync = field(default_factory=HostSync)
    torch_signals: Optional[TorchSignals] = None  # PyTorch runs only
    deep: Optional[DeepViews] = None  # kernel statistics, memory over time … (report_deep.py)

    @property
    def steady_count(self) -> int:
        return int(self.breakdown.steady.sum())

    def steps_json(self) -> Dict[str, Any]:
        steps = self.steps
        origin = int(steps.start_ns.min()) if steps.count else 0
        per_step = [
            {
                "step": steps.numbers[i],
                "start_ms": _r((int(steps.start_ns[i]) - origin) / 1e6),
                "total_ms": _r(int(steps.duration_ns[i]) / 1e6),
                "breakdown_ms": {c: _r(v) for c, v in self.breakdown.per_window_ms(i).items()},
                "warmup": bool(steps.warmup[i]),
            }
            for i in range(steps.count)
        ]
        return steps_summary(steps, per_step=per_step)

    def figures(self) -> HostFigures:
        busy = list(self.breakdown.device_busy_pct.values())
        return HostFigures(
            host=self.host,
            step_time_ms=self.steps.stats_ms()["mean_ms"],
            input_pct=self.breakdown.pct()["input"],
            device_util_pct=float(np.mean(busy)) if busy else 0.0,
        )

    def summary_json(self, stragglers: Tuple[str, ...] = ()) -> Dict[str, Any]:
        f = self.figures()
        return {
            "host": self.host,
            "step_time_ms": _r(f.step_time_ms),
            "input_pct": _r(f.input_pct, 2),
            "device_util_pct": _r(f.device_util_pct, 2),
            "straggler": self.host in stragglers,
            "steps": self.steps_json(),
            "breakdown_ms": {k: _r(v) for k, v in self.breakdown.mean_ms().items()},
            "breakdown_pct": {k: _r(v, 2) for k, v in self.breakdown.pct().items()},
            "verdict": self.verdict.to_json(),
            "input_pipeline": self.input_pipeline.to_json(),
            "recommendations": [r.id for r in self.recommendations],
        }


@hands_back_memory
@collector_paused
def analyze_profile(profile: Profile, local_cpu: Optional[LocalCpu] = None) -> HostReport:
    """Run every analysis on one host's profile. `local_cpu`: the CPU the report runs on (its flags are
    evidence for a profile captured on the same host); None reads this machine's."""
    local_cpu = local_cpu if local_cpu is not None else read_local_cpu()
    try:
        return _analyze_profile(profile, local_cpu)
    finally:
        release_batches()  # the name batches the analyses shared (analysis/prefilter.py)


def _analyze_profile(profile: Profile, local_cpu: LocalCpu) -> HostReport:
    steps = find_steps(profile)
    for device in profile.devices:  # classified once, here: both threads below read the views
        kernel_view(device)
    with ThreadPoolExecutor(1, thread_name_prefix="advisor-deep") as second_core:
        # Precision, Tensor Cores and the deeper views need only the steps: they run beside the
        # breakdown and what reads it (numpy lets go of the GIL in whole-array work, which is most
        # of both). The two sides took ~0.45 s and ~0.1 s on the 111 MB bench profile with the
        # precision analyses on this side; now they are nearer even.
        precision = second_core.submit(_precision_analyses, profile, steps)
        deep = second_core.submit(analyze_deep, profile, steps)
        report = _main_analyses(profile, steps, local_cpu, precision)
        report.deep = deep.result()
    report.recommendations = rec.recommend(facts_of(report))
    return report


def _precision_analyses(profile: Profile, steps: Steps) -> Tuple[PrecisionResult, TensorCoreResult]:
    return analyze_precision(profile, steps=steps.count), analyze_tensor_cores(profile, steps=steps.count)


def _main_analyses(profile: Profile, steps: Steps, local_cpu: LocalCpu,
                   precision: Future[Tuple[PrecisionResult, TensorCoreResult]]) -> HostReport:
    breakdown = compute_breakdown(profile, steps)
    signals = collect_signals(profile, steps, breakdown)
    pipeline = analyze_input_pipeline(profile, breakdown)
    verdict = decide_verdict(breakdown, steps, pipeline, signals.device_kind)
    ops, kernels = op_table(profile, breakdown), kernel_table(profile, breakdown)
    peaks = peak_by_allocator(profile)
    precision_result, tensor_core_result = precision.result()
    precision_json = precision_result.to_json()
    return HostReport(
        host=profile.host,
        path=profile.path,
        size_bytes=profile.size_bytes,
        steps=steps,
        breakdown=breakdown,
        verdict=verdict,
        input_pipeline=pipeline,
        signals=signals,
        precision_result=precision_result,
        tensor_core_result=tensor_core_result,
        precision_pct=precision_json["precision_pct"],
        precision=precision_json["precision"],
        tensor_cores=tensor_core_result.to_json()["tensor_cores"],
        recommendations=[],
        ops=ops,
        kernels=kernels,
        devices=[_device_json(d, breakdown) for d in profile.devices],
        memory_peaks=peaks,
        warnings=_warnings(profile),
        preprocessing=analyze_preprocessing(profile, breakdown),
        host_sync=analyze_host_sync(profile, breakdown),
        torch_signals=collect_torch_signals(profile, breakdown),
        cpu_16bit=assess_cpu_16bit(
            precision_result, signals.device_kind, profile.host, local_cpu.hostname, local_cpu.flags
        ),
        deep=None,
    )


def _device_json(device: Device, breakdown: Breakdown) -> Dict[str, Any]:
    cc = device.compute_capability
    return {
        "name": device.name,
        "kind": device.kind,
        "vendor": device.vendor,
        "model": device.model,
        "compute_capability": f"{cc[0]}.{cc[1]}" if cc else None,
        "core_count": device.core_count,
        "kernel_count": len(device.kernels),
        "memcpy_count": len(device.memcpys),
        "busy_pct": _r(breakdown.device_busy_pct.get(device.name, 0.0), 2),
    }


def _warnings(profile: Profile) -> List[str]:
    out = [f"profiler error: {e}" for e in profile.errors]
    out += list(profile.warnings)
    return out


# ---------------------------------------------------------------------------------------------------
# The run


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


__all__ = ["SCHEMA", "CATEGORIES", "HostReport", "Report", "analyze_profile", "build_report"]
