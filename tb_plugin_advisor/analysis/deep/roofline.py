"""The roofline: achieved FLOP/s and MFU per step, and each op's arithmetic intensity against its roof.

Ops and their FLOPs/bytes come from op_flops.py; the device's peaks from device_peaks.py (matched from
the model name the profile records). Per op: intensity = FLOPs / bytes; the roof at that intensity is
min(peak FLOP/s, intensity × bandwidth); the ridge point is peak ÷ bandwidth. An op left of the ridge
is memory-bound and its % of roof is its achieved bandwidth over the peak bandwidth; right of it,
compute-bound, achieved FLOP/s over the peak. MFU = model FLOPs per step ÷ step time ÷ peak FLOP/s at
the dominant precision (the precision holding most FLOPs), per device. An op belongs to the step it
was issued in (PyTorch: its host op's start; XLA: its device start), so a GPU running behind the host
still counts each step's FLOPs once; a step lasts its host range, or the span of its device work when
that is longer (a host that runs ahead of the GPU: the step's kernels take longer than its Python).
Without steps the time is the span of the costed ops ("profile_span"), said so in the JSON.

Compute time no rule costs is listed (`uncosted_ops`, PyTorch: XLA costs every op it compiles) and
`costed_time_pct` says which share of compute time the MFU covers. A PyTorch profile without an
accelerator (CPU only) is costed by host op time: model FLOPs per step and achieved FLOP/s, and no
MFU, since no CPU peak is known. AMD devices are identified by gfx target, CUs and memory
(amd_devices.py), never by a "compute capability".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.amd_devices import amd_identity
from tb_plugin_advisor.analysis.classify.device_peaks import (
    DevicePeaks,
    infer_model,
    peak_flops,
    peaks_by_key,
    peaks_for,
)
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.analysis.deep.op_flops import SOURCES, OpCosts, op_costs
from tb_plugin_advisor.analysis.intervals import window_index
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.lookup import unique_codes, unique_inverse
from tb_plugin_advisor.model import Device, Profile

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
class DeviceModel:
    """What the costed device is, as the roofline names it."""

    model: str  # the name the profile records, else the one identified or inferred ("" unknown)
    source: Optional[str]  # "profile", or how it was identified / inferred
    peaks: Optional[DevicePeaks]
    gfx: Optional[str] = None  # an AMD device's target, e.g. "gfx90a"
    product: Optional[str] = None  # an AMD device's product, e.g. "AMD Instinct MI250 (one GCD) or MI210"


@dataclass
class Roofline:
    """Where the costed ops sit against the device's peaks, and the model FLOPs per step."""

    ops: List[CostedOp]
    uncosted: List[CostedOp]  # compute time no rule costs, per op name (FLOPs 0)
    identity: DeviceModel
    cpu_only: bool  # costed by host op time: a PyTorch profile without device kernels
    devices: int
    device_time_ns: int  # every kernel/op of the host's devices: the denominator of time_pct
    compute_time_ns: int  # the compute ones (no collectives, no copies): what costed_time_pct covers
    dominant: Optional[str]
    basis: str  # "steps" | "profile_span" | "none"
    per_step: List[Tuple[Optional[int], float, float]]  # (step number, model FLOPs, step ns), steady
    span_flops: float = 0.0  # model FLOPs over the basis time (all devices)
    span_ns: int = 0
    hardware_flops: float = 0.0

    @property
    def peaks(self) -> Optional[DevicePeaks]:
        return self.identity.peaks

    @property
    def fastest_peak(self) -> Optional[float]:
        """The most FLOP/s the device can run at all (its fastest precision, sparse): no rate above
        it is real."""
        if not self.peaks or not self.peaks.flops:
            return None
        return max(self.peaks.flops.values()) * th.PEAK_SPARSITY_FACTOR

    def peak(self, precision: str) -> Tuple[Optional[float], str]:
        return peak_flops(self.peaks, precision) if self.peaks else (None, precision)

    @property
    def rate(self) -> Optional[float]:
        """Model FLOP/s per device over the basis time (None without one), impossible or not."""
        return self.span_flops / max(self.devices, 1) / (self.span_ns / 1e9) if self.span_ns else None

    @property
    def rate_impossible(self) -> bool:
        return impossible_rate(self.rate, self.fastest_peak)

    def listed_ops(self) -> List[CostedOp]:
        """The costed ops the view lists: the longest, longest first."""
        return sorted(self.ops, key=lambda o: (-o.time_ns, o.name))[: th.ROOFLINE_TOP_OPS]

    def listed_uncosted(self) -> List[CostedOp]:
        """The uncosted ops the view lists: the longest, longest first."""
        return sorted(self.uncosted, key=lambda o: (-o.time_ns, o.name))[: th.ROOFLINE_TOP_OPS]

    def to_json(self) -> Dict[str, Any]:
        peak, peak_precision = self.peak(self.dominant or "unknown")
        bw = self.peaks.bandwidth if self.peaks else None
        impossible = self.rate_impossible
        # the shapes or FLOP counts are wrong: no rate, no MFU, and the JSON says why
        achieved = None if impossible else self.rate
        costed = sum(op.time_ns for op in self.ops)
        coverage = 100.0 * costed / self.compute_time_ns if self.compute_time_ns else None
        out: Dict[str, Any] = {
            "device_model": self.identity.model or None,
            "device_model_source": self.identity.source,
            "device": self._device_label(),
            "gfx_target": self.identity.gfx,
            "cpu_only": self.cpu_only,
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
            "mfu_impossible": impossible,
            "per_step": [self._step_json(s, f, ns, peak) for s, f, ns in self.per_step],
            "ops_with_flops": sum(op.calls for op in self.ops),
            "sources": sorted({op.source for op in self.ops}),
            "costed_time_pct": _r(coverage, 2),
            # most compute time has no known FLOPs: the MFU counts only part of the work
            "mfu_lower_bound": coverage is None or coverage < th.ROOFLINE_MIN_COSTED_PCT,
            "ops": [self.op_json(op) for op in self.listed_ops()],
            "uncosted_ops": [self.uncosted_json(op) for op in self.listed_uncosted()],
        }
        return out

    def _step_json(self, step: Optional[int], flops: float, ns: float,
                   peak: Optional[float]) -> Dict[str, Any]:
        rate = flops / max(self.devices, 1) / (ns / 1e9) if ns else None
        if impossible_rate(rate, self.fastest_peak):
            rate = None
        return {"step": step, "model_flops": _r(flops, 0), "ms": _r(ns / 1e6),
                "achieved_tflops": _r(rate / 1e12, 6) if rate is not None else None,
                "mfu_pct": _r(100.0 * rate / peak, 4) if rate is not None and peak else None}

    def _device_label(self) -> Optional[str]:
        """The peaks' device, or an AMD product named more precisely than its peaks entry."""
        if self.identity.product and self.peaks:
            return self.identity.product
        return self.peaks.label if self.peaks else None

    def uncosted_json(self, op: CostedOp) -> Dict[str, Any]:
        """An uncosted op's row: its share of this host's compute time."""
        share = 100.0 * op.time_ns / self.compute_time_ns if self.compute_time_ns else None
        return {"name": op.name, "short_name": short_name(op.name), "calls": op.calls,
                "total_ms": _r(op.time_ns / 1e6),
                "time_pct": _r(share, 2)}

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

    def op_json(self, op: CostedOp) -> Dict[str, Any]:
        """A costed op's row: its place against this host's device's roofs."""
        seconds = op.time_ns / 1e9
        nbytes = op.bytes if op.bytes_known and op.bytes > 0 else None
        intensity = op.flops / nbytes if nbytes else None
        peak, used = self.peak(op.precision)
        bw = self.peaks.bandwidth if self.peaks else None
        bound = roof = pct = None
        rate = op.flops / seconds if seconds else None
        impossible = impossible_rate(rate, self.fastest_peak)
        if impossible:  # wrong shapes or FLOP counts: no rate and no place on the roofline
            rate = intensity = None
        if intensity is not None and peak and bw and seconds:
            ridge = peak / bw
            bound = "memory" if intensity < ridge else "compute"
            roof = min(peak, intensity * bw)
            pct = 100.0 * (nbytes / seconds / bw if bound == "memory" else op.flops / seconds / peak)
        return {
            "name": op.name,
            "short_name": short_name(op.name),
            "source": op.source,
            "precision": op.precision,
            "peak_precision": used if peak else None,
            "calls": op.calls,
            "total_ms": _r(op.time_ns / 1e6),
            "time_pct": _r(100.0 * op.time_ns / self.device_time_ns if self.device_time_ns else None, 2),
            "flops": _r(op.flops, 0),
            "bytes": _r(nbytes, 0),
            "intensity": _r(intensity, 3),
            "achieved_tflops": _r(rate / 1e12 if rate is not None else None, 4),
            "achieved_gbps": _r(nbytes / seconds / 1e9 if nbytes and seconds else None, 3),
            "roof_tflops": _r(roof / 1e12 if roof else None, 4),
            "ridge_flops_per_byte": _r(peak / bw if peak and bw else None, 2),
            "bound": bound,
            "roof_pct": _r(pct, 2),
            "impossible": impossible,
        }


def impossible_rate(flops_per_s: Optional[float], fastest_peak: Optional[float]) -> bool:
    """Whether a device's achieved FLOP/s cannot be: above its fastest peak, above 1 EFLOP/s when no
    peak is known, or not a finite number. Such a rate comes from wrong shapes or FLOP counts (an
    `Input Dims` of 2^41), never from the device, so no figure is built on it."""
    if flops_per_s is None:
        return False
    if not math.isfinite(flops_per_s):
        return True
    return flops_per_s > (fastest_peak or th.MAX_DEVICE_FLOPS)


def roofline(profile: Profile, steps: Optional[Steps] = None) -> Roofline:
    costs = op_costs(profile)
    costed = costs.costed
    devices = [costs.devices[i] for i in unique_codes(costs.device[costed]).tolist()]
    compute = [d for d in profile.devices if len(d.kernels)]
    if costs.on_host:
        compute_ns = int(costs.duration_ns.sum())
        device_ns = compute_ns
    else:
        compute_ns = sum(int(np.sum(d.kernels.duration_ns, where=kernel_view(d).compute)) for d in compute)
        device_ns = sum(d.kernels.total_ns for d in compute)
    result = Roofline(
        ops=_aggregate(costs, costed), uncosted=_aggregate(costs, ~costed),
        identity=_identify(profile, devices or [d.name for d in compute]), cpu_only=costs.on_host,
        devices=len(devices),
        device_time_ns=device_ns, compute_time_ns=compute_ns, dominant=_dominant(costs),
        basis="none", per_step=[], hardware_flops=float(costs.flops.sum()))
    _timing(result, costs, steps)
    return result


def _identify(profile: Profile, devices: List[str]) -> DeviceModel:
    """The first costed device (else the first with kernels): by the name the profile records, else
    (NVIDIA) from its compute capability and SM count; an AMD device by gfx target, CUs and memory
    (amd_devices.py)."""
    device: Optional[Device] = next((d for d in profile.devices if d.name in devices), None)
    if device is None:
        return DeviceModel("", None, None)
    amd = amd_identity(device)
    if amd is not None:
        peaks = peaks_by_key(amd.peaks_key) if amd.peaks_key else peaks_for(device.model)
        named = bool(device.model) and peaks is not None and peaks_for(device.model) is peaks
        source = "profile" if named else (f"identified from {amd.how}" if amd.product else None)
        return DeviceModel(device.model or amd.product or "", source if device.model or amd.product else None,
                           peaks, amd.gfx, amd.product)
    if device.model:
        return DeviceModel(device.model, "profile", peaks_for(device.model))
    model = infer_model(device.vendor, device.compute_capability, device.core_count, device.memory_bytes)
    if not model:
        return DeviceModel("", None, None)
    return DeviceModel(model, "inferred from compute capability and core count", peaks_for(model))


def _aggregate(costs: OpCosts, rows: np.ndarray) -> List[CostedOp]:
    """One row per (op name, source, precision) over the selected rows, summed with numpy (no Python
    loop over ops)."""
    if not rows.any():
        return []
    n_src, n_prec = len(SOURCES), len(PRECISIONS)
    key = (costs.name[rows].astype(np.int64) * n_src + costs.source[rows]) * n_prec + costs.precision[rows]
    keys, group = unique_inverse(key)
    group = group.reshape(-1)
    size = keys.size
    calls = np.bincount(group, weights=costs.calls[rows], minlength=size)
    time_ns = np.bincount(group, weights=costs.duration_ns[rows].astype(np.float64), minlength=size)
    flops = np.bincount(group, weights=costs.flops[rows], minlength=size)
    unknown = np.isnan(costs.bytes[rows])
    nbytes = np.bincount(group, weights=np.where(unknown, 0.0, costs.bytes[rows]), minlength=size)
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
    costed = costs.costed
    if not costed.any():
        return
    model = costs.model_flops
    if steps is not None and steps.count and steps.steady.any():
        # an op belongs to the step the host was running when it issued it; the step lasts as long
        # as its window (on the device's clock for a GPU run: until its device work is done)
        lo, hi = steps.start_ns[steps.steady], steps.end_ns[steps.steady]
        host_lo, host_hi = steps.host_start_ns[steps.steady], steps.host_end_ns[steps.steady]
        order = np.argsort(host_lo, kind="stable")
        lo, hi, host_lo, host_hi = lo[order], hi[order], host_lo[order], host_hi[order]
        numbers = [n for n, s in zip(steps.numbers, steps.steady.tolist()) if s]
        numbers = [numbers[i] for i in order.tolist()]
        where = window_index(host_lo, host_hi, costs.host_ns)
        inside = where >= 0
        per = np.bincount(where[inside], weights=model[inside], minlength=lo.size)
        if per.sum() >= STEPS_MIN_FLOPS_SHARE * model.sum():
            ns = _step_ns(lo, hi, where, costs)
            result.basis = "steps"
            result.per_step = [(numbers[i], float(per[i]), int(ns[i])) for i in range(lo.size)]
            result.span_flops = float(per.sum())
            result.span_ns = int(ns.sum())
            return
    result.basis = "profile_span"
    result.span_flops = float(model.sum())
    result.span_ns = int(costs.end_ns[costed].max() - costs.start_ns[costed].min())


def _step_ns(lo: np.ndarray, hi: np.ndarray, where: np.ndarray, costs: OpCosts) -> np.ndarray:
    """Each step's time: its range, or the span of the device work issued in it when that is longer."""
    length = (hi - lo).astype(np.int64)
    inside = where >= 0
    if costs.on_host or not inside.any():
        return length
    first = np.full(lo.size, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(lo.size, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(first, where[inside], costs.start_ns[inside])
    np.maximum.at(last, where[inside], costs.end_ns[inside])
    span = np.where(last > first, last - first, 0)
    return np.maximum(length, span)
