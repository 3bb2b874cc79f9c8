"""The report's table: one entry per key of the report JSON (`tb-advisor/report/1`, docs/ARCHITECTURE.md
§2), in the order the JSON writes them. An entry says everything about its key:

- where a host's value comes from: `analyse`, the section's own analysis of the host's profile (kept
  in HostReport.values), or `read`, one of the results every section builds on (steps, breakdown …);
- `pooling`: how the hosts of a run pool it, named (report/combine.py); one host is its own value;
- `to_json`: the value as the report writes it, rounded there and only there;
- `facts`: what the advice engine reads of it (advice/facts.py's Facts fields);
- `findings`: the advice engine's findings over it, written at the end of its JSON (the deeper views);
- `view`: its name for `tb-advisor report --section` (the deeper views).

report/run.py writes a report with one loop over SECTIONS; report/analyze.py runs the `analyse`
column, the facts and the findings. A new section is an analysis (analysis/), one entry here, its
shape in report/schema.py and the lines that show it (views/export/, the tab).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, List, Optional, Tuple, TypeVar

from tb_plugin_advisor.advice.facts import Facts, Recommendation
from tb_plugin_advisor.advice.findings import (
    collective_findings,
    kernel_findings,
    memory_findings,
    roofline_findings,
)
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.amd_devices import amd_identity
from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.analysis.deep.memory_peaks import device_peak_bytes, peak_by_allocator
from tb_plugin_advisor.analysis.precision.cpu_16bit import assess_cpu_16bit, native_16bit_kernels
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.host_sync import analyze_host_sync
from tb_plugin_advisor.analysis.step_time.ops import kernel_table, op_table
from tb_plugin_advisor.analysis.step_time.preprocessing import analyze_preprocessing
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.validity.matrix import assess_validity
from tb_plugin_advisor.formatting import fixed, format_ms
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.model import Device, Profile
from tb_plugin_advisor.report import combine as pool
from tb_plugin_advisor.report.combine import Found, Pooling, RunSteps
from tb_plugin_advisor.report.host import HostReport, Measured

T = TypeVar("T")


@dataclass(frozen=True)
class Section(Generic[T]):
    """One key of the report (see the module docstring for the columns). Exactly one of `analyse`
    and `read` says where a host's value comes from, except for a key only a run of several hosts
    has (`several_hosts`), which has neither."""

    key: str
    pooling: Pooling[T]
    to_json: Callable[[T], Any]
    analyse: Optional[Callable[[Measured], T]] = None
    read: Optional[Callable[[HostReport], T]] = None
    facts: Optional[Callable[[HostReport], Dict[str, Any]]] = None
    findings: Optional[Callable[[Any], List[Recommendation]]] = None
    view: str = ""
    several_hosts: bool = False

    def __post_init__(self) -> None:
        sources = (self.analyse is not None) + (self.read is not None)
        if sources != (0 if self.several_hosts else 1):
            raise ValueError(f"section {self.key}: give exactly one of analyse and read")

    def analysed(self, report: HostReport) -> Any:
        """The host's result of the section's analysis (before the findings over it)."""
        if self.read is not None:
            return self.read(report)
        return report.values[self.key]

    def of(self, report: HostReport) -> T:
        """The host's value of the section (with the findings over it, for a section that has them)."""
        value = self.analysed(report)
        if self.findings is not None:
            return Found(value, report.findings.get(self.key, []), report.host)  # type: ignore[return-value]
        return value


# -- steps ---------------------------------------------------------------------------------------------


def steps_summary(steps: Steps, **extra: Any) -> Dict[str, Any]:
    """The report's `steps` object (ARCHITECTURE.md §2 plus times, numbers, notes), one host or pooled."""
    ahead = steps.host_ahead_ms()
    return {
        "count": steps.count,
        "source": steps.source,
        "method": steps.method,
        "clock": steps.clock,
        "host_ahead_ms": _r(ahead) if ahead is not None else None,
        **{k: _r(v) for k, v in steps.stats_ms().items()},
        "steady_count": int(steps.steady.sum()),
        "times_ms": [_r(d / 1e6) for d in steps.duration_ns.tolist()],
        "numbers": list(steps.numbers),
        **extra,
        "notes": list(steps.notes),
    }


def step_rows(steps: Steps, breakdown: Breakdown) -> List[Dict[str, Any]]:
    """One host's per-step entries, timed from its own first step."""
    origin = int(steps.start_ns.min()) if steps.count else 0
    host_known = steps.clock == "host" or steps.host_ahead_ns is not None
    ahead = steps.host_ahead_ns
    return [
        {
            "step": steps.numbers[i],
            "start_ms": _r((int(steps.start_ns[i]) - origin) / 1e6),
            "total_ms": _r(int(steps.duration_ns[i]) / 1e6),
            # the host's range of the step (the marker's own event), and how long after its end the
            # device finished the step's work (null: no device work, or host clock)
            "host_ms": _r(int(steps.host_duration_ns[i]) / 1e6) if host_known else None,
            "host_ahead_ms": (_r(float(ahead[i]) / 1e6) if ahead is not None and math.isfinite(ahead[i])
                              else None),
            "breakdown_ms": {c: _r(v) for c, v in breakdown.per_window_ms(i).items()},
            "warmup": bool(steps.warmup[i]),
            "cut_off": bool(steps.cut_off[i]),
        }
        for i in range(steps.count)
    ]


def steps_json(run: RunSteps) -> Dict[str, Any]:
    if len(run.hosts) == 1:
        r = run.hosts[0]
        return steps_summary(run.steps, per_step=step_rows(r.steps, r.breakdown))
    per_step = [dict(row, host=r.host) for r in run.hosts for row in step_rows(r.steps, r.breakdown)]
    return steps_summary(run.steps, hosts_count={r.host: r.steps.count for r in run.hosts}, per_step=per_step)


def _steps_facts(r: HostReport) -> Dict[str, Any]:
    steps = r.steps
    return {
        "step_ms": steps.stats_ms()["mean_ms"],
        "step_count": steps.count,
        "step_source": steps.source,
        "early_step_numbers": sorted(
            {n for n in steps.numbers if n is not None and n <= th.WARMUP_STEP_NUM_MAX}),
        "warmup_steps": int(steps.warmup.sum()),
        "cut_off_steps": steps.cut_off_names(),
    }


# -- breakdown, verdict, input pipeline ---------------------------------------------------------------


def _breakdown_facts(r: HostReport) -> Dict[str, Any]:
    evidence = r.breakdown.input_evidence
    return {
        "input_wait_event": evidence[0][0] if evidence else "",
        "breakdown_ms": r.breakdown.mean_ms(),
        "device_idle_pct": 100.0 - max(r.breakdown.device_busy_pct.values(), default=100.0),
    }


def _input_facts(r: HostReport) -> Dict[str, Any]:
    pipeline = r.input_pipeline
    out: Dict[str, Any] = {"input_kind": pipeline.kind}
    a = pipeline.annotations
    if a is not None:
        out["input_annotation"] = a.main
        out["input_annotation_pct"] = a.pct(a.wait_ns)
        if a.inside:
            name, ns = a.inside[0]
            out["input_annotation_inside"] = f"{name} {format_ms(a.per_step_ms(ns))}"
    out.update(
        dominant_stage=pipeline.dominant_stage,
        sequential_map=pipeline.sequential_map,
        map_parallelism=pipeline.parallelism,
        prefetch=pipeline.prefetch,
        cache=pipeline.cache,
        interleave=pipeline.interleave,
        file_source=pipeline.file_source,
        autotune=pipeline.autotune,
    )
    return out


# -- precision and Tensor Cores ------------------------------------------------------------------------


def _precision_facts(r: HostReport) -> Dict[str, Any]:
    return {
        "precision_verdict": r.precision_result.verdict,
        "top_fp32_ops": [name for name, _ in r.precision_result.top_fp32_ops],
    }


def _share_of_compute(ns: int, compute_ns: int, device_ms: float) -> float:
    """Device time per steady step of a part of the device's compute (summed over the whole profile,
    as the Tensor Core analysis sums it): its share of compute × the step's device compute."""
    return ns / compute_ns * device_ms if compute_ns else 0.0


def _tensor_core_facts(r: HostReport) -> Dict[str, Any]:
    tc = r.tensor_core_result
    device_ms = r.breakdown.mean_ms().get("device_compute", 0.0)
    eligible = tc.eligible_ns_by_precision
    tf32_off_ns = sum(n.time_ns for n in tc.eligible_not_using if n.reason_id == "fp32_tf32_off")
    return {
        "matrix_fp32_ms": _share_of_compute(eligible.get("fp32", 0), tc.compute_ns, device_ms),
        "matrix_tf32_ms": _share_of_compute(eligible.get("tf32", 0), tc.compute_ns, device_ms),
        "fp32_matmul_pct": tf32_off_ns * 100.0 / tc.compute_ns if tc.compute_ns else 0.0,
        "transpose_pct": tc.transpose_time_pct,
        "transpose_kernels": [short_name(name) for name, _ in tc.transposes],
    }


# -- devices, memory, framework -----------------------------------------------------------------------


def device_rows(profile: Profile, breakdown: Breakdown) -> List[Dict[str, Any]]:
    """The host's devices as the report lists them, each naming its host."""
    return [dict(_device_json(d, breakdown), host=profile.host) for d in profile.devices]


def _device_json(device: Device, breakdown: Breakdown) -> Dict[str, Any]:
    cc = device.compute_capability
    amd = amd_identity(device)  # ROCm's major.minor is no compute capability: the gfx target instead
    return {
        "name": device.name,
        "kind": device.kind,
        "vendor": device.vendor,
        "model": device.model,
        "compute_capability": f"{cc[0]}.{cc[1]}" if cc and amd is None else None,
        "gfx_target": amd.gfx if amd else None,
        "product": amd.product if amd else None,
        "core_count": device.core_count,
        "kernel_count": len(device.kernels),
        "memcpy_count": len(device.memcpys),
        "busy_pct": _r(breakdown.device_busy_pct.get(device.name, 0.0), 2),
    }


def _framework_facts(r: HostReport) -> Dict[str, Any]:
    """The framework, what the profile shows of how it runs (signals), and PyTorch's own signals."""
    s, t = r.signals, r.torch_signals
    torch = {} if t is None else {
        "torch_dataloader": t.dataloader,
        "torch_pageable_h2d_ms": t.pageable_h2d_ms,
        "torch_pageable_h2d_pct": t.pageable_h2d_pct,
        "torch_zero_grad_fills": t.zero_grad_fills,
    }
    return {
        "framework": s.framework,
        **torch,
        "device_kind": s.device_kind,
        "compute_capability": s.compute_capability,
        "kernels_per_step": s.kernels_per_step,
        "mean_kernel_us": s.mean_kernel_us,
        "median_kernel_us": s.median_kernel_us,
        "xla_compiled": s.xla_compiled,
        "eager_ops_per_step": s.eager_ops_per_step,
        "compiled_step": s.compiled_step,
        "gpu_planes": s.gpu_planes,
        "active_devices": s.active_devices,
        "cupti_problem": s.cupti_problem,
        "cupti_message": s.cupti_message,
        "host_offload_copy_pct": s.host_offload_copy_pct,
    }


# -- CPU work -----------------------------------------------------------------------------------------


def _cpu_16bit(m: Measured) -> Any:
    return assess_cpu_16bit(m.precision_result, m.signals.device_kind, m.profile.host, m.local_cpu.hostname,
                            m.local_cpu.flags, native_16bit_kernels(m.profile))


def _cpu_16bit_facts(r: HostReport) -> Dict[str, Any]:
    c = CPU_16BIT.of(r)
    return {
        "cpu_16bit_dtype": c.dtype if c else "",
        "cpu_16bit_native": c.native if c else None,
        "cpu_16bit_evidence": c.evidence if c else "",
    }


def _preprocessing_facts(r: HostReport) -> Dict[str, Any]:
    p = PREPROCESSING.of(r)
    return {
        "preprocessing_pct": p.share_pct,
        "preprocessing_input_threads_ms": p.input_threads_ms,
        "preprocessing_step_threads_ms": p.step_threads_ms,
        "preprocessing_ops": [f"{op} {fixed(ms, 1)} ms" for op, ms in p.top_ops()],
    }


def _host_sync_facts(r: HostReport) -> Dict[str, Any]:
    s = HOST_SYNC.of(r)
    return {
        "host_sync_count": s.count,
        "host_sync_pct": s.time_pct,
        "host_sync_idle_pct": s.device_idle_pct if s.has_device else None,
        "host_sync_calls": [f"{n} ×{fixed(c, 0)}, {fixed(ms, 2)} ms" for n, c, ms in s.top_calls()],
    }


# -- several hosts ------------------------------------------------------------------------------------


def host_rows(reports: List[HostReport], stragglers: Tuple[str, ...]) -> List[Dict[str, Any]]:
    """The per-host table of a run of several hosts."""
    out = []
    for r in reports:
        f = r.figures()
        out.append({
            "host": r.host,
            "step_time_ms": _r(f.step_time_ms),
            "input_pct": _r(f.input_pct, 2),
            "device_util_pct": _r(f.device_util_pct, 2),
            "straggler": r.host in stragglers,
            "steps": steps_json(RunSteps(r.steps, [r])),
            "breakdown_ms": {k: _r(v) for k, v in r.breakdown.mean_ms().items()},
            "breakdown_pct": {k: _r(v, 2) for k, v in r.breakdown.pct().items()},
            "verdict": r.verdict.to_json(),
            "input_pipeline": r.input_pipeline.to_json(),
            "recommendations": [x.id for x in r.recommendations],
        })
    return out


def _written(view: Any) -> Dict[str, Any]:
    """A deeper view as the report writes it: one host's (a Found) or the run's pooled, each its own
    JSON, rounded there."""
    return view.to_json()


def _profile_json(files: List[Dict[str, Any]]) -> Any:
    """One host: its file; several: the list (the contract's two shapes)."""
    return dict(files[0]) if len(files) == 1 else [dict(f) for f in files]


# -- the table ----------------------------------------------------------------------------------------

STEPS = Section("steps", pool.STEPS, steps_json, read=lambda r: RunSteps(r.steps, [r]), facts=_steps_facts)
BREAKDOWN_MS = Section("breakdown_ms", pool.BREAKDOWN, lambda b: {k: _r(v) for k, v in b.mean_ms().items()},
                       read=lambda r: r.breakdown, facts=_breakdown_facts)
BREAKDOWN_PCT = Section("breakdown_pct", pool.BREAKDOWN, lambda b: {k: _r(v, 2) for k, v in b.pct().items()},
                        read=lambda r: r.breakdown, facts=lambda r: {"breakdown_pct": r.breakdown.pct()})
VERDICT = Section("verdict", pool.VERDICT, lambda v: v.to_json(), read=lambda r: r.verdict,
                  facts=lambda r: {"input_bound": r.verdict.input_bound, "bottleneck": r.verdict.bottleneck})
INPUT_PIPELINE = Section("input_pipeline", pool.INPUT_PIPELINE, lambda p: p.to_json(),
                         read=lambda r: r.input_pipeline, facts=_input_facts)
PRECISION_PCT = Section("precision_pct", pool.PRECISION_PCT, dict,
                        read=lambda r: r.precision_result.to_json()["precision_pct"],
                        facts=lambda r: {"precision_pct": dict(r.precision_result.precision_pct)})
PRECISION = Section("precision", pool.PRECISION, dict,
                    read=lambda r: r.precision_result.to_json()["precision"], facts=_precision_facts)
TENSOR_CORES = Section("tensor_cores", pool.TENSOR_CORES, dict,
                       read=lambda r: r.tensor_core_result.to_json()["tensor_cores"],
                       facts=_tensor_core_facts)
RECOMMENDATIONS = Section("recommendations", pool.RECOMMENDATIONS, lambda xs: [x.to_json() for x in xs],
                          read=lambda r: r.recommendations)
OPS = Section("ops", pool.OPS, lambda rows: [o.to_json() for o in rows],
              analyse=lambda m: op_table(m.profile, m.breakdown))
KERNELS = Section("kernels", pool.KERNELS, lambda rows: [k.to_json() for k in rows],
                  analyse=lambda m: kernel_table(m.profile, m.breakdown))
DEVICES = Section("devices", pool.DEVICES, lambda rows: [dict(d) for d in rows],
                  analyse=lambda m: device_rows(m.profile, m.breakdown),
                  facts=lambda r: {"device_model": next(
                      (str(d.get("model") or "") for d in DEVICES.of(r) if d.get("model")), "")})
ALLOCATOR_PEAKS = Section("memory_peak_bytes_by_allocator", pool.ALLOCATOR_PEAKS, dict,
                          analyse=lambda m: peak_by_allocator(m.profile))
DEVICE_PEAK = Section("peak_memory_bytes", pool.DEVICE_PEAK, lambda peak: peak,
                      read=lambda r: device_peak_bytes(ALLOCATOR_PEAKS.of(r)))
FRAMEWORK = Section("framework", pool.FRAMEWORK, str, read=lambda r: r.signals.framework,
                    facts=_framework_facts)
PREPROCESSING = Section("preprocessing", pool.PREPROCESSING, lambda p: p.to_json(),
                        analyse=lambda m: analyze_preprocessing(m.profile, m.breakdown),
                        facts=_preprocessing_facts)
HOST_SYNC = Section("host_sync", pool.HOST_SYNC, lambda s: s.to_json(),
                    analyse=lambda m: analyze_host_sync(m.profile, m.breakdown), facts=_host_sync_facts)
CPU_16BIT = Section("cpu_16bit", pool.CPU_16BIT, lambda c: c.to_json() if c else None, analyse=_cpu_16bit,
                    facts=_cpu_16bit_facts)
PROFILE = Section("profile", pool.PROFILE_FILES, _profile_json,
                  read=lambda r: [{"host": r.host, "path": r.path, "size_bytes": r.size_bytes}])
PER_HOST = Section("per_host", pool.PER_HOST, lambda rows: host_rows(*rows), several_hosts=True)
STRAGGLERS = Section("stragglers", pool.STRAGGLERS, lambda found: [s.to_json() for s in found],
                     several_hosts=True)
WARNINGS = Section("warnings", pool.WARNINGS, list,
                   analyse=lambda m: [f"profiler error: {e}" for e in m.profile.errors]
                   + list(m.profile.warnings))
VALIDITY = Section("validity", pool.VALIDITY, lambda v: v.to_json(),
                   analyse=lambda m: assess_validity(m.profile, m.steps, m.signals.framework,
                                                     m.signals.gpu_planes),
                   view="validity")
KERNEL_STATS = Section("kernel_stats", pool.KERNEL_STATS, _written, read=lambda r: r.deep.kernel_stats,
                       findings=kernel_findings, view="kernels")
MEMORY = Section("memory", pool.MEMORY, _written, read=lambda r: r.deep.memory, findings=memory_findings,
                 view="memory")
COLLECTIVES = Section("collectives", pool.COLLECTIVES, _written, read=lambda r: r.deep.collectives,
                      findings=lambda c: collective_findings(c.to_json()), view="collectives")
ROOFLINE = Section("roofline", pool.ROOFLINE, _written, read=lambda r: r.deep.roofline,
                   findings=lambda roof: roofline_findings(roof.to_json()), view="roofline")

SECTIONS: Tuple[Section[Any], ...] = (
    STEPS, BREAKDOWN_MS, BREAKDOWN_PCT, VERDICT, INPUT_PIPELINE, PRECISION_PCT, PRECISION, TENSOR_CORES,
    RECOMMENDATIONS, OPS, KERNELS, DEVICES, DEVICE_PEAK, ALLOCATOR_PEAKS, FRAMEWORK, PREPROCESSING, HOST_SYNC,
    CPU_16BIT, PROFILE, PER_HOST, STRAGGLERS, WARNINGS, VALIDITY, KERNEL_STATS, MEMORY, COLLECTIVES, ROOFLINE,
)

# `tb-advisor report --section NAME` → the report key it shows (the deeper views).
VIEWS: Dict[str, str] = {s.view: s.key for s in SECTIONS if s.view}


def facts_of(report: HostReport) -> Facts:
    """What the advice engine reads of one host: the `facts` of every section."""
    return Facts(**{k: v for s in SECTIONS if s.facts is not None for k, v in s.facts(report).items()})
