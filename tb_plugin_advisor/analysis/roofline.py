"""Roofline and MFU: each op's achieved FLOP/s against its roof, and the run's model FLOPs utilisation.

An op's arithmetic intensity is FLOPs / bytes; its roof is min(peak FLOP/s of its precision,
intensity × peak memory bandwidth) of the device (accelerator_peaks.py); below the ridge point it is
memory-bound, above it compute-bound. MFU per step is the FLOPs of the ops inside the step divided by
(step time × devices × peak FLOP/s of the precision most FLOPs ran in). Where the device is not in
the table, FLOP/s are still reported and the roofs and MFU are None. Ops come from roofline_ops.py,
each labelled with where its FLOPs came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import findings as fd
from tb_plugin_advisor.analysis.accelerator_peaks import AcceleratorPeak, infer_model, peaks_for
from tb_plugin_advisor.analysis.op_flops import SOURCE_SHAPES_CONV
from tb_plugin_advisor.analysis.roofline_ops import OpCall, profile_ops
from tb_plugin_advisor.analysis.steps import Steps
from tb_plugin_advisor.model import Profile

# FLOP sources that give at most the true count (stride ≥ 1 and at most "same" padding shrink a
# convolution's output), so achieved rates and MFU built on them are upper bounds.
UPPER_BOUND_SOURCES = frozenset({SOURCE_SHAPES_CONV})

# Precisions tried, in order, when an op without a dtype runs faster than the default precision's peak.
ESCALATION = ("tf32", "bf16", "fp16", "fp8")


@dataclass
class OpRow:
    name: str
    source: str
    precision: Optional[str]
    calls: int = 0
    flops: float = 0.0
    bytes: float = 0.0
    bytes_known: bool = True
    time_ns: int = 0


@dataclass
class Roofline:
    model: str  # the device name the profile records ("" when CPU-only)
    model_source: Optional[str]  # "profile", or inferred (infer_model) when the profile names none
    peak: Optional[AcceleratorPeak]
    devices: int
    default_precision: Optional[str]
    ops: List[OpRow]
    kernel_ns: int  # all device (or op) time, for each op's share
    steps: int
    step_flops: List[float]  # per steady step
    step_ms: List[float]
    basis: str = "steps"  # what MFU divides by: "steps", "device span" (no step holds an op) or "none"
    findings: List[fd.Finding] = field(default_factory=list)

    def precision_of(self, row: OpRow) -> Tuple[Optional[str], Optional[str]]:
        """(precision, how it is known): the op's dtype; else the device's default precision
        (`assumed`), raised to the first faster precision whose peak the op's achieved rate needs
        (`inferred from the achieved rate`: an XLA op faster than the fp32 peak ran in 16 bits)."""
        if row.precision:
            return row.precision, "dtype"
        default = self.default_precision
        if default is None:
            return None, None
        achieved = row.flops / (row.time_ns / 1e9) if row.time_ns else 0.0
        peak = self.peak.peak(default) if self.peak is not None else None
        if peak is not None and achieved > peak:
            for faster in ESCALATION:
                top = self.peak.peak(faster)
                if top is not None and top >= achieved:
                    return faster, "inferred from the achieved rate"
        return default, "assumed"

    def roof(self, row: OpRow) -> Optional[float]:
        precision = self.precision_of(row)[0]
        if self.peak is None or precision is None or self.peak.peak(precision) is None:
            return None
        compute = float(self.peak.peak(precision))
        if not row.bytes_known or row.bytes <= 0:
            return compute
        return min(compute, row.flops / row.bytes * self.peak.memory_bandwidth)

    @property
    def mfu_precision(self) -> Optional[str]:
        by_precision: Dict[str, float] = {}
        for row in self.ops:
            p = self.precision_of(row)[0]
            if p:
                by_precision[p] = by_precision.get(p, 0.0) + row.flops
        return max(by_precision, key=lambda p: by_precision[p]) if by_precision else None

    def mfu_pct(self, flops: float, ms: float) -> Optional[float]:
        precision = self.mfu_precision
        if self.peak is None or precision is None or not ms or not self.devices:
            return None
        peak = self.peak.peak(precision)
        return 100.0 * flops / (ms / 1e3) / self.devices / peak if peak else None

    def to_json(self) -> Dict[str, Any]:
        total_flops = sum(r.flops for r in self.ops)
        steady_flops, steady_ms = sum(self.step_flops), sum(self.step_ms)
        per_s = steady_flops / (steady_ms / 1e3) / max(self.devices, 1) if steady_ms else None
        sources: Dict[str, int] = {}
        for r in self.ops:
            sources[r.source] = sources.get(r.source, 0) + r.calls
        return {
            "device_model": self.model or None,
            "device_model_source": self.model_source,
            "accelerator": None if self.peak is None else {
                "name": self.peak.name, "source": self.peak.source,
                "peak_flops": dict(self.peak.flops), "memory_bandwidth": self.peak.memory_bandwidth,
                "ridge_flops_per_byte": {p: round(v, 2) for p, v in self.peak.ridge.items()}},
            "devices": self.devices,
            "ops_with_flops": len(self.ops),
            "flops_total": total_flops,
            "flops_sources": sources,
            "steps": self.steps,
            "flops_per_step": steady_flops / self.steps if self.steps else None,
            "achieved_flops_per_s": per_s,
            "mfu_precision": self.mfu_precision,
            "mfu_basis": self.basis,
            # a convolution counted with the stride-1 assumption has at most that many FLOPs
            "mfu_upper_bound": any(r.source in UPPER_BOUND_SOURCES for r in self.ops),
            "mfu_pct": _opt(self.mfu_pct(steady_flops, steady_ms), 2),
            "per_step": [
                {"flops": f, "ms": round(ms, 4), "achieved_flops_per_s": f / (ms / 1e3) / max(self.devices, 1)
                 if ms else None, "mfu_pct": _opt(self.mfu_pct(f, ms), 2)}
                for f, ms in zip(self.step_flops, self.step_ms)
            ] if self.basis == "steps" else [],
            "ops": [self._op_json(r) for r in self.ops[:fd.ROOFLINE_TOP_OPS]],
            "findings": [f.to_json() for f in self.findings],
        }

    def _op_json(self, r: OpRow) -> Dict[str, Any]:
        achieved = r.flops / (r.time_ns / 1e9) if r.time_ns else None
        intensity = r.flops / r.bytes if r.bytes_known and r.bytes > 0 else None
        roof = self.roof(r)
        precision, known = self.precision_of(r)
        ridge = self.peak.ridge.get(precision) if self.peak is not None and precision else None
        return {
            "name": r.name, "source": r.source, "calls": r.calls, "flops": r.flops,
            "flops_upper_bound": r.source in UPPER_BOUND_SOURCES,
            "bytes": r.bytes if r.bytes_known else None, "time_ms": round(r.time_ns / 1e6, 4),
            "time_pct": round(100.0 * r.time_ns / self.kernel_ns, 2) if self.kernel_ns else None,
            "precision": precision,
            "precision_source": known,
            "intensity_flops_per_byte": _opt(intensity, 3),
            "achieved_flops_per_s": achieved,
            "roof_flops_per_s": roof,
            "roof_pct": _opt(100.0 * achieved / roof, 2) if roof and achieved is not None else None,
            "bound": None if intensity is None or ridge is None else
            ("memory" if intensity < ridge else "compute"),
        }


def _opt(value: Optional[float], digits: int) -> Optional[float]:
    return None if value is None else round(float(value), digits)


def _aggregate(calls: List[OpCall]) -> List[OpRow]:
    rows: Dict[tuple, OpRow] = {}
    for c in calls:
        row = rows.setdefault((c.name, c.source, c.precision), OpRow(c.name, c.source, c.precision))
        row.calls += 1
        row.flops += c.flops
        row.time_ns += c.time_ns
        if c.bytes is None:
            row.bytes_known = False
        else:
            row.bytes += c.bytes
    return sorted(rows.values(), key=lambda r: (-r.time_ns, r.name))


def _device_span_ms(devices) -> Optional[float]:
    spans = [(int(d.kernels.start_ns.min()), int((d.kernels.start_ns + d.kernels.duration_ns).max()))
             for d in devices if len(d.kernels)]
    if not spans:
        return None
    return (max(e for _, e in spans) - min(s for s, _ in spans)) / 1e6


def analyze_roofline(profile: Profile, steps: Optional[Steps] = None) -> Roofline:
    calls = profile_ops(profile)
    accelerators = [d for d in profile.devices if d.has_activity]
    model = accelerators[0].model if accelerators else ""
    model_source = "profile" if model else None
    if accelerators and not model:
        d = accelerators[0]
        model = infer_model(d.vendor, d.compute_capability, d.core_count, d.memory_bytes) or ""
        model_source = "inferred from compute capability and core count" if model else None
    peak = peaks_for(model) if model else None
    kind = accelerators[0].kind if accelerators else ""
    default = "bf16" if kind == "tpu" else ("fp32" if accelerators else None)
    kernel_ns = sum(d.kernels.total_ns for d in accelerators) or sum(c.time_ns for c in calls)
    step_flops: List[float] = []
    step_ms: List[float] = []
    if steps is not None and steps.count and calls:
        lo, hi = steps.start_ns[steps.steady], steps.end_ns[steps.steady]
        starts = np.array([c.start_ns for c in calls], dtype=np.int64)
        flops = np.array([c.flops for c in calls])
        for a, b in zip(lo.tolist(), hi.tolist()):
            inside = (starts >= a) & (starts < b)
            step_flops.append(float(flops[inside].sum()))
            step_ms.append((b - a) / 1e6)
    basis = "steps"
    if calls and not any(step_flops):
        # the step markers hold none of the counted ops (markers around the host loop only, or no
        # steps): MFU over the span the accelerators were busy, first kernel start to last kernel end
        span_ms = _device_span_ms(accelerators)
        basis = "device span" if span_ms else "none"
        step_flops, step_ms = ([sum(c.flops for c in calls)], [span_ms]) if span_ms else ([], [])
    result = Roofline(model=model, model_source=model_source, peak=peak, devices=len(accelerators),
                      default_precision=default,
                      ops=_aggregate(calls), kernel_ns=kernel_ns,
                      steps=len(step_ms) if basis == "steps" else 0,
                      step_flops=step_flops, step_ms=step_ms, basis=basis)
    result.findings = fd.roofline_findings(result.to_json())
    return result
