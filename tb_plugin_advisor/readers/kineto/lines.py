"""Per-line accumulation of Kineto events into the model's columns, with the nesting repair.

Events arrive in file order; each line collects starts, durations, interned names and the kept
`args` (tables.ARG_STATS), then sorts once, clips partial overlaps so events nest, and builds sparse
stat columns. Kernels and copies also get the `kernel_details` / `memcpy_details` text stats that
readers/devices.py parses for XSpace, so device tables come out the same for both formats.
"""

from __future__ import annotations

from array import array
from typing import Any, Dict, List, Optional, Tuple

import msgspec
import numpy as np

from tb_plugin_advisor.model import Line, Plane, StatColumn, StringTable, compact_ints
from tb_plugin_advisor.readers.kineto import tables

_ENCODE = msgspec.json.encode


class _StatValues:
    """One stat's values on one line, in a typed array (8 bytes a value, no object per value).

    Starts as int, becomes float when a float arrives and text (ids into the plane's strings) when
    anything else does — Kineto writes the same arg with one type, so promotion is rare. A number out
    of range (tables.LARGEST_ARG_MAGNITUDE, NaN, inf) raises OverflowError before anything is stored.
    """

    __slots__ = ("indices", "kind", "data")

    def __init__(self) -> None:
        self.indices = array("q")
        self.kind = ""
        self.data: array = array("q")

    def put(self, index: int, value: Any, strings: StringTable) -> None:
        if self.indices and self.indices[-1] == index:  # two arg spellings of one stat on one event
            return
        kind = self.kind
        if kind == "":
            kind = self.kind = _kind_of(value)
            self.data = array("d" if kind == "float" else "q")
        if kind == "int":
            if type(value) is int or type(value) is bool:
                self.data.append(value)
                self.indices.append(index)
                return
            self._promote(_kind_of(value), strings)
            kind = self.kind
        if kind == "float" and type(value) in (int, float, bool):
            if not -_LARGEST < value < _LARGEST:
                raise OverflowError(f"{value!r} is out of range")
            self.data.append(value)
        elif kind == "float":
            self._promote("str", strings)
            self.data.append(strings.intern(_text(value)))
        else:
            self.data.append(strings.intern(value if type(value) is str else _text(value)))
        self.indices.append(index)

    def _promote(self, kind: str, strings: StringTable) -> None:
        if kind == "float":
            self.data = array("d", self.data)
            self.kind = "float"
        else:
            self.data = array("q", [strings.intern_value(v) for v in self.data])
            self.kind = "str"


_LARGEST = tables.LARGEST_ARG_MAGNITUDE


def _number(value: Any) -> bool:
    """Whether `value` is a number in the range the analyses can hold (not bool, not NaN/inf)."""
    return type(value) in (int, float) and -_LARGEST < value < _LARGEST


def _kind_of(value: Any) -> str:
    if type(value) is int or type(value) is bool:
        return "int"
    return "float" if type(value) is float else "str"


class LineBuilder:
    """One timeline line under construction (typed arrays: ~30 bytes an event, whatever its size)."""

    __slots__ = ("names", "strings", "starts", "durations", "name_ids", "stats", "out_of_range")

    def __init__(self, names: Dict[str, int], strings: StringTable):
        self.names = names  # shared by every line of the plane
        self.strings = strings
        self.starts = array("q")
        self.durations = array("q")
        self.name_ids = array("i")
        self.stats: Dict[str, _StatValues] = {}
        self.out_of_range = 0  # args values too large to hold, treated as unknown

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
        stats = self.stats
        strings = self.strings
        for key, value in args.items():  # the hot loop of the reader: kept flat on purpose
            stat = kept.get(key)
            if stat is None or value is None:
                continue
            values = stats.get(stat)
            if values is None:
                values = stats[stat] = _StatValues()
            try:
                if values.kind == "int" and type(value) is int and values.indices[-1] != index:
                    values.data.append(value)  # OverflowError beyond int64, before the index is kept
                    values.indices.append(index)
                else:
                    values.put(index, value, strings)
            except OverflowError:
                self.out_of_range += 1
                if not values.indices:  # the first value: its type is not the column's type yet
                    values.kind = ""
        if role == tables.KERNEL:
            self._put("kernel_details", index, _kernel_details(args))
        elif role == tables.MEMCPY:
            size = args.get("bytes")
            self._put("memcpy_details", index, f"size:{size if type(size) is int and _number(size) else -1}")

    def _put(self, stat: str, index: int, value: Any) -> None:
        values = self.stats.get(stat)
        if values is None:
            values = self.stats[stat] = _StatValues()
        values.put(index, value, self.strings)

    def build(self, line_id: int, name: str, display_name: str, plane: Plane) -> Tuple[Line, int]:
        """The finished Line (sorted, nested) and how many events were clipped to nest."""
        starts = np.frombuffer(self.starts, dtype=np.int64) if self.starts else np.zeros(0, np.int64)
        durations = np.frombuffer(self.durations, dtype=np.int64) if self.durations else np.zeros(0, np.int64)
        order = np.lexsort((-durations, starts))
        starts = starts[order]
        durations = durations[order]
        repaired = _nest(starts, durations)
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        columns: Dict[str, StatColumn] = {}
        for stat, values in self.stats.items():
            if not values.indices:  # every value of this stat was out of range
                continue
            where = rank[np.frombuffer(values.indices, dtype=np.int64)]
            columns[stat] = _column(where, values, starts.size)
        names = np.frombuffer(self.name_ids, dtype=np.int32) if self.name_ids else np.zeros(0, np.int32)
        line = Line(
            id=line_id,
            name=name,
            display_name=display_name,
            plane=plane,
            start_ns=starts,
            duration_ns=compact_ints(durations),
            metadata_index=names[order],
            stats=columns,
        )
        self.starts = self.durations = self.name_ids = None  # the arrays above are copies
        self.stats = {}
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


def _column(indices: np.ndarray, values: _StatValues, count: int) -> StatColumn:
    order = np.argsort(indices, kind="stable")
    dtype = {"int": np.int64, "float": np.float64, "str": np.int64}[values.kind]
    data = np.frombuffer(values.data, dtype=dtype)[order]
    if values.kind == "str":
        data = data.astype(np.int32)
    return StatColumn(values.kind, indices[order], data, count)


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
    if type(registers) is int and _number(registers):
        parts.append(f"regs:{registers}")
    shared = args.get("shared memory")
    if type(shared) is int and _number(shared):
        parts.append(f"static_shared:{shared} dynamic_shared:0")
    for key in ("grid", "block"):
        dims = _dim3(args.get(key))
        if dims:
            parts.append(f"{key}:{dims}")
    occupancy = args.get("est. achieved occupancy %")
    if _number(occupancy):
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
        if _number(value):
            stats[stat] = value
    text = (name or "").upper() if isinstance(name, str) else ""
    amd_name = any(word in text for word in ("AMD", "RADEON", "INSTINCT"))
    if properties.get("vendor") == "AMD" or properties.get("warpSize") == 64 or amd_name:
        stats["device_vendor"] = "AMD"
    elif "compute_cap_major" in stats:
        stats["device_vendor"] = "Nvidia"
    return stats
