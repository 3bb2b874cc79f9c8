"""Per-kernel statistics: launches, time, launch shape, occupancy and Tensor Core use, per kernel name.

Reads only the model: each device's KernelTable (start, duration, name, `kernel_details`), the device's
properties, and patterns.kernel_view for Tensor Core use. `kernel_details` is CUPTI's text in XSpace
(`regs:N static_shared:B dynamic_shared:B grid:x,y,z block:x,y,z occ_pct:F`); the Kineto reader writes
the same text from its kernel args, so both formats land here unchanged. Occupancy is labelled by
where it comes from: the profile's own value (CUPTI's theoretical occupancy in XSpace; Kineto's
estimated achieved occupancy) or computed here from the launch shape (analysis/occupancy.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import findings as fd
from tb_plugin_advisor.analysis.intervals import window_index
from tb_plugin_advisor.analysis.kernel_view import kernel_view
from tb_plugin_advisor.analysis.occupancy import Occupancy, SmLimits, sm_limits, theoretical_occupancy
from tb_plugin_advisor.analysis.patterns import MATRIX_FAMILIES, PRECISIONS
from tb_plugin_advisor.analysis.steps import Steps
from tb_plugin_advisor.model import Device, KernelDetails, Profile
from tb_plugin_advisor.readers.devices import parse_kernel_details

# Stats on a device line that mark the profile's occupancy as Kineto's *estimated achieved* occupancy
# (XSpace's `occ_pct` is CUPTI's theoretical occupancy).
ACHIEVED_OCCUPANCY_STATS = ("occupancy_pct", "est. achieved occupancy %")
OCCUPANCY_SOURCES = ("profile_theoretical", "profile_achieved_estimate", "computed_theoretical")


@dataclass
class KernelStat:
    """One kernel name on one host (all devices of the host together)."""

    name: str
    family: str
    launches: int
    total_ns: int
    min_ns: int
    max_ns: int
    steady_ns: int  # inside steady steps
    steady_launches: int
    devices: int
    configs: int  # distinct launch configurations seen
    details: KernelDetails  # the configuration with the most time
    occupancy_pct: Optional[float]  # time-weighted over launches that report one, else computed
    occupancy_source: Optional[str]  # one of OCCUPANCY_SOURCES
    theoretical_pct: Optional[float]  # computed from the dominant configuration
    limiter: Optional[str]
    tensor_core_pct: float  # share of this kernel's time on Tensor Cores / matrix cores
    precision: str

    @property
    def mean_ns(self) -> float:
        return self.total_ns / self.launches if self.launches else 0.0

    @property
    def threads_per_block(self) -> Optional[int]:
        b = self.details.block
        return b[0] * b[1] * b[2] if b else None

    @property
    def shared_bytes(self) -> Optional[int]:
        d = self.details
        if d.static_shared_bytes is None and d.dynamic_shared_bytes is None:
            return None
        return (d.static_shared_bytes or 0) + (d.dynamic_shared_bytes or 0)


@dataclass
class KernelStats:
    kernels: List[KernelStat]  # by total time, descending
    total_ns: int
    launches: int
    steps: int  # steady steps the per-step numbers divide by (0: no steps, per-step numbers are None)
    findings: List[fd.Finding] = field(default_factory=list)

    def to_json(self, top: int = fd.KERNEL_STATS_TOP) -> Dict[str, Any]:
        n = self.steps
        total = self.total_ns or 1
        tiny = [k for k in self.kernels if k.mean_ns < fd.TINY_KERNEL_US * 1e3]
        occ_known = [k for k in self.kernels if k.occupancy_pct is not None]
        occ_time = sum(k.total_ns for k in occ_known)
        return {
            "launches": self.launches,
            "distinct": len(self.kernels),
            "total_ms": _r(self.total_ns / 1e6),
            "steps": n,
            "launches_per_step": _r(sum(k.steady_launches for k in self.kernels) / n, 2) if n else None,
            "tiny_launch_pct": _r(100.0 * sum(k.launches for k in tiny) / (self.launches or 1), 2),
            "tiny_time_pct": _r(100.0 * sum(k.total_ns for k in tiny) / total, 2),
            "occupancy_pct": _r(sum(k.occupancy_pct * k.total_ns for k in occ_known) / occ_time, 2)
            if occ_time else None,
            "tensor_core_time_pct": _r(sum(k.tensor_core_pct * k.total_ns for k in self.kernels) / total, 2),
            "kernels": [_kernel_json(k, total, n) for k in self.kernels[:top]],
            "findings": [f.to_json() for f in self.findings],
        }


def _r(value: float, digits: int = 4) -> float:
    return round(float(value), digits)


def _kernel_json(k: KernelStat, total: int, steps: int) -> Dict[str, Any]:
    d = k.details
    return {
        "name": k.name,
        "family": k.family,
        "launches": k.launches,
        "total_ms": _r(k.total_ns / 1e6),
        "time_pct": _r(100.0 * k.total_ns / total, 3),
        "mean_us": _r(k.mean_ns / 1e3, 3),
        "min_us": _r(k.min_ns / 1e3, 3),
        "max_us": _r(k.max_ns / 1e3, 3),
        "per_step_ms": _r(k.steady_ns / 1e6 / steps) if steps else None,
        "launches_per_step": _r(k.steady_launches / steps, 3) if steps else None,
        "grid": list(d.grid) if d.grid else None,
        "block": list(d.block) if d.block else None,
        "threads_per_block": k.threads_per_block,
        "registers_per_thread": d.registers_per_thread,
        "shared_memory_bytes": k.shared_bytes,
        "configs": k.configs,
        "occupancy_pct": _r(k.occupancy_pct, 2) if k.occupancy_pct is not None else None,
        "occupancy_source": k.occupancy_source,
        "theoretical_occupancy_pct": _r(k.theoretical_pct, 2) if k.theoretical_pct is not None else None,
        "occupancy_limiter": k.limiter,
        "tensor_cores": k.tensor_core_pct >= 50.0,
        "tensor_core_pct": _r(k.tensor_core_pct, 2),
        "precision": k.precision,
        "devices": k.devices,
    }


def _steady_windows(steps: Optional[Steps]) -> Tuple[np.ndarray, np.ndarray, int]:
    if steps is None or steps.count == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    lo, hi = steps.start_ns[steps.steady], steps.end_ns[steps.steady]
    order = np.argsort(lo, kind="stable")
    return lo[order], hi[order], int(lo.size)


def _device_occupancy_source(device: Device) -> str:
    achieved = any(s in line.stats for line in device.plane.lines for s in ACHIEVED_OCCUPANCY_STATS)
    return "profile_achieved_estimate" if achieved else "profile_theoretical"


@dataclass
class _Acc:
    """Per-name accumulation over devices."""

    launches: int = 0
    total_ns: int = 0
    min_ns: int = 2**62
    max_ns: int = 0
    steady_ns: int = 0
    steady_launches: int = 0
    devices: int = 0
    occ_weighted: float = 0.0
    occ_ns: int = 0
    occ_source: Optional[str] = None
    tc_ns: int = 0
    config_ns: Dict[Tuple[int, str], int] = field(default_factory=dict)  # (device idx, details) → ns
    family: str = "other"
    precision_ns: Dict[str, int] = field(default_factory=dict)


def kernel_stats(profile: Profile, steps: Optional[Steps] = None) -> KernelStats:
    """Statistics per kernel name over every accelerator of one host's profile."""
    lo, hi, n_steps = _steady_windows(steps)
    acc: Dict[str, _Acc] = {}
    devices = [d for d in profile.devices if len(d.kernels)]
    for device_index, device in enumerate(devices):
        _accumulate(device, device_index, acc, lo, hi, n_steps)
    # launch shapes and occupancy repeat across names: parse and compute each distinct one once
    limits = [sm_limits(d.vendor, d.compute_capability, d.plane.stats) for d in devices]
    details_of = lru_cache(maxsize=None)(parse_kernel_details)
    occupancy_of = lru_cache(maxsize=None)(theoretical_occupancy)
    stats = [_finish(name, a, limits, details_of, occupancy_of) for name, a in acc.items()]
    stats.sort(key=lambda k: (-k.total_ns, k.name))
    result = KernelStats(
        kernels=stats,
        total_ns=sum(k.total_ns for k in stats),
        launches=sum(k.launches for k in stats),
        steps=n_steps,
    )
    result.findings = fd.kernel_findings(result)
    return result


def _accumulate(device: Device, device_index: int, acc: Dict[str, _Acc], lo: np.ndarray, hi: np.ndarray,
                n_steps: int) -> None:
    """Add one device's kernels to `acc`: numpy sums per name, then one Python pass over the names
    and their non-zero (name, launch shape) and (name, precision) pairs (no numpy call per name)."""
    table = device.kernels
    view = kernel_view(device)
    source = _device_occupancy_source(device)
    dur = table.duration_ns
    steady = window_index(lo, hi, table.start_ns) >= 0 if n_steps else np.zeros(len(table), bool)
    names, first_row, name_of_row = np.unique(table.name_index, return_index=True, return_inverse=True)
    name_of_row = name_of_row.reshape(-1)
    count = names.size
    launches = np.bincount(name_of_row, minlength=count)
    total = np.bincount(name_of_row, weights=dur, minlength=count)
    steady_ns = np.bincount(name_of_row, weights=np.where(steady, dur, 0), minlength=count)
    steady_n = np.bincount(name_of_row, weights=steady.astype(np.int64), minlength=count)
    tc_ns = np.bincount(name_of_row, weights=np.where(view.tensor_cores, dur, 0), minlength=count)
    mins = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    maxs = np.zeros(count, dtype=np.int64)
    np.minimum.at(mins, name_of_row, dur)
    np.maximum.at(maxs, name_of_row, dur)
    # per (name, details string): time and, where the details report one, occupancy
    details_ids, details_of_row = np.unique(table.details, return_inverse=True)
    details_of_row = details_of_row.reshape(-1)
    texts = [table.strings[i] if i >= 0 else "" for i in details_ids.tolist()]
    occupancy = [parse_kernel_details(t).occupancy_pct if i >= 0 else None
                 for i, t in zip(details_ids.tolist(), texts)]
    configs = _pair_sums(name_of_row, details_of_row, details_ids.size, dur)
    precisions = _pair_sums(name_of_row, view.precision.astype(np.int64), len(PRECISIONS), dur)
    shown = np.zeros(count, dtype=bool)
    shown[configs[0]] = True
    # every launch of a name lasted 0 ns: keep its first launch shape
    first_config = details_of_row[first_row].tolist()
    config_at = _starts(configs[0], count)
    precision_at = _starts(precisions[0], count)
    config_j, config_ns = configs[1].tolist(), configs[2].tolist()
    precision_p, precision_ns = precisions[1].tolist(), precisions[2].tolist()
    rows = zip(names.tolist(), launches.tolist(), total.astype(np.int64).tolist(), mins.tolist(),
               maxs.tolist(), steady_ns.astype(np.int64).tolist(), steady_n.astype(np.int64).tolist(),
               tc_ns.astype(np.int64).tolist(), shown.tolist())
    for k, (name_id, n, ns, lo_ns, hi_ns, s_ns, s_n, tc, any_time) in enumerate(rows):
        name = table.names[name_id]
        a = acc.get(name)
        if a is None:
            a = acc[name] = _Acc()
        a.launches += n
        a.total_ns += ns
        a.min_ns = min(a.min_ns, lo_ns)
        a.max_ns = max(a.max_ns, hi_ns)
        a.steady_ns += s_ns
        a.steady_launches += s_n
        a.devices += 1
        a.tc_ns += tc
        cls = view.classes.get(name_id)
        a.family = cls.family if cls else "other"
        if not any_time:
            a.config_ns.setdefault((device_index, texts[first_config[k]]), 0)
        for i in range(config_at[k], config_at[k + 1]):
            ns_ = config_ns[i]
            j = config_j[i]
            key = (device_index, texts[j])
            a.config_ns[key] = a.config_ns.get(key, 0) + ns_
            occ = occupancy[j]
            if occ is not None:
                a.occ_weighted += occ * ns_
                a.occ_ns += ns_
                a.occ_source = source
        for i in range(precision_at[k], precision_at[k + 1]):
            p = PRECISIONS[precision_p[i]]
            a.precision_ns[p] = a.precision_ns.get(p, 0) + precision_ns[i]


def _pair_sums(first: np.ndarray, second: np.ndarray, width: int,
               weights: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, summed weight as int) for every pair with a non-zero sum, ordered by first then
    second: sparse, so 100,000 names × many launch shapes need no dense names × shapes array."""
    pair = first.astype(np.int64) * width + second
    pairs, inverse = np.unique(pair, return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=weights, minlength=pairs.size)
    keep = sums != 0
    pairs = pairs[keep]
    return pairs // width, pairs % width, sums[keep].astype(np.int64)


def _starts(keys: np.ndarray, count: int) -> List[int]:
    """Where each key 0..count-1 begins in the sorted `keys` (count + 1 bounds)."""
    return np.searchsorted(keys, np.arange(count + 1)).tolist()


def _finish(name: str, a: _Acc, limits: List[Optional[SmLimits]], details_of: Callable[[str], KernelDetails],
            occupancy_of: Callable[..., Optional[Occupancy]]) -> KernelStat:
    (device_index, text), _ = max(a.config_ns.items(), key=lambda kv: (kv[1], kv[0][1]))
    details = details_of(text)
    theoretical, limiter = None, None
    device_limits = limits[device_index]
    threads = details.block[0] * details.block[1] * details.block[2] if details.block else 0
    if device_limits is not None and threads > 0:
        shared = (details.static_shared_bytes or 0) + (details.dynamic_shared_bytes or 0)
        occ = occupancy_of(device_limits, threads, details.registers_per_thread, shared)
        if occ is not None:
            theoretical, limiter = occ.pct, occ.limiter
    if a.occ_ns:
        occupancy, source = a.occ_weighted / a.occ_ns, a.occ_source
    elif theoretical is not None:
        occupancy, source = theoretical, "computed_theoretical"
    else:
        occupancy, source = None, None
    precision = max(a.precision_ns.items(), key=lambda kv: kv[1])[0] if a.precision_ns else "unknown"
    return KernelStat(
        name=name,
        family=a.family,
        launches=a.launches,
        total_ns=a.total_ns,
        min_ns=a.min_ns,
        max_ns=a.max_ns,
        steady_ns=a.steady_ns,
        steady_launches=a.steady_launches,
        devices=a.devices,
        configs=len({t for _, t in a.config_ns}),
        details=details,
        occupancy_pct=occupancy,
        occupancy_source=source,
        theoretical_pct=theoretical,
        limiter=limiter,
        tensor_core_pct=100.0 * a.tc_ns / a.total_ns if a.total_ns else 0.0,
        precision=precision,
    )


def is_matrix_family(family: str) -> bool:
    return family in MATRIX_FAMILIES
