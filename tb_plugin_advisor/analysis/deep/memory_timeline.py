"""Memory over time per allocator: the curve, its exact peak, what was live then, and the headroom left.

From the allocator records (analysis/deep/memory_events.py): bytes in use after each record (the allocator's
own count where recorded, else the running sum of the records' sizes, labelled relative), its peak
with the step and the op active then, the largest allocations still live at that moment (an
allocation is live from its record until a free of the same address), fragmentation (BFC's own
figure, else the share of reserved memory not in use), and the headroom against the device's memory
(device properties) or the allocator's limit (in use + available). The curve is down-sampled to at
most thresholds.MEMORY_TIMELINE_POINTS points by keeping each bucket's lowest and highest point, and
always the peak itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.allocator_names import device_ordinal, holds_host_memory
from tb_plugin_advisor.analysis.classify.enclosing_ops import LineOps, host_ops, op_at
from tb_plugin_advisor.analysis.classify.torch_names import TORCH_ALLOCATING_OPS
from tb_plugin_advisor.analysis.deep.memory_events import (
    MEMORY_EVENT_SIGNS,
    TF_DTYPE_NAMES,
    TORCH_DTYPE_NAMES,
    MemoryRecords,
    memory_records,
)
from tb_plugin_advisor.analysis.intervals import window_index
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.model import Device, Profile


@dataclass
class AllocatorMemory:
    """One allocator's memory over the capture: its peak, when and under which op it came."""

    allocator: str
    kind: str  # device | host
    device: Optional[str]  # plane name of the device, when known
    records: int
    relative: bool  # True: no in-use count recorded; the curve starts at 0 at the first record
    peak_bytes: int
    peak_ns: int
    peak_step: Optional[int]
    peak_op: Optional[str]
    peak_op_source: Optional[str]  # record (the allocation's own op) | host_event (innermost active event)
    allocator_peak_bytes: Optional[int]  # the allocator's own peak stat (may predate the capture)
    reserved_peak_bytes: Optional[int]
    fragmentation_pct: Optional[float]
    fragmentation_source: Optional[str]  # allocator | reserved_not_in_use
    capacity_bytes: Optional[int]
    capacity_source: Optional[str]  # device_properties | allocator_limit
    live: List[Dict[str, Any]]
    live_count: int
    live_bytes: int
    live_by_dtype: Dict[str, int]
    timeline: Dict[str, Any]
    per_step_peak_bytes: List[Optional[int]] = field(default_factory=list)

    @property
    def unrecorded_bytes(self) -> Optional[int]:
        return None if self.relative else max(0, self.peak_bytes - self.live_bytes)

    @property
    def headroom_bytes(self) -> Optional[int]:
        return self.capacity_bytes - self.peak_bytes if self.capacity_bytes else None

    @property
    def headroom_pct(self) -> Optional[float]:
        return 100.0 * self.headroom_bytes / self.capacity_bytes if self.capacity_bytes else None

    def to_json(self, origin_ns: int) -> Dict[str, Any]:
        return {
            "allocator": self.allocator,
            "kind": self.kind,
            "device": self.device,
            "records": self.records,
            "relative": self.relative,
            "peak_bytes": self.peak_bytes,
            "peak_ms": round((self.peak_ns - origin_ns) / 1e6, 4),
            "peak_step": self.peak_step,
            "peak_op": self.peak_op,
            "peak_op_source": self.peak_op_source,
            "allocator_peak_bytes": self.allocator_peak_bytes,
            "reserved_peak_bytes": self.reserved_peak_bytes,
            "fragmentation_pct": _r(self.fragmentation_pct, 2),
            "fragmentation_source": self.fragmentation_source,
            "capacity_bytes": self.capacity_bytes,
            "capacity_source": self.capacity_source,
            "headroom_bytes": self.headroom_bytes,
            "headroom_pct": _r(self.headroom_pct, 2),
            "live_at_peak": [_live_json(x, origin_ns) for x in self.live],
            "live_at_peak_count": self.live_count,
            "live_at_peak_bytes": self.live_bytes,
            "live_at_peak_by_dtype": dict(self.live_by_dtype),
            # in use at the peak but allocated before the capture began (no record of it)
            "live_at_peak_unrecorded_bytes": self.unrecorded_bytes,
            "per_step_peak_bytes": list(self.per_step_peak_bytes),
            "timeline": {
                "t_ms": [round((t - origin_ns) / 1e6, 4) for t in self.timeline["t_ns"]],
                "in_use_bytes": self.timeline["in_use"],
                "reserved_bytes": self.timeline["reserved"],
                "points": len(self.timeline["t_ns"]),
                "downsampled": self.timeline["downsampled"],
            },
        }


def _live_json(entry: Dict[str, Any], origin_ns: int) -> Dict[str, Any]:
    out = {k: v for k, v in entry.items() if k != "allocated_ns"}
    out["allocated_ms"] = round((entry["allocated_ns"] - origin_ns) / 1e6, 4)
    return out


@dataclass
class MemoryTimeline:
    """Every allocator's memory of one host, device allocators first."""

    allocators: List[AllocatorMemory]  # device allocators by peak, then host ones
    origin_ns: int  # times in JSON are ms after this (the first step's start, as steps.per_step)

    @property
    def main(self) -> Optional[AllocatorMemory]:
        """The allocator the run is judged by: the largest device allocator, else the largest host one."""
        return self.allocators[0] if self.allocators else None

    def to_json(self) -> Dict[str, Any]:
        main = self.main
        return {
            "allocators": [a.to_json(self.origin_ns) for a in self.allocators],
            "main_allocator": main.allocator if main else None,
            "peak_bytes": main.peak_bytes if main else None,
        }


def memory_timeline(profile: Profile, steps: Optional[Steps] = None) -> MemoryTimeline:
    records = memory_records(profile)
    origin = _origin(steps, records)
    out = [_allocator(r, profile, steps) for r in records if len(r)]
    out.sort(key=lambda a: (a.kind != "device", -a.peak_bytes, a.allocator))
    result = MemoryTimeline(out, origin)
    return result


# Allocations are recorded on the host, when an op is issued: they are placed in the host's ranges
# of the steps (on a GPU run the steps' own windows are on the device's clock).


def _origin(steps: Optional[Steps], records: List[MemoryRecords]) -> int:
    if steps is not None and steps.count:
        return int(steps.host_start_ns.min())
    firsts = [int(r.time_ns[0]) for r in records if len(r)]
    return min(firsts) if firsts else 0


def _device_of(allocator: str, profile: Profile) -> Tuple[str, Optional[Device]]:
    if holds_host_memory(allocator):
        return "host", None
    ordinal = device_ordinal(allocator)
    accelerators = [d for d in profile.devices if d.kind in ("gpu", "tpu", "device")]
    if ordinal is not None:
        found = next((d for d in accelerators if d.ordinal == ordinal), None)
        return "device", found
    return "device", accelerators[0] if len(accelerators) == 1 else None


def _allocator(r: MemoryRecords, profile: Profile, steps: Optional[Steps]) -> AllocatorMemory:
    recorded = ~np.isnan(r.in_use)
    relative = not recorded.any()
    if relative:
        in_use = np.cumsum(r.delta).astype(np.float64)
    else:  # carry the last recorded count over records without one
        filled = np.where(recorded, r.in_use, np.nan)
        index = np.where(recorded, np.arange(len(r)), 0)
        np.maximum.accumulate(index, out=index)
        in_use = np.where(recorded[index], filled[index], 0.0)
    peak_i = int(np.argmax(in_use))
    peak_ns = int(r.time_ns[peak_i])
    kind, device = _device_of(r.allocator, profile)
    live, live_count, live_bytes, by_dtype = _live_at(r, peak_i)
    op, op_source = _op_at(r, peak_i, profile, peak_ns)
    if profile.framework == "pytorch":  # the op a model's code called, not only the aten::empty inside it
        lines = host_ops(profile)
        _attribute_torch_allocations(live, lines)
        found = op_at(lines, peak_ns) if op_source != "record" else None
        if found is not None:
            op, op_source = _torch_op_label(found[0], found[1]), "host_event"
    fragmentation, frag_source = _fragmentation(r, peak_i, float(in_use[peak_i]))
    capacity, capacity_source = _capacity(r, peak_i, device)
    return AllocatorMemory(
        allocator=r.allocator,
        kind=kind,
        device=device.name if device else None,
        records=len(r),
        relative=relative,
        peak_bytes=int(in_use[peak_i]),
        peak_ns=peak_ns,
        peak_step=_step_at(steps, peak_ns),
        peak_op=op,
        peak_op_source=op_source,
        allocator_peak_bytes=_max_or_none(r.allocator_peak),
        reserved_peak_bytes=_max_or_none(r.reserved),
        fragmentation_pct=fragmentation,
        fragmentation_source=frag_source,
        capacity_bytes=capacity,
        capacity_source=capacity_source,
        live=live,
        live_count=live_count,
        live_bytes=live_bytes,
        live_by_dtype=by_dtype,
        timeline=_downsample(r.time_ns, in_use, r.reserved, peak_i, th.MEMORY_TIMELINE_POINTS),
        per_step_peak_bytes=_per_step_peaks(steps, r.time_ns, in_use),
    )


def _max_or_none(values: np.ndarray) -> Optional[int]:
    known = values[~np.isnan(values)]
    return int(known.max()) if known.size and known.max() > 0 else None


def _live_at(r: MemoryRecords, peak_i: int) -> Tuple[List[Dict[str, Any]], int, int, Dict[str, int]]:
    """Allocations made up to the peak whose address was not freed by then, largest first."""
    upto = slice(0, peak_i + 1)
    address = r.address[upto]
    delta = r.delta[upto]
    if not (address >= 0).any():
        return [], 0, 0, {}
    # the last record of each address up to the peak decides: an allocation is still live
    reversed_first = np.unique(address[::-1], return_index=True)[1]
    last = (address.size - 1) - reversed_first
    live_rows = np.sort(last[(delta[last] > 0) & (address[last] >= 0)])
    sizes = delta[live_rows]
    by_dtype: Dict[str, int] = {}
    for row, size in zip(live_rows.tolist(), sizes.tolist()):
        name = _dtype_name(int(r.data_type[row]))
        by_dtype[name] = by_dtype.get(name, 0) + int(size)
    top = live_rows[np.argsort(-sizes, kind="stable")][: th.MEMORY_TOP_LIVE]
    live = [
        {
            "bytes": int(r.delta[i]),
            "requested_bytes": None if np.isnan(r.requested[i]) else int(r.requested[i]),
            "op": r.text["op"][i],
            "shape": r.text["shape"][i],
            "dtype": _dtype_name(int(r.data_type[i])) if r.data_type[i] >= 0 else None,
            "region": r.text["region"][i],
            "allocated_ns": int(r.time_ns[i]),
        }
        for i in top.tolist()
    ]
    return live, int(live_rows.size), int(sizes.sum()), dict(sorted(by_dtype.items(), key=lambda kv: -kv[1]))


_SIZES = re.compile(r"^\[\s*\d+(?:\s*,\s*\d+)*\s*\]$")


def _attribute_torch_allocations(live: List[Dict[str, Any]], lines: List[LineOps]) -> None:
    """Kineto's allocator records name no op: each live allocation gets the outermost op running on
    the host when it was made, and the shape and dtype `aten::empty` was given where it made it."""
    for row in live:
        if row["op"] is not None:
            continue
        found = op_at(lines, row["allocated_ns"])
        if found is None:
            continue
        outer, inner, concrete = found
        row["op"] = _torch_op_label(outer, inner)
        if inner in TORCH_ALLOCATING_OPS and concrete:
            parts = [p.strip() for p in _split_top_level(concrete)]
            if parts and _SIZES.match(parts[0]):
                row["shape"] = parts[0].replace(" ", "")
            if len(parts) > 1 and parts[1].isdigit() and row["dtype"] is None:
                row["dtype"] = TORCH_DTYPE_NAMES.get(int(parts[1]))


def _torch_op_label(outer: str, inner: str) -> str:
    """The outermost op, with the innermost beside it when that one says more than "allocate"."""
    return outer if outer == inner or inner in TORCH_ALLOCATING_OPS else f"{outer} › {inner}"


def _split_top_level(text: str) -> List[str]:
    """`Concrete Inputs` as Kineto writes it (a JSON list of strings, each already text) → items."""
    try:
        items = json.loads(text)
    except ValueError:
        return []
    return [str(item) for item in items] if isinstance(items, list) else []


def _dtype_name(code: int) -> str:
    return TF_DTYPE_NAMES.get(code, f"type {code}") if code > 0 else "unknown"


def _op_at(r: MemoryRecords, peak_i: int, profile: Profile, t: int) -> Tuple[Optional[str], Optional[str]]:
    op = r.text["op"][peak_i]
    if op:
        return op, "record"
    best: Optional[Tuple[int, str]] = None
    for plane in profile.host_planes:
        skip = np.array([n in MEMORY_EVENT_SIGNS for n in plane.event_names] + [True])
        for line in plane.lines:
            if len(line) == 0:
                continue
            i = int(np.searchsorted(line.start_ns, t, side="right"))
            candidates = np.arange(max(0, i - 64), i)  # nested events: the enclosing ones start just before
            if candidates.size == 0:
                continue
            ends = line.start_ns[candidates] + line.duration_ns[candidates]
            inside = candidates[(ends > t) & ~skip[line.metadata_index[candidates]]]
            for k in inside.tolist():
                dur = int(line.duration_ns[k])
                if best is None or dur < best[0]:
                    best = (dur, line.name_of(k))
    return (best[1], "host_event") if best else (None, None)


def _fragmentation(r: MemoryRecords, i: int, in_use: float) -> Tuple[Optional[float], Optional[str]]:
    if not np.isnan(r.fragmentation[i]):
        return 100.0 * float(r.fragmentation[i]), "allocator"
    reserved = r.reserved[i]
    if not np.isnan(reserved) and reserved > 0:
        return 100.0 * max(0.0, 1.0 - in_use / float(reserved)), "reserved_not_in_use"
    return None, None


def _capacity(r: MemoryRecords, i: int, device: Optional[Device]) -> Tuple[Optional[int], Optional[str]]:
    if device is not None and device.memory_bytes:
        return int(device.memory_bytes), "device_properties"
    available = r.available[i]
    if not np.isnan(available) and not np.isnan(r.in_use[i]) and available + r.in_use[i] > 0:
        return int(available + r.in_use[i]), "allocator_limit"
    return None, None


def _step_at(steps: Optional[Steps], t: int) -> Optional[int]:
    if steps is None or steps.count == 0:
        return None
    order = np.argsort(steps.host_start_ns, kind="stable")
    w = int(window_index(steps.host_start_ns[order], steps.host_end_ns[order], np.array([t]))[0])
    if w < 0:
        return None
    number = steps.numbers[int(order[w])]
    return int(number) if number is not None else int(order[w])


def _per_step_peaks(steps: Optional[Steps], t: np.ndarray, in_use: np.ndarray) -> List[Optional[int]]:
    if steps is None or steps.count == 0:
        return []
    peaks: List[Optional[int]] = []
    for lo, hi in zip(steps.host_start_ns.tolist(), steps.host_end_ns.tolist()):
        a, b = np.searchsorted(t, lo, side="left"), np.searchsorted(t, hi, side="right")
        peaks.append(int(in_use[a:b].max()) if b > a else None)
    return peaks


def _downsample(t: np.ndarray, in_use: np.ndarray, reserved: np.ndarray, peak_i: int, limit: int
                ) -> Dict[str, Any]:
    n = int(t.size)
    if n <= limit:
        keep = np.arange(n)
    else:
        buckets = (limit - 1) // 2
        edges = np.linspace(0, n, buckets + 1).astype(np.int64)
        chosen = [peak_i]
        for a, b in zip(edges[:-1].tolist(), edges[1:].tolist()):
            if b > a:
                part = in_use[a:b]
                chosen += [a + int(np.argmin(part)), a + int(np.argmax(part))]
        keep = np.unique(np.array(chosen, dtype=np.int64))
    has_reserved = not np.isnan(reserved).all()
    return {
        "t_ns": t[keep].tolist(),
        "in_use": [int(v) for v in in_use[keep].tolist()],
        "reserved": [None if v != v else int(v) for v in reserved[keep].tolist()] if has_reserved else None,
        "downsampled": n > limit,
    }


