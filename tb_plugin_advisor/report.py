"""The Report: every analysis of one profile run, as plain data with a stable JSON form.

`build_report(run)` runs the analyses per host profile and, for runs with several hosts, adds an
all-hosts summary (steps pooled over hosts, categories averaged per step) plus `per_host`. JSON
follows ARCHITECTURE.md §2 in docs/ (`tb-advisor/report/1`); keys are only ever added. Times in JSON
are milliseconds, shares percent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import recommend as rec
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.breakdown import CATEGORIES, Breakdown, compute_breakdown
from tb_plugin_advisor.analysis.cpu_precision import CpuSixteenBit, assess_cpu_16bit
from tb_plugin_advisor.analysis.host_sync import HostSync, analyze_host_sync
from tb_plugin_advisor.analysis.inputs import InputPipeline, analyze_input_pipeline
from tb_plugin_advisor.analysis.memory import device_peak_bytes, peak_by_allocator
from tb_plugin_advisor.analysis.ops import OpRow, kernel_table, op_table
from tb_plugin_advisor.analysis.patterns import PRECISIONS
from tb_plugin_advisor.analysis.precision import PrecisionResult, analyze_precision
from tb_plugin_advisor.analysis.preprocessing import Preprocessing, analyze_preprocessing
from tb_plugin_advisor.analysis.signals import Signals, collect_signals
from tb_plugin_advisor.analysis.steps import Steps, find_steps
from tb_plugin_advisor.analysis.stragglers import HostFigures, find_stragglers
from tb_plugin_advisor.analysis.tensor_cores import TensorCoreResult, analyze_tensor_cores
from tb_plugin_advisor.analysis.torch_signals import TorchSignals, collect_torch_signals
from tb_plugin_advisor.analysis.verdict import Verdict, decide_verdict
from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.model import Device, Profile, RunProfiles
from tb_plugin_advisor.report_deep import DeepViews, analyze_deep, combined_deep_json, deep_json
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
        return _steps_summary(steps, per_step=per_step)

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


def analyze_profile(profile: Profile, local_cpu: Optional[LocalCpu] = None) -> HostReport:
    """Run every analysis on one host's profile. `local_cpu`: the CPU the report runs on (its flags are
    evidence for a profile captured on the same host); None reads this machine's."""
    local_cpu = local_cpu if local_cpu is not None else read_local_cpu()
    steps = find_steps(profile)
    breakdown = compute_breakdown(profile, steps)
    signals = collect_signals(profile, steps, breakdown)
    pipeline = analyze_input_pipeline(profile, breakdown)
    verdict = decide_verdict(breakdown, steps, pipeline, signals.device_kind)
    precision_result = analyze_precision(profile, steps=steps.count)
    tensor_core_result = analyze_tensor_cores(profile, steps=steps.count)
    precision_json = precision_result.to_json()
    peaks = peak_by_allocator(profile)
    report = HostReport(
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
        ops=op_table(profile, breakdown),
        kernels=kernel_table(profile, breakdown),
        devices=[_device_json(d, breakdown) for d in profile.devices],
        memory_peaks=peaks,
        warnings=_warnings(profile),
        preprocessing=analyze_preprocessing(profile, breakdown),
        host_sync=analyze_host_sync(profile, breakdown),
        torch_signals=collect_torch_signals(profile, breakdown),
        cpu_16bit=assess_cpu_16bit(
            precision_result, signals.device_kind, profile.host, local_cpu.hostname, local_cpu.flags
        ),
        deep=analyze_deep(profile, steps),
    )
    report.recommendations = rec.recommend(_facts(report))
    return report


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


def _facts(report: HostReport) -> rec.Facts:
    s, steps, pipeline = report.signals, report.steps, report.input_pipeline
    pct = report.breakdown.pct()
    tc = report.tensor_core_result
    tf32_off_ns = sum(n.time_ns for n in tc.eligible_not_using if n.reason_id == "fp32_tf32_off")
    return rec.Facts(
        framework=s.framework,
        input_wait_event=report.breakdown.input_evidence[0][0] if report.breakdown.input_evidence else "",
        **_torch_facts(report.torch_signals),
        device_kind=s.device_kind,
        compute_capability=s.compute_capability,
        breakdown_pct=pct,
        input_bound=report.verdict.input_bound,
        bottleneck=report.verdict.bottleneck,
        step_count=steps.count,
        step_source=steps.source,
        early_step_numbers=sorted(
            {n for n in steps.numbers if n is not None and n <= th.WARMUP_STEP_NUM_MAX}
        ),
        warmup_steps=int(steps.warmup.sum()),
        dominant_stage=pipeline.dominant_stage,
        sequential_map=pipeline.sequential_map,
        map_parallelism=pipeline.parallelism,
        prefetch=pipeline.prefetch,
        cache=pipeline.cache,
        interleave=pipeline.interleave,
        file_source=pipeline.file_source,
        autotune=pipeline.autotune,
        precision_pct=dict(report.precision_result.precision_pct),
        precision_verdict=report.precision_result.verdict,
        top_fp32_ops=[name for name, _ in report.precision_result.top_fp32_ops],
        fp32_matmul_pct=tf32_off_ns * 100.0 / tc.compute_ns if tc.compute_ns else 0.0,
        kernels_per_step=s.kernels_per_step,
        mean_kernel_us=s.mean_kernel_us,
        xla_compiled=s.xla_compiled,
        transpose_pct=tc.transpose_time_pct,
        transpose_kernels=[name for name, _ in tc.transposes],
        eager_ops_per_step=s.eager_ops_per_step,
        compiled_step=s.compiled_step,
        gpu_planes=s.gpu_planes,
        active_devices=s.active_devices,
        cupti_problem=s.cupti_problem,
        cupti_message=s.cupti_message,
        cpu_16bit_dtype=report.cpu_16bit.dtype if report.cpu_16bit else "",
        cpu_16bit_native=report.cpu_16bit.native if report.cpu_16bit else None,
        cpu_16bit_evidence=report.cpu_16bit.evidence if report.cpu_16bit else "",
        preprocessing_pct=report.preprocessing.share_pct,
        preprocessing_input_threads_ms=report.preprocessing.input_threads_ms,
        preprocessing_step_threads_ms=report.preprocessing.step_threads_ms,
        preprocessing_ops=[f"{op} {ms:.1f} ms" for op, ms in report.preprocessing.top_ops()],
        host_sync_count=report.host_sync.count,
        host_sync_pct=report.host_sync.time_pct,
        host_sync_idle_pct=report.host_sync.device_idle_pct if report.host_sync.has_device else None,
        host_sync_calls=[f"{n} ×{c:.0f}, {ms:.2f} ms" for n, c, ms in report.host_sync.top_calls()],
        median_kernel_us=s.median_kernel_us,
        host_offload_copy_pct=s.host_offload_copy_pct,
        device_idle_pct=100.0 - max(report.breakdown.device_busy_pct.values(), default=100.0),
    )



def _torch_facts(t: Optional[TorchSignals]) -> Dict[str, Any]:
    if t is None:
        return {}
    return {
        "torch_dataloader": t.dataloader,
        "torch_pageable_h2d_ms": t.pageable_h2d_ms,
        "torch_pageable_h2d_pct": t.pageable_h2d_pct,
        "torch_zero_grad_fills": t.zero_grad_fills,
    }

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
    pooled = _pooled_breakdown(reports)
    steps_part = _pooled_steps_json(reports)
    pct = pooled.pct()
    device_kind = next((r.signals.device_kind for r in reports if r.signals.device_kind), "")
    # the verdict of the pooled numbers, worded from the host whose input pipeline waits most
    slowest_input = max(reports, key=lambda r: r.breakdown.mean_ms()["input"])
    verdict = decide_verdict(pooled, _pooled_steps(reports), slowest_input.input_pipeline, device_kind)
    weights = [float(r.tensor_core_result.compute_ns or r.precision_result.compute_ns) for r in reports]
    recommendations = _merged_recommendations(reports)
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
        "precision_pct": _weighted_pct([r.precision_pct for r in reports], weights),
        "precision": dict(reports[_argmax(weights)].precision),  # the host with the most device time
        "tensor_cores": _merged_tensor_cores(reports, weights),
        "recommendations": [x.to_json() for x in recommendations],
        "ops": [o.to_json() for o in _merged_rows([r.ops for r in reports], reports, th.TOP_OPS)],
        "kernels": [k.to_json() for k in _merged_rows([r.kernels for r in reports], reports, th.TOP_KERNELS)],
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


def _argmax(values: List[float]) -> int:
    return int(np.argmax(values)) if values else 0


def _pooled_breakdown(reports: List[HostReport]) -> Breakdown:
    pooled = Breakdown(
        window_start_ns=np.concatenate([r.breakdown.window_start_ns for r in reports]),
        window_end_ns=np.concatenate([r.breakdown.window_end_ns for r in reports]),
        per_window_ns=np.concatenate([r.breakdown.per_window_ns for r in reports]),
        steady=np.concatenate([r.breakdown.steady for r in reports]),
    )
    pooled.device_busy_pct = {
        f"{r.host}:{k}": v for r in reports for k, v in r.breakdown.device_busy_pct.items()
    }
    evidence = [
        (name, f"{r.host} {thread}", ms) for r in reports for name, thread, ms in r.breakdown.input_evidence
    ]
    pooled.input_evidence = sorted(evidence, key=lambda e: -e[2])[:5]
    pooled.has_device_activity = any(r.breakdown.has_device_activity for r in reports)
    return pooled


def _pooled_steps(reports: List[HostReport]) -> Steps:
    sources = [r.steps.source for r in reports]
    notes: List[str] = []
    for r in reports:
        notes += [f"{r.host}: {n}" for n in r.steps.notes]
    return Steps(
        source=max(set(sources), key=sources.count),
        method="; ".join(f"{r.host}: {r.steps.method}" for r in reports),
        start_ns=np.concatenate([r.steps.start_ns for r in reports]),
        end_ns=np.concatenate([r.steps.end_ns for r in reports]),
        numbers=[n for r in reports for n in r.steps.numbers],
        step_lines=[],
        warmup=np.concatenate([r.steps.warmup for r in reports]),
        notes=notes,
    )


def _pooled_steps_json(reports: List[HostReport]) -> Dict[str, Any]:
    steps = _pooled_steps(reports)
    per_step: List[Dict[str, Any]] = []
    for r in reports:
        for entry in r.steps_json()["per_step"]:
            per_step.append(dict(entry, host=r.host))
    return _steps_summary(steps, hosts_count={r.host: r.steps.count for r in reports}, per_step=per_step)


def _steps_summary(steps: Steps, **extra: Any) -> Dict[str, Any]:
    """The report's `steps` object (ARCHITECTURE.md §2 plus times, numbers, notes), one host or pooled."""
    return {
        "count": steps.count,
        "source": steps.source,
        "method": steps.method,
        **{k: _r(v) for k, v in steps.stats_ms().items()},
        "steady_count": int(steps.steady.sum()),
        "times_ms": [_r(d / 1e6) for d in steps.duration_ns.tolist()],
        "numbers": list(steps.numbers),
        **extra,
        "notes": list(steps.notes),
    }


def _weighted_pct(parts: List[Dict[str, float]], weights: List[float]) -> Dict[str, float]:
    total = sum(weights)
    keys = list(PRECISIONS) + sorted({k for p in parts for k in p} - set(PRECISIONS))
    if total <= 0:
        return {k: _r(sum(p.get(k, 0.0) for p in parts) / max(len(parts), 1), 2) for k in keys}
    return {k: _r(sum(p.get(k, 0.0) * w for p, w in zip(parts, weights)) / total, 2) for k in keys}


def _merged_tensor_cores(reports: List[HostReport], weights: List[float]) -> Dict[str, Any]:
    total = sum(weights) or 1.0
    kernels: Dict[str, Dict[str, Any]] = {}
    for r in reports:
        for k in r.tensor_cores.get("kernels") or []:
            entry = kernels.setdefault(k.get("name"), dict(k, time_ms=0.0))
            entry["time_ms"] = entry["time_ms"] + float(k.get("time_ms") or 0.0) / len(reports)
    eligible = [dict(e, host=r.host) for r in reports for e in r.tensor_cores.get("eligible_not_using") or []]
    eligible.sort(key=lambda e: -float(e.get("time_ms") or 0.0))
    return {
        "device_time_pct": _r(
            sum(float(r.tensor_cores.get("device_time_pct") or 0.0) * w for r, w in zip(reports, weights))
            / total,
            2,
        ),
        "eligible_time_pct": _r(
            sum(float(r.tensor_cores.get("eligible_time_pct") or 0.0) * w for r, w in zip(reports, weights))
            / total,
            2,
        ),
        "kernels": sorted(kernels.values(), key=lambda k: -k["time_ms"])[: th.TOP_KERNELS],
        "eligible_not_using": eligible[: th.TOP_KERNELS],
    }


def _merged_recommendations(reports: List[HostReport]) -> List[rec.Recommendation]:
    """One recommendation per id: the most severe instance, its evidence naming the hosts it fired on."""
    by_id: Dict[str, List[Tuple[str, rec.Recommendation]]] = {}
    for r in reports:
        for x in r.recommendations:
            by_id.setdefault(x.id, []).append((r.host, x))
    out = []
    for rule_id in rec.RULE_IDS:
        fired = by_id.get(rule_id)
        if not fired:
            continue
        host, best = min(fired, key=lambda hx: rec.SEVERITIES.index(hx[1].severity))
        where = ", ".join(h for h, _ in fired)
        out.append(
            rec.Recommendation(
                best.id,
                best.severity,
                best.title,
                best.message,
                f"{best.evidence} (hosts: {where})",
                best.snippet,
                best.snippet_jax,
                best.snippet_label,
            )
        )
    out.sort(key=lambda x: rec.SEVERITIES.index(x.severity))
    return out


def _merged_rows(tables: List[List[OpRow]], reports: List[HostReport], limit: int) -> List[OpRow]:
    """Per-step time over the pooled steps: each host's per-step rows weighted by its step count."""
    weights = [max(r.steady_count, 1) for r in reports]
    total = sum(weights)
    merged: Dict[Tuple[str, str], List[float]] = {}
    for rows, w in zip(tables, weights):
        for row in rows:
            slot = merged.setdefault((row.name, row.category), [0.0, 0.0])
            slot[0] += row.time_ms * w
            slot[1] += row.count * w
    out = [OpRow(n, c, t / total, k / total) for (n, c), (t, k) in merged.items()]
    out.sort(key=lambda o: (-o.time_ms, o.name))
    return out[:limit]


__all__ = ["SCHEMA", "CATEGORIES", "HostReport", "Report", "analyze_profile", "build_report"]
