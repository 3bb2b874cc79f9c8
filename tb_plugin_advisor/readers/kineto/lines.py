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
    """One stat's values on one line, in typed arrays (no object per value).

    Starts as int, becomes float when a float arrives and text (ids into the plane's strings) when
    anything else does — Kineto writes the same arg with one type, so promotion is rare. A number out
    of range (tables.LARGEST_ARG_MAGNITUDE, NaN, inf) raises OverflowError before anything is stored.

    `indices` (int32 event indices) is None while the stat has been on every event of the line so
    far (values[k] belongs to event k): a kernel's correlation id and details, on every event of a
    stream, then cost 8 and 4 bytes an event instead of 16 each. Text ids take 4 bytes.
    """

    __slots__ = ("indices", "kind", "data")

    def __init__(self) -> None:
        self.indices: Optional[array] = None
        self.kind = ""
        self.data: array = array("q")

    def put(self, index: int, value: Any, strings: StringTable) -> None:
        data, indices = self.data, self.indices
        if data and (len(data) - 1 if indices is None else indices[-1]) == index:
            return  # two arg spellings of one stat on one event
        kind = self.kind
        if kind == "":
            kind = self.kind = _kind_of(value)
            self.data = array(_TYPECODES[kind])
        if kind == "int":
            if type(value) is int or type(value) is bool:
                self.data.append(value)
                self._keep_index(index)
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
        self._keep_index(index)

    def _keep_index(self, index: int) -> None:
        """Record that the value just appended belongs to event `index`."""
        if self.indices is not None:
            self.indices.append(index)
        elif index != len(self.data) - 1:  # the first gap: from here on, indices are kept
            self.indices = array("i", range(len(self.data) - 1))
            self.indices.append(index)

    def _promote(self, kind: str, strings: StringTable) -> None:
        if kind == "float":
            self.data = array("d", self.data)
            self.kind = "float"
        else:
            self.data = array("i", [strings.intern_value(v) for v in self.data])
            self.kind = "str"


_TYPECODES = {"int": "q", "float": "d", "str": "i"}
_DTYPES = {"int": np.int64, "float": np.float64, "str": np.int32}
_LARGEST = tables.LARGEST_ARG_MAGNITUDE


def _number(value: Any) -> bool:
    """Whether `value` is a number in the range the analyses can hold (not bool, not NaN/inf)."""
    return type(value) in (int, float) and -_LARGEST < value < _LARGEST


def _kind_of(value: Any) -> str:
    if type(value) is int or type(value) is bool:
        return "int"
    return "float" if type(value) is float else "str"


class LineBuilder:
    """One timeline line under construction, in typed arrays: 16 bytes an event (start, duration
    while it fits 32 bits, name id) and 4 to 16 bytes per kept arg, whatever the event's size."""

    __slots__ = ("names", "strings", "starts", "durations", "name_ids", "stats", "out_of_range")

    def __init__(self, names: Dict[str, int], strings: StringTable):
        self.names = names  # shared by every line of the plane
        self.strings = strings
        self.starts = array("q")
        self.durations = array("i")  # int64 ("q") from the first duration over 2.1 s
        self.name_ids = array("i")
        self.stats: Dict[str, _StatValues] = {}
        self.out_of_range = 0  # args values too large to hold, treated as unknown

    def add(self, name: str, start_ns: int, duration_ns: int, args: Dict[str, Any], role: str = tables.HOST
            ) -> None:
        index = len(self.starts)
        name_id = self.names.get(name)
        if name_id is None:
            name_id = self.names[name] = len(self.names)
        try:
            self.durations.append(duration_ns)
        except OverflowError:
            self.durations = array("q", self.durations)
            self.durations.append(duration_ns)
        self.starts.append(start_ns)
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
                if values.kind == "int" and type(value) is int:  # the usual case, inline
                    data = values.data
                    if values.indices is None:
                        if len(data) == index:  # on every event so far
                            data.append(value)  # OverflowError beyond int64, before anything is kept
                            continue
                    elif values.indices[-1] != index:
                        data.append(value)
                        values.indices.append(index)
                        continue
                values.put(index, value, strings)
            except OverflowError:
                self.out_of_range += 1
                if not values.data:  # the first value: its type is not the column's type yet
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

    def build(self, line_id: int, name: str, display_name: str, plane: Plane,
              kept_whole: Optional[np.ndarray] = None) -> Tuple[Line, int]:
        """The finished Line (sorted, nested) and how many events were clipped to nest; events whose
        name id is in `kept_whole` (step markers) are never the ones clipped.

        The columns are the builder's own arrays where the events came in order (a stream's kernels,
        most threads), viewed rather than copied; only out-of-order lines are sorted into copies.
        """
        count = len(self.starts)
        starts = _column_of(self.starts, np.int64)
        durations = _column_of(self.durations, np.int64 if self.durations.typecode == "q" else np.int32)
        names = _column_of(self.name_ids, np.int32)
        self.starts = self.durations = self.name_ids = None  # the columns own the arrays now
        order = None if _in_order(starts, durations) else np.lexsort((-durations.astype(np.int64), starts))
        if order is not None:
            starts, durations, names = starts[order], durations[order], names[order]
        clipped = _nest(starts, durations, names, kept_whole)
        rank = None
        if order is not None:
            rank = np.empty(count, dtype=np.int32)
            rank[order] = np.arange(count, dtype=np.int32)
            del order
        columns: Dict[str, StatColumn] = {}
        for stat in list(self.stats):
            values = self.stats.pop(stat)
            if values.data:  # (empty when every value of this stat was out of range)
                columns[stat] = _column(values, rank, count)
        line = Line(
            id=line_id,
            name=name,
            display_name=display_name,
            plane=plane,
            start_ns=starts,
            duration_ns=compact_ints(durations.astype(np.int64, copy=False)),
            metadata_index=names,
            stats=columns,
            clipped=compact_ints(clipped),
        )
        return line, int(clipped.size)


def _column_of(values: array, dtype) -> np.ndarray:
    """A typed array as a numpy column without a copy (the column keeps the array alive)."""
    return np.frombuffer(values, dtype=dtype) if values else np.zeros(0, dtype)


def _in_order(starts: np.ndarray, durations: np.ndarray) -> bool:
    """Are the events already sorted by start, the longer first where starts are equal (what the
    lexsort in `build` would give)? One pass of comparisons, no index array."""
    if starts.size < 2:
        return True
    later, earlier = starts[1:], starts[:-1]
    if not bool(np.all(later >= earlier)):
        return False
    ties = later == earlier
    return not ties.any() or bool(np.all(durations[1:][ties] <= durations[:-1][ties]))


NEST_CHUNK = 1 << 16  # events whose starts and ends are Python ints at once (40 bytes each)


def _nest(starts: np.ndarray, durations: np.ndarray, names: np.ndarray,
          kept_whole: Optional[np.ndarray] = None) -> np.ndarray:
    """Make the line's events nest; returns the (sorted) indices of the events whose end it moved.

    Sorted by start then longest first, so a parent precedes its children. An event that outlives
    the event enclosing its start is clipped to that event's end — except an event whose name id
    is in `kept_whole` (a step marker): then the open events it outlives end where it starts.
    Python stack events and user annotations straddle `ProfilerStep` boundaries in every
    `with_stack=True` trace; cutting the step instead made each step a few microseconds long.
    Deterministic: the same file always gives the same lines. A line whose events never overlap (a
    stream's kernels) is checked in one pass; others walk their events a chunk at a time.
    """
    none = np.zeros(0, dtype=np.int64)
    if starts.size < 2:
        return none
    if bool(np.all(starts[1:] - starts[:-1] >= durations[:-1])):  # none overlaps the next
        return none
    whole = (np.isin(names, kept_whole) if kept_whole is not None and kept_whole.size
             else np.zeros(names.size, dtype=bool))
    clipped: List[int] = []
    open_ends: List[int] = []  # ends of the events enclosing the current one, innermost last
    open_rows: List[int] = []
    for lo in range(0, starts.size, NEST_CHUNK):
        start_list = starts[lo : lo + NEST_CHUNK].tolist()
        end_list = (starts[lo : lo + NEST_CHUNK] + durations[lo : lo + NEST_CHUNK]).tolist()
        whole_list = whole[lo : lo + NEST_CHUNK].tolist()
        for i, start in enumerate(start_list):
            end = end_list[i]
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
                open_rows.pop()
            if open_ends and end > open_ends[-1]:
                if whole_list[i]:
                    while open_ends and open_ends[-1] < end:
                        row = open_rows.pop()
                        open_ends.pop()
                        durations[row] = start - int(starts[row])
                        clipped.append(row)
                else:
                    end = open_ends[-1]
                    durations[lo + i] = end - start
                    clipped.append(lo + i)
            open_ends.append(end)
            open_rows.append(lo + i)
    return np.unique(np.array(clipped, dtype=np.int64))


def _column(values: _StatValues, rank: Optional[np.ndarray], count: int) -> StatColumn:
    """One stat's column; `rank` maps an event's arrival index to its place in the sorted line (None
    when the line came in order)."""
    data = _column_of(values.data, _DTYPES[values.kind])
    if values.indices is None and rank is None and data.size == count:
        return StatColumn(values.kind, None, data, count)
    indices = (np.arange(data.size, dtype=np.int32) if values.indices is None
               else _column_of(values.indices, np.int32))
    if rank is not None:
        indices = rank[indices]
        order = np.argsort(indices, kind="stable")
        indices, data = indices[order], data[order]
    return StatColumn(values.kind, indices, data, count)


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
