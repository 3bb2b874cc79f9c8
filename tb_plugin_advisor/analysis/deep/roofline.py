"""The roofline: achieved FLOP/s and MFU per step, and each op's arithmetic intensity against its roof.

Ops and their FLOPs/bytes come from op_flops.py; the device's peaks from device_peaks.py (matched from
the model name the profile records). Per op: intensity = FLOPs / bytes; the roof at that intensity is
min(peak FLOP/s, intensity × bandwidth); the ridge point is peak ÷ bandwidth. An op left of the ridge
is memory-bound and its % of roof is its achieved bandwidth over the peak bandwidth; right of it,
compute-bound, achieved FLOP/s over the peak. MFU = model FLOPs per step ÷ step time ÷ peak FLOP/s at
the dominant precision (the precision holding most FLOPs), per device. Without steps the time is the
span of the costed ops ("profile_span"), said so in the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.device_peaks import DevicePeaks, infer_model, peak_flops, peaks_for
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.deep.op_flops import SOURCES, OpCosts, op_costs
from tb_plugin_advisor.analysis.intervals import window_index
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.lookup import unique_codes, unique_inverse
from tb_plugin_advisor.model import Profile

# Steps are the time basis only when the steady steps hold at least this share of the model FLOPs (a
# profile whose step markers miss the device work would otherwise read as 0 % MFU).
STEPS_MIN_FLOPS_SHARE = 0.5


@dataclass
class CostedOp:
    """One op with known FLOPs, its calls and time summed over the devices it ran on."""

    name: str
    source: str
    precision: str
    calls: int = 0
    time_ns: int = 0
    flops: float = 0.0
    bytes: float = 0.0
    bytes_known: bool = True


@dataclass
class Roofline:
    ops: List[CostedOp]
    peaks: Optional[DevicePeaks]
    model: str
    model_source: Optional[str]  # "profile", or inferred (device_peaks.infer_model) for an unnamed device
    devices: int
    device_time_ns: int  # every kernel/op of the host's devices: the denominator of time_pct
    compute_time_ns: int  # the compute ones (no collectives, no copies): what costed_time_pct covers
    dominant: Optional[str]
    basis: str  # "steps" | "profile_span" | "none"
    per_step: List[Tuple[Optional[int], float, float]]  # (step number, model FLOPs, step ns), steady
    span_flops: float = 0.0  # model FLOPs over the basis time (all devices)
    span_ns: int = 0
    hardware_flops: float = 0.0

    def peak(self, precision: str) -> Tuple[Optional[float], str]:
        return peak_flops(self.peaks, precision) if self.peaks else (None, precision)

    def to_json(self) -> Dict[str, Any]:
        peak, peak_precision = self.peak(self.dominant or "unknown")
        bw = self.peaks.bandwidth if self.peaks else None
        n = max(self.devices, 1)
        achieved = self.span_flops / n / (self.span_ns / 1e9) if self.span_ns else None
        rows = [self._op_json(op) for op in sorted(self.ops, key=lambda o: (-o.time_ns, o.name))]
        costed = sum(op.time_ns for op in self.ops)
        coverage = 100.0 * costed / self.compute_time_ns if self.compute_time_ns else None
        out: Dict[str, Any] = {
            "device_model": self.model or None,
            "device_model_source": self.model_source,
            "device": self.peaks.label if self.peaks else None,
            "peaks_source": self.peaks.source if self.peaks else None,
            "devices": self.devices,
            "dominant_precision": self.dominant,
            "peak_precision": peak_precision if peak else None,
            "peak_tflops": _r(peak / 1e12 if peak else None),
            "bandwidth_gbps": _r(bw / 1e9 if bw else None),
            "ridge_flops_per_byte": _r(peak / bw if peak and bw else None, 2),
            "roofs": self._roofs(),
            "basis": self.basis,
            "steps": len(self.per_step),
            "step_ms": _r(self.span_ns / 1e6 / len(self.per_step) if self.per_step else None),
            "model_flops_per_step": _r(self.span_flops / len(self.per_step), 0) if self.per_step else None,
            "model_flops": _r(self.span_flops, 0),
            "hardware_flops": _r(self.hardware_flops, 0),
            "achieved_tflops": _r(achieved / 1e12 if achieved is not None else None, 6),
            "mfu_pct": _r(100.0 * achieved / peak if achieved is not None and peak else None, 4),
            "per_step": [
                {"step": s, "model_flops": _r(f, 0), "ms": _r(ns / 1e6),
                 "achieved_tflops": _r(f / n / (ns / 1e9) / 1e12, 6) if ns else None,
                 "mfu_pct": _r(100.0 * f / n / (ns / 1e9) / peak, 4) if ns and peak else None}
                for s, f, ns in self.per_step
            ],
            "ops_with_flops": sum(op.calls for op in self.ops),
            "sources": sorted({op.source for op in self.ops}),
            "costed_time_pct": _r(coverage, 2),
            # most compute time has no known FLOPs: the MFU counts only part of the work
            "mfu_lower_bound": coverage is None or coverage < th.ROOFLINE_MIN_COSTED_PCT,
            "ops": rows[: th.ROOFLINE_TOP_OPS],
        }
        return out

    def _roofs(self) -> List[Dict[str, Any]]:
        """One roof per precision the ops use: what the chart draws."""
        if not self.peaks:
            return []
        roofs: Dict[str, float] = {}
        for op in self.ops:
            peak, used = self.peak(op.precision)
            if peak:
                roofs[used] = peak
        return [{"precision": p, "peak_tflops": _r(v / 1e12),
                 "ridge_flops_per_byte": _r(v / self.peaks.bandwidth, 2)}
                for p, v in sorted(roofs.items(), key=lambda kv: -kv[1])]

    def _op_json(self, op: CostedOp) -> Dict[str, Any]:
        seconds = op.time_ns / 1e9
        nbytes = op.bytes if op.bytes_known and op.bytes > 0 else None
        intensity = op.flops / nbytes if nbytes else None
        peak, used = self.peak(op.precision)
        bw = self.peaks.bandwidth if self.peaks else None
        bound = roof = pct = None
        if intensity is not None and peak and bw and seconds:
            ridge = peak / bw
            bound = "memory" if intensity < ridge else "compute"
            roof = min(peak, intensity * bw)
            pct = 100.0 * (nbytes / seconds / bw if bound == "memory" else op.flops / seconds / peak)
        return {
            "name": op.name,
            "source": op.source,
            "precision": op.precision,
            "peak_precision": used if peak else None,
            "calls": op.calls,
            "total_ms": _r(op.time_ns / 1e6),
            "time_pct": _r(100.0 * op.time_ns / self.device_time_ns if self.device_time_ns else None, 2),
            "flops": _r(op.flops, 0),
            "bytes": _r(nbytes, 0),
            "intensity": _r(intensity, 3),
            "achieved_tflops": _r(op.flops / seconds / 1e12 if seconds else None, 4),
            "achieved_gbps": _r(nbytes / seconds / 1e9 if nbytes and seconds else None, 3),
            "roof_tflops": _r(roof / 1e12 if roof else None, 4),
            "ridge_flops_per_byte": _r(peak / bw if peak and bw else None, 2),
            "bound": bound,
            "roof_pct": _r(pct, 2),
        }


def roofline(profile: Profile, steps: Optional[Steps] = None) -> Roofline:
    costs = op_costs(profile)
    devices = [costs.devices[i] for i in unique_codes(costs.device).tolist()]
    model = next((d.model for d in profile.devices if d.name in devices and d.model), "")
    model_source = "profile" if model else None
    unnamed = next((d for d in profile.devices if d.name in devices), None)
    if not model and unnamed is not None:
        model = infer_model(unnamed.vendor, unnamed.compute_capability, unnamed.core_count,
                            unnamed.memory_bytes) or ""
        model_source = "inferred from compute capability and core count" if model else None
    compute = [d for d in profile.devices if len(d.kernels)]
    result = Roofline(
        ops=_aggregate(costs), peaks=peaks_for(model), model=model, model_source=model_source,
        devices=len(devices),
        device_time_ns=sum(d.kernels.total_ns for d in compute),
        compute_time_ns=sum(int(np.sum(d.kernels.duration_ns, where=kernel_view(d).compute))
                            for d in compute),
        dominant=_dominant(costs),
        basis="none", per_step=[], hardware_flops=float(costs.flops.sum()))
    _timing(result, costs, steps)
    return result


def _aggregate(costs: OpCosts) -> List[CostedOp]:
    """One row per (op name, source, precision), summed with numpy (no Python loop over ops)."""
    if not len(costs):
        return []
    n_src, n_prec = len(SOURCES), len(PRECISIONS)
    key = (costs.name.astype(np.int64) * n_src + costs.source) * n_prec + costs.precision
    keys, group = unique_inverse(key)
    group = group.reshape(-1)
    size = keys.size
    calls = np.bincount(group, minlength=size)
    time_ns = np.bincount(group, weights=costs.duration_ns.astype(np.float64), minlength=size)
    flops = np.bincount(group, weights=costs.flops, minlength=size)
    unknown = np.isnan(costs.bytes)
    nbytes = np.bincount(group, weights=np.where(unknown, 0.0, costs.bytes), minlength=size)
    missing = np.bincount(group, weights=unknown.astype(np.float64), minlength=size)
    rows = []
    for g, k in enumerate(keys.tolist()):
        rest, precision = divmod(k, n_prec)
        name, source = divmod(rest, n_src)
        rows.append(CostedOp(costs.names[name], SOURCES[source], PRECISIONS[precision], calls=int(calls[g]),
                          time_ns=int(time_ns[g]), flops=float(flops[g]), bytes=float(nbytes[g]),
                          bytes_known=not missing[g]))
    return rows


def _dominant(costs: OpCosts) -> Optional[str]:
    by = np.bincount(costs.precision.astype(np.int64), weights=costs.model_flops, minlength=len(PRECISIONS))
    unknown = PRECISIONS.index("unknown")
    known = [(by[i], PRECISIONS[i]) for i in range(len(PRECISIONS)) if i != unknown and by[i] > 0]
    pick = known or ([(by[unknown], "unknown")] if by[unknown] > 0 else [])
    return max(pick, key=lambda fp: (fp[0], fp[1]))[1] if pick else None


def _timing(result: Roofline, costs: OpCosts, steps: Optional[Steps]) -> None:
    if not len(costs):
        return
    starts, model = costs.start_ns, costs.model_flops
    if steps is not None and steps.count and steps.steady.any():
        lo, hi = steps.start_ns[steps.steady], steps.end_ns[steps.steady]
        order = np.argsort(lo, kind="stable")
        lo, hi = lo[order], hi[order]
        numbers = [n for n, s in zip(steps.numbers, steps.steady.tolist()) if s]
        numbers = [numbers[i] for i in order.tolist()]
        where = window_index(lo, hi, starts)
        per = np.bincount(where[where >= 0], weights=model[where >= 0], minlength=lo.size)
        if per.sum() >= STEPS_MIN_FLOPS_SHARE * model.sum():
            result.basis = "steps"
            result.per_step = [(numbers[i], float(per[i]), int(hi[i] - lo[i])) for i in range(lo.size)]
            result.span_flops = float(per.sum())
            result.span_ns = int((hi - lo).sum())
            return
    ends = costs.start_ns + costs.duration_ns
    result.basis = "profile_span"
    result.span_flops = float(model.sum())
    result.span_ns = int(ends.max() - starts.min())
