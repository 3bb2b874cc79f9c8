"""Collectives: time per step by type, how much of it compute hides, message sizes and bandwidth, and skew.

A collective is a device kernel/op of the `comm` family (analysis/classify/patterns.py: NCCL/RCCL kernels, XLA
all-reduce … ops). Per device, the part of collective time during which no compute kernel runs on any
stream of that device is *exposed* (it lengthens the step); the rest is *hidden* (intervals.py).
Message sizes come from the profile where it records them: Kineto keeps PyTorch's collective args
(`In msg nelems`, `Out msg nelems`, `Group size`, `dtype`), which the reader is asked to keep as the
stats named in SIZE_STATS; XLA op events may carry `bytes_accessed`. Bandwidth is then reported as
NCCL's algorithm bandwidth (bytes / time) and bus bandwidth (× the collective's factor, nccl-tests'
definition), so it compares with the link's speed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import intervals as iv
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.event_names import collective_type
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.analysis.classify.patterns import FAMILIES
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.lookup import unique_codes
from tb_plugin_advisor.model import Device, Profile

# nccl-tests' bus bandwidth factor for n ranks: busbw = algbw × factor(n).
BUS_FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}

# Stats holding message sizes, in the order tried: element counts (× the dtype's size) or bytes.
SIZE_STATS = {"elements": ("in_msg_nelems", "out_msg_nelems"), "bytes": ("message_bytes", "bytes_accessed")}
GROUP_SIZE_STATS = ("group_size",)
DTYPE_STAT = "dtype"
DTYPE_BYTES = {
    "float": 4, "float32": 4, "f32": 4, "double": 8, "float64": 8, "half": 2, "float16": 2, "f16": 2,
    "bfloat16": 2, "bf16": 2, "int": 4, "int32": 4, "long": 8, "int64": 8, "int8": 1, "uint8": 1, "char": 1,
    "byte": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
}


@dataclass
class TypeStats:
    """One kind of collective (all-reduce, all-gather, …): its calls, time, exposed time and bytes."""

    kind: str
    calls: int = 0
    total_ns: int = 0
    exposed_ns: int = 0
    steady_ns: int = 0
    steady_exposed_ns: int = 0
    steady_calls: int = 0
    sized_calls: int = 0
    bytes: int = 0
    sized_ns: int = 0
    group_size: Optional[int] = None

    @property
    def algbw_gbps(self) -> Optional[float]:
        """NCCL's algorithm bandwidth over the calls whose message size is known: bytes / time."""
        return self.bytes / (self.sized_ns / 1e9) / 1e9 if self.sized_ns else None

    @property
    def busbw_gbps(self) -> Optional[float]:
        """The bus bandwidth: the algorithm bandwidth × the collective's factor for its group size
        (nccl-tests' definition), so it compares with the link's speed."""
        algbw = self.algbw_gbps
        factor = BUS_FACTORS.get(self.kind)
        return algbw * factor(self.group_size) if algbw is not None and factor and self.group_size else None

    @property
    def mean_message_bytes(self) -> Optional[int]:
        return int(self.bytes / self.sized_calls) if self.sized_calls else None


@dataclass
class DeviceComm:
    """One device's collective time, and how much of it no compute kernel overlaps."""

    device: str
    total_ns: int
    exposed_ns: int
    compute_ns: int  # union of compute kernels
    steady_ns: int
    steady_exposed_ns: int
    steady_compute_ns: int


@dataclass
class Collectives:
    """The collectives of one host: per kind and per device."""

    types: Dict[str, TypeStats]
    devices: List[DeviceComm]
    steps: int
    step_ms: Optional[float]  # mean steady step time
    # collective kernel name → when each call ended (ns, sorted, the last CLOCK_OFFSET_ENDS_KEPT):
    # ranks leave a collective together, so these ends place one host's clock against another's
    # (report/combine.py)
    ends_ns: Dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def total_ns(self) -> int:
        return sum(d.total_ns for d in self.devices)  # per device: overlapping types count once

    @property
    def exposed_ns(self) -> int:
        return sum(d.exposed_ns for d in self.devices)

    @property
    def steady_ns(self) -> int:
        return sum(d.steady_ns for d in self.devices)

    @property
    def steady_exposed_ns(self) -> int:
        return sum(d.steady_exposed_ns for d in self.devices)

    def per_step(self, ns: int) -> Optional[float]:
        """ms per step and per device (devices that run collectives)."""
        n_dev = max(1, sum(1 for d in self.devices if d.total_ns))
        return ns / 1e6 / self.steps / n_dev if self.steps else None

    def calls_per_step(self, t: TypeStats) -> Optional[float]:
        """Calls of a type per step and per device (devices that run collectives)."""
        n_dev = max(1, sum(1 for d in self.devices if d.total_ns))
        return t.steady_calls / self.steps / n_dev if self.steps else None

    def exposed_step_pct(self) -> Optional[float]:
        """The share of the mean steady step that exposed collective time takes."""
        exposed_per_step = self.per_step(self.steady_exposed_ns)
        if exposed_per_step is None or not self.step_ms:
            return None
        return 100.0 * exposed_per_step / self.step_ms

    def to_json(self) -> Dict[str, Any]:
        total, exposed = self.total_ns, self.exposed_ns
        return {
            "calls": sum(t.calls for t in self.types.values()),
            "total_ms": _r(total / 1e6),
            "exposed_ms": _r(exposed / 1e6),
            "hidden_pct": _r(100.0 * (total - exposed) / total, 2) if total else None,
            "steps": self.steps,
            "devices_with_collectives": sum(1 for d in self.devices if d.total_ns),
            "per_step_ms": _r(self.per_step(self.steady_ns)),
            "exposed_per_step_ms": _r(self.per_step(self.steady_exposed_ns)),
            "exposed_step_pct": _r(self.exposed_step_pct(), 2),
            "types": [self._type_json(t) for t in sorted(self.types.values(), key=lambda t: -t.total_ns)],
            "per_device": [self.device_json(d) for d in self.devices],
            "skew": device_skew(self.devices, self.steps),
        }

    def device_json(self, d: DeviceComm) -> Dict[str, Any]:
        """One device's row as this host writes it (per this host's steady steps)."""
        steps = self.steps
        return {"device": d.device, "total_ms": _r(d.total_ns / 1e6), "exposed_ms": _r(d.exposed_ns / 1e6),
                "per_step_ms": _r(d.steady_ns / 1e6 / steps if steps else None),
                "exposed_per_step_ms": _r(d.steady_exposed_ns / 1e6 / steps if steps else None),
                "compute_per_step_ms": _r(d.steady_compute_ns / 1e6 / steps if steps else None)}

    def _type_json(self, t: TypeStats) -> Dict[str, Any]:
        return {
            "type": t.kind,
            "calls": t.calls,
            "total_ms": _r(t.total_ns / 1e6),
            "exposed_ms": _r(t.exposed_ns / 1e6),
            "hidden_pct": _r(100.0 * (t.total_ns - t.exposed_ns) / t.total_ns, 2) if t.total_ns else None,
            "per_step_ms": _r(self.per_step(t.steady_ns)),
            "exposed_per_step_ms": _r(self.per_step(t.steady_exposed_ns)),
            "calls_per_step": _r(self.calls_per_step(t), 3),
            "sized_calls": t.sized_calls,
            "mean_message_bytes": t.mean_message_bytes,
            "group_size": t.group_size,
            "algbw_gbps": _r(t.algbw_gbps, 3),
            "busbw_gbps": _r(t.busbw_gbps, 3),
        }


def device_skew(devices: List[DeviceComm], steps: int) -> Optional[Dict[str, Any]]:
    """Across devices (ranks): who computes longest (the straggler the others wait for in collectives)."""
    ranked = [d for d in devices if d.total_ns]
    if len(ranked) < 2 or not steps:
        return None
    return skew_of([device_rank(d, steps) for d in ranked])


def device_rank(d: DeviceComm, steps: int) -> Tuple[str, float, float]:
    """A device as one rank of the skew: (its name, compute ms per step, collective ms per step)."""
    return d.device, d.steady_compute_ns / 1e6 / steps, d.steady_ns / 1e6 / steps


def skew_of(ranks: List[Tuple[str, float, float]]) -> Optional[Dict[str, Any]]:
    """ranks: (name, compute ms per step, collective ms per step). The straggler computes longest; the
    others spend the difference waiting inside their collectives."""
    if len(ranks) < 2:
        return None
    compute = np.array([c for _, c, _ in ranks])
    comm = np.array([x for _, _, x in ranks])
    median = float(np.median(compute))
    slowest = int(np.argmax(compute))
    return {
        "ranks": len(ranks),
        "slowest": ranks[slowest][0],
        "slowest_compute_per_step_ms": _r(compute[slowest]),
        "median_compute_per_step_ms": _r(median),
        "compute_skew_pct": _r(100.0 * (compute[slowest] - median) / median, 2) if median > 0 else None,
        "collective_spread_per_step_ms": _r(float(comm.max() - comm.min())),
    }


# ---------------------------------------------------------------------------------------------------


def _steady_windows(steps: Optional[Steps]) -> Tuple[np.ndarray, np.ndarray, int, Optional[float]]:
    if steps is None or steps.count == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0, None
    lo, hi = steps.start_ns[steps.steady], steps.end_ns[steps.steady]
    order = np.argsort(lo, kind="stable")
    mean = float((hi - lo).mean() / 1e6) if lo.size else None
    return lo[order], hi[order], int(lo.size), mean


def analyze_collectives(profile: Profile, steps: Optional[Steps] = None) -> Collectives:
    lo, hi, n_steps, step_ms = _steady_windows(steps)
    types: Dict[str, TypeStats] = {}
    devices: List[DeviceComm] = []
    ends: Dict[str, List[np.ndarray]] = {}
    for device in profile.devices:
        if len(device.kernels) == 0:
            continue
        found = _device(device, lo, hi, types, ends)
        if found is not None:
            devices.append(found)
    kept = {name: np.sort(np.concatenate(parts))[-th.CLOCK_OFFSET_ENDS_KEPT:] for name, parts in ends.items()}
    return Collectives(types=types, devices=devices, steps=n_steps, step_ms=step_ms, ends_ns=kept)


def _device(device: Device, lo: np.ndarray, hi: np.ndarray, types: Dict[str, TypeStats],
            ends: Dict[str, List[np.ndarray]]) -> Optional[DeviceComm]:
    table = device.kernels
    view = kernel_view(device)
    comm = view.family == FAMILIES.index("comm")
    if not comm.any():
        return None
    start, end = table.start_ns, table.start_ns + table.duration_ns
    compute = iv.union(start[view.compute], end[view.compute])
    kind_of_name = {i: collective_type(table.names[i]) for i in unique_codes(table.name_index[comm]).tolist()}
    for i in kind_of_name:
        rows = comm & (table.name_index == i)
        ends.setdefault(table.names[i], []).append((start[rows] + table.duration_ns[rows]).astype(np.int64))
    kind_list = sorted(set(kind_of_name.values()))
    kind_of_code = np.full(len(table.names) + 1, -1, dtype=np.int16)  # per name code (-1: not comm)
    for i, kind in kind_of_name.items():
        kind_of_code[i] = kind_list.index(kind)
    kinds = kind_of_code[table.name_index]
    sizes, group = _message_sizes(device, np.nonzero(comm)[0])
    all_comm = iv.union(start[comm], end[comm])
    total_ns = iv.total(all_comm)
    exposed_all = total_ns - iv.total(iv.intersect(all_comm, compute))  # not under any compute kernel
    windows = lo.size > 0
    steady_all = int(iv.covered(all_comm, lo, hi).sum()) if windows else 0
    hidden_all = iv.intersect(all_comm, compute)
    steady_exposed_all = steady_all - int(iv.covered(hidden_all, lo, hi).sum()) if windows else 0
    steady_compute = int(iv.covered(compute, lo, hi).sum()) if windows else 0
    for code, kind in enumerate(kind_list):
        rows = np.nonzero(comm & (kinds == code))[0]
        merged = iv.union(start[rows], end[rows])
        hidden = iv.intersect(merged, compute)
        t = types.setdefault(kind, TypeStats(kind))
        t.calls += int(rows.size)
        t.total_ns += iv.total(merged)
        t.exposed_ns += iv.total(merged) - iv.total(hidden)
        if windows:
            inside = iv.in_windows(lo, hi, start[rows])
            t.steady_calls += int(inside.sum())
            t.steady_ns += int(iv.covered(merged, lo, hi).sum())
            t.steady_exposed_ns += int(iv.covered(merged, lo, hi).sum() - iv.covered(hidden, lo, hi).sum())
        known = sizes[rows] >= 0
        t.sized_calls += int(known.sum())
        t.bytes += int(sizes[rows][known].sum())
        t.sized_ns += int(table.duration_ns[rows][known].sum())
        if group is not None:
            t.group_size = group
    return DeviceComm(device.name, total_ns, exposed_all, iv.total(compute), steady_all, steady_exposed_all,
                      steady_compute)


def _message_sizes(device: Device, rows: np.ndarray) -> Tuple[np.ndarray, Optional[int]]:
    """Bytes per collective row (-1 unknown) and the group size when recorded (the first one, by line
    and then by time). Read as columns at the rows' events: one Python call per row was seconds for
    a multi-GPU profile's hundreds of thousands of collectives."""
    table = device.kernels
    sizes = np.full(len(table), -1, dtype=np.int64)
    group: Optional[int] = None
    for line_index in unique_codes(table.line_index[rows]).tolist():
        line = device.plane.lines[int(line_index)]
        sel = rows[table.line_index[rows] == line_index]
        pos = np.clip(np.searchsorted(line.start_ns, table.start_ns[sel]), 0, max(len(line) - 1, 0))
        sizes[sel] = _sizes_at(line, pos)
        if group is None:
            group = _group_size_at(line, pos)
    return sizes, group


# Element counts past this are no message a profiler saw (and times 8 bytes would not fit int64).
MAX_ELEMENTS = 1 << 56


def _numbers_at(line, stat: str, events: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(values, usable) of a numeric stat at the events: usable where present and not negative."""
    column = line.stats.get(stat)
    if column is None or column.kind == "str":
        return np.zeros(events.size), np.zeros(events.size, dtype=bool)
    values, present = column.at(events)
    return values, present & (values >= 0)


def _sizes_at(line, events: np.ndarray) -> np.ndarray:
    """Message bytes at each event (-1 unknown): the first element count of SIZE_STATS times the
    `dtype` stat's width where both are known, else the first byte count."""
    out = np.full(events.size, -1, dtype=np.int64)
    undecided = np.ones(events.size, dtype=bool)
    width = _dtype_widths(line, events)
    for stat in SIZE_STATS["elements"]:
        count, usable = _numbers_at(line, stat, events)
        take = undecided & usable & (width > 0) & (count < MAX_ELEMENTS)
        out[take] = count[take].astype(np.int64) * width[take]
        undecided &= ~take
    for stat in SIZE_STATS["bytes"]:
        value, usable = _numbers_at(line, stat, events)
        take = undecided & usable
        out[take] = value[take].astype(np.int64)
        undecided &= ~take
    return out


def _dtype_widths(line, events: np.ndarray) -> np.ndarray:
    """Bytes per element at each event from its `dtype` stat (0: none, or not a known type)."""
    column = line.stats.get(DTYPE_STAT)
    if column is None or column.kind != "str":
        return np.zeros(events.size, dtype=np.int64)
    ids, present = column.at(events)
    ids = np.where(present, ids, 0)
    strings = line.plane.strings
    width_of = np.zeros(int(ids.max(initial=0)) + 1, dtype=np.int64)  # per string id
    for i in unique_codes(ids[present]).tolist():
        width_of[i] = DTYPE_BYTES.get(strings[i].lower().replace("c10::", ""), 0)
    return np.where(present, width_of[ids], 0)


def _group_size_at(line, events: np.ndarray) -> Optional[int]:
    """The first positive GROUP_SIZE_STATS value over the events, in their order."""
    found = [_numbers_at(line, stat, events) for stat in GROUP_SIZE_STATS]
    found = [(values, usable & (values > 0)) for values, usable in found]
    anywhere = np.zeros(events.size, dtype=bool)
    for _, usable in found:
        anywhere |= usable
    if not anywhere.any():
        return None
    first = int(np.argmax(anywhere))
    return next(int(values[first]) for values, usable in found if usable[first])
