"""Per-line accumulation of Kineto events into the model's columns, with the nesting repair.

Events arrive in file order; each line collects starts, durations, interned names and the kept
`args` (tables.ARG_STATS), then sorts once, clips partial overlaps so events nest, and builds sparse
stat columns. Kernels and copies also get the `kernel_details` / `memcpy_details` text stats that
readers/devices.py parses for XSpace, so device tables come out the same for both formats.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import msgspec
import numpy as np

from tb_plugin_advisor.model import Line, Plane, StatColumn, StringTable
from tb_plugin_advisor.readers import kineto_tables as tables

_ENCODE = msgspec.json.encode


class LineBuilder:
    """One timeline line under construction."""

    __slots__ = ("names", "strings", "starts", "durations", "name_ids", "stats")

    def __init__(self, names: Dict[str, int], strings: StringTable):
        self.names = names  # shared by every line of the plane
        self.strings = strings
        self.starts: List[int] = []
        self.durations: List[int] = []
        self.name_ids: List[int] = []
        self.stats: Dict[str, Tuple[List[int], List[Any]]] = {}

    def add(self, name: str, start_ns: int, duration_ns: int, args: Dict[str, Any], role: str = tables.HOST
            ) -> None:
        index = len(self.starts)
        name_id = self.names.get(name)
        if name_id is None:
            name_id = self.names[name] = len(self.names)
        self.starts.append(start_ns)
        self.durations.append(duration_ns)
        self.name_ids.append(name_id)
        if not args:
            return
        kept = tables.ARG_STATS
        for key, value in args.items():
            stat = kept.get(key)
            if stat is not None and value is not None:
                self._put(stat, index, value)
        if role == tables.KERNEL:
            self._put("kernel_details", index, _kernel_details(args))
        elif role == tables.MEMCPY:
            size = args.get("bytes")
            self._put("memcpy_details", index, f"size:{size if isinstance(size, int) else -1}")

    def _put(self, stat: str, index: int, value: Any) -> None:
        entry = self.stats.get(stat)
        if entry is None:
            entry = self.stats[stat] = ([], [])
        if entry[0] and entry[0][-1] == index:  # two arg spellings of one stat on one event
            return
        entry[0].append(index)
        entry[1].append(value)

    def build(self, line_id: int, name: str, display_name: str, plane: Plane) -> Tuple[Line, int]:
        """The finished Line (sorted, nested) and how many events were clipped to nest."""
        starts = np.array(self.starts, dtype=np.int64)
        durations = np.array(self.durations, dtype=np.int64)
        order = np.lexsort((-durations, starts))
        starts = starts[order]
        durations = durations[order]
        repaired = _nest(starts, durations)
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        columns: Dict[str, StatColumn] = {}
        for stat, (indices, values) in self.stats.items():
            where = rank[np.array(indices, dtype=np.int64)]
            columns[stat] = _column(where, values, starts.size, self.strings)
        line = Line(
            id=line_id,
            name=name,
            display_name=display_name,
            plane=plane,
            start_ns=starts,
            duration_ns=durations,
            metadata_index=np.array(self.name_ids, dtype=np.int32)[order],
            stats=columns,
        )
        return line, repaired


def _nest(starts: np.ndarray, durations: np.ndarray) -> int:
    """Clip every event that outlives the event enclosing its start; returns how many were clipped.

    Sorted by start then longest first, so a parent precedes its children. Deterministic: the same
    file always gives the same lines.
    """
    ends = starts + durations
    repaired = 0
    stack: List[int] = []
    start_list = starts.tolist()
    end_list = ends.tolist()
    for i, start in enumerate(start_list):
        end = end_list[i]
        while stack and stack[-1] <= start:
            stack.pop()
        if stack and end > stack[-1]:
            end = stack[-1]
            durations[i] = end - start
            repaired += 1
        stack.append(end)
    return repaired


def _column(indices: np.ndarray, values: List[Any], count: int, strings: StringTable) -> StatColumn:
    order = np.argsort(indices, kind="stable")
    indices = indices[order]
    ordered = [values[i] for i in order.tolist()]
    kinds = {type(v) for v in ordered}
    if kinds <= {int, bool}:
        return StatColumn("int", indices, np.array(ordered, dtype=np.int64), count)
    if kinds <= {int, bool, float}:
        return StatColumn("float", indices, np.array(ordered, dtype=np.float64), count)
    ids = [strings.intern(v) if isinstance(v, str) else strings.intern(_text(v)) for v in ordered]
    return StatColumn("str", indices, np.array(ids, dtype=np.int32), count)


def _text(value: Any) -> str:
    if isinstance(value, (list, dict)):
        return _ENCODE(value).decode()
    return str(value)


def _dim3(value: Any) -> Optional[str]:
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        return ",".join(str(v) for v in (value + [1, 1, 1])[:3])
    return None


def _kernel_details(args: Dict[str, Any]) -> str:
    """Kineto's kernel args in the `kernel_details` text CUPTI writes into XSpace."""
    parts = []
    registers = args.get("registers per thread")
    if isinstance(registers, int):
        parts.append(f"regs:{registers}")
    shared = args.get("shared memory")
    if isinstance(shared, int):
        parts.append(f"static_shared:{shared} dynamic_shared:0")
    for key in ("grid", "block"):
        dims = _dim3(args.get(key))
        if dims:
            parts.append(f"{key}:{dims}")
    occupancy = args.get("est. achieved occupancy %")
    if isinstance(occupancy, (int, float)):
        parts.append(f"occ_pct:{occupancy}")
    return " ".join(parts)


def device_plane_stats(properties: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Kineto `deviceProperties` → the plane stats readers/devices.py reads for XSpace GPUs."""
    if not properties:
        return {}
    stats: Dict[str, Any] = {}
    name = properties.get("name")
    if isinstance(name, str):
        stats["gpu_device_name"] = name
    for key, stat in (("computeMajor", "compute_cap_major"), ("computeMinor", "compute_cap_minor"),
                      ("numSms", "core_count"), ("totalGlobalMem", "memory_size"),
                      ("warpSize", "warp_size"), ("maxThreadsPerMultiprocessor", "max_threads_per_sm"),
                      ("regsPerMultiprocessor", "registers_per_sm"),
                      ("sharedMemPerMultiprocessor", "shared_memory_per_sm")):
        value = properties.get(key)
        if isinstance(value, (int, float)):
            stats[stat] = value
    text = (name or "").upper() if isinstance(name, str) else ""
    amd_name = any(word in text for word in ("AMD", "RADEON", "INSTINCT"))
    if properties.get("vendor") == "AMD" or properties.get("warpSize") == 64 or amd_name:
        stats["device_vendor"] = "AMD"
    elif "compute_cap_major" in stats:
        stats["device_vendor"] = "Nvidia"
    return stats
