"""The framework-neutral Profile: what readers produce and every analysis consumes.

A profile of a real training job holds millions of events; one Python object per event costs ~2 µs
and ~200 bytes, so events are stored as columns (numpy arrays) per timeline line. Names are interned
once per plane; stats are columns too, filled only where an event carries them.

Times are nanoseconds since the Unix epoch (the clock of the profiled host) everywhere: starts are
int64; a line's durations (and its kernel table's) are int32 when all of them fit (see
`compact_ints`), else int64. Sums over them (`np.sum`, `sums_by_code`) are taken in 64 bits.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Tuple

import numpy as np

# ---------------------------------------------------------------------------------------------------
# Integer columns

INT32_RANGE = (-(1 << 31), (1 << 31) - 1)


def compact_ints(values: np.ndarray) -> np.ndarray:
    """`values` as int32 when every value fits, else as given. Durations (under 2.1 s: nearly every
    event) and correlation ids are a quarter of a profile in memory, and at 4 bytes they are half
    of that. Only for columns that are compared, indexed by or summed with numpy's 64-bit sums,
    never multiplied or added to each other in place."""
    if values.dtype != np.int64 or values.size == 0:
        return values
    if INT32_RANGE[0] <= int(values.min()) and int(values.max()) <= INT32_RANGE[1]:
        return values.astype(np.int32)
    return values


# ---------------------------------------------------------------------------------------------------
# Stats


class StatColumn:
    """One stat across the events of a line, stored sparsely (most stats sit on few events).

    `kind` is "int", "float" or "str". For "str" the values are int32 ids into the owning plane's
    `strings` table (ref_value stats are resolved into it by the reader). `indices` (sorted) are the
    events that carry the stat, themselves or through their metadata; `data[k]` is the value at
    `indices[k]`. A stat on every event (a GPU stream's correlation ids, kernel details) may be given
    indices None: `data` is then per event and `indices` is made only when asked for (it was 4 bytes
    per event for each such stat, 13 MB of a 100 MB profile). `values` / `present` give dense
    per-event arrays, built on first use.
    """

    __slots__ = ("kind", "_indices", "data", "count", "_dense")

    def __init__(self, kind: str, indices: Optional[np.ndarray], data: np.ndarray, count: int):
        if indices is None and data.shape[0] != count:
            raise ValueError(f"a stat without indices needs one value per event: {data.shape[0]} for {count}")
        self.kind = kind
        self._indices = indices
        self.data = data
        self.count = count
        self._dense: Optional[Tuple[np.ndarray, np.ndarray]] = None

    @property
    def indices(self) -> np.ndarray:
        if self._indices is None:
            return np.arange(self.count, dtype=np.int32)
        return self._indices

    @property
    def on_every_event(self) -> bool:
        """Does every event of the line carry the stat (then `data` is already per event)?"""
        return self._indices is None or self._indices.size == self.count

    def _materialise(self) -> Tuple[np.ndarray, np.ndarray]:
        if self._dense is None and self.on_every_event:
            # On every event (a GPU stream's correlation ids, kernel details): the data is already
            # dense, so it is shared read-only instead of copied (one line's column can be tens of MB).
            values = self.data.view()
            values.flags.writeable = False
            present = np.ones(self.count, dtype=bool)
            present.flags.writeable = False
            self._dense = (values, present)
        if self._dense is None:
            fill = -1 if self.kind == "str" else 0
            values = np.full(self.count, fill, dtype=self.data.dtype)
            values[self._indices] = self.data
            present = np.zeros(self.count, dtype=bool)
            present[self._indices] = True
            self._dense = (values, present)
        return self._dense

    @property
    def values(self) -> np.ndarray:
        return self._materialise()[0]

    @property
    def present(self) -> np.ndarray:
        return self._materialise()[1]

    def at(self, events: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(raw values, present) at the given events, without a dense copy of the column: where an
        event does not carry the stat its value is any of the column's (read `present`)."""
        if self._indices is None:
            return self.data[events], np.ones(events.shape[0], dtype=bool)
        if self._indices.size == 0:
            return np.zeros(events.shape[0], dtype=self.data.dtype), np.zeros(events.shape[0], dtype=bool)
        k = np.minimum(np.searchsorted(self._indices, events), self._indices.size - 1)
        return self.data[k], self._indices[k] == events

    def get(self, i: int):
        """The raw value at event i (a string id for kind "str"), or None."""
        if self._indices is None:
            return self.data[i] if 0 <= i < self.count else None
        k = int(np.searchsorted(self._indices, i))
        if k < self._indices.size and int(self._indices[k]) == i:
            return self.data[k]
        return None


# ---------------------------------------------------------------------------------------------------
# Events


class Event(NamedTuple):
    """One event, materialised on demand (slow path: use the columns for bulk work)."""

    name: str
    start_ns: int
    duration_ns: int
    stats: Dict[str, Any]

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns


@dataclass
class Line:
    """One timeline row: a host thread, a GPU stream, a TPU op line …; events are sorted by start.

    Events on one line nest (a parent fully contains its children) but never partially overlap.
    """

    id: int
    name: str
    display_name: str
    plane: Plane = field(repr=False, compare=False)  # held weakly (see below the class)
    start_ns: np.ndarray  # int64
    duration_ns: np.ndarray  # int32 when every duration fits (compact_ints), else int64
    metadata_index: np.ndarray  # int32 index into plane.event_names
    stats: Dict[str, StatColumn] = field(default_factory=dict, repr=False)
    # sorted indices of the events whose end a reader moved to make the line nest: their durations
    # are no longer the file's (the Kineto reader clips partial overlaps; XSpace lines nest already)
    clipped: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32), repr=False)

    def __len__(self) -> int:
        return int(self.start_ns.shape[0])

    @property
    def end_ns(self) -> np.ndarray:
        return self.start_ns + self.duration_ns

    @property
    def label(self) -> str:
        """The name a person reads in the trace viewer."""
        return self.display_name or self.name

    def name_of(self, i: int) -> str:
        return self.plane.event_names[int(self.metadata_index[i])]

    def names(self) -> List[str]:
        """Every event's name, in order (allocates a list: fine for small lines)."""
        table = self.plane.event_names
        return [table[i] for i in self.metadata_index.tolist()]

    def name_mask(self, predicate) -> np.ndarray:
        """Boolean mask of events whose name satisfies predicate — evaluated once per distinct name."""
        names = self.plane.event_names
        per_name = np.fromiter((bool(predicate(n)) for n in names), dtype=bool, count=len(names))
        if per_name.size == 0:
            return np.zeros(len(self), dtype=bool)
        return per_name[self.metadata_index]

    def stat_value(self, name: str, i: int) -> Any:
        """The value of stat `name` on event i, or None (strings resolved)."""
        column = self.stats.get(name)
        value = column.get(i) if column is not None else None
        if value is None:
            return None
        if column.kind == "str":
            return self.plane.strings[int(value)]
        return int(value) if column.kind == "int" else float(value)

    def stat_strings(self, name: str) -> List[Optional[str]]:
        """Stat `name` for every event as strings (None where absent)."""
        column = self.stats.get(name)
        if column is None:
            return [None] * len(self)
        if column.kind == "str":
            table = self.plane.strings
            return [table[v] if p else None for v, p in zip(column.values.tolist(), column.present.tolist())]
        return [str(v) if p else None for v, p in zip(column.values.tolist(), column.present.tolist())]

    def event(self, i: int) -> Event:
        stats = {name: value for name in self.stats if (value := self.stat_value(name, i)) is not None}
        return Event(self.name_of(i), int(self.start_ns[i]), int(self.duration_ns[i]), stats)

    def events(self) -> Iterator[Event]:
        for i in range(len(self)):
            yield self.event(i)


def _plane_of(line: Line) -> Plane:
    plane = line._plane_ref()
    if plane is None:  # the profile was dropped while this line is still used: its tables live on
        plane = line._detached_plane = Plane(*line._plane_tables)
        line._plane_ref = weakref.ref(plane)
    return plane


def _set_plane(line: Line, plane: Plane) -> None:
    line._plane_ref = weakref.ref(plane)
    line._plane_tables = (plane.id, plane.name, plane.event_names, plane.stats, plane.strings)


# A line refers to its plane weakly (plane -> lines -> plane was a reference cycle, so a dropped
# Profile waited for the cyclic GC and kept hundreds of MB meanwhile) and to the plane's tables
# strongly, so a line used after its profile was dropped still has its names and strings.
Line.plane = property(_plane_of, _set_plane)  # type: ignore[assignment]



# ---------------------------------------------------------------------------------------------------
# Planes


class StringTable(List[str]):
    """A list of distinct strings that hands out each string's index: string stat columns and kernel
    tables hold these small ints instead of one Python string per event."""

    def __init__(self, strings: Iterable[str] = ()):
        super().__init__(strings)
        self._index: Dict[str, int] = {text: i for i, text in enumerate(self)}

    def intern(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self)
            self.append(text)
        return found

    def intern_all(self, texts: Iterable[str]) -> List[int]:
        """`intern` of each text, in order, with the loops in C (100,000 distinct kernel details or
        ref values: one Python call each was a visible part of reading such a profile)."""
        texts = texts if isinstance(texts, list) else list(texts)
        index = self._index
        new = [text for text in dict.fromkeys(texts) if text not in index]
        if new:
            index.update(zip(new, range(len(self), len(self) + len(new))))
            self.extend(new)
        return list(map(index.__getitem__, texts))

    def intern_value(self, value: Any) -> int:
        """Intern any stat value as text (a stat whose values mix numbers and strings becomes text)."""
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return self.intern(value if isinstance(value, str) else str(value))


# The per-op stats of every name that has none: one shared, read-only mapping instead of an empty
# dict per name (64 bytes each: 64 MB for a million kernel names).
NO_STATS: Mapping[str, Any] = MappingProxyType({})


@dataclass
class Plane:
    """One XPlane: a host (all its threads), a device, or bookkeeping (metadata, task environment)."""

    id: int
    name: str
    # dense metadata index -> event name (the metadata's display names and per-op stats are not kept:
    # the reader merges the stats into the events' columns, and nothing reads either afterwards)
    event_names: List[str]
    stats: Dict[str, Any]  # plane-level stats, e.g. GPU properties
    strings: StringTable  # string stat values, referenced by StatColumn(kind="str")
    lines: List[Line] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """host | gpu | tpu | device (other accelerator) | metadata | other."""
        return plane_kind(self.name)

    @property
    def event_count(self) -> int:
        return sum(len(line) for line in self.lines)

    def line_named(self, name: str) -> Optional[Line]:
        for line in self.lines:
            if line.name == name or line.display_name == name:
                return line
        return None


def plane_kind(plane_name: str) -> str:
    if plane_name.startswith("/host:metadata"):
        return "metadata"
    if plane_name.startswith("/host:"):
        return "host"
    if plane_name.startswith("/device:GPU:"):
        return "gpu"
    if plane_name.startswith("/device:TPU:"):
        return "tpu"
    if plane_name.startswith("/device:"):
        return "device"
    return "other"


# ---------------------------------------------------------------------------------------------------
# Steps

STEP_SOURCES = ("root_marker", "keras3_marker", "legacy_marker", "profiler_step")


@dataclass(frozen=True)
class StepMarker:
    """A host event that marks one training step.

    source: root_marker (`_r=1`: tf.profiler Trace(..., _r=1), JAX StepTraceAnnotation),
            keras3_marker (`Profiled batch` with step_num), legacy_marker (tf.keras `TraceContext`),
            profiler_step (PyTorch `ProfilerStep#N`, one per `prof.step()`).
    """

    source: str
    name: str
    step_num: Optional[int]
    start_ns: int
    duration_ns: int
    line_name: str

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns


# ---------------------------------------------------------------------------------------------------
# The whole profile of one host


@dataclass
class Profile:
    """Everything one `<host>.xplane.pb` says, in framework-neutral form."""

    path: str
    host: str
    size_bytes: int
    planes: List[Plane]
    devices: List[Device]
    step_markers: List[StepMarker]
    hostnames: List[str] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # recorded by the profiler itself (XSpace.errors)
    warnings: List[str] = field(default_factory=list)  # XSpace.warnings plus the reader's own notes
    framework: str = ""  # "pytorch" for Kineto traces; "" for XSpace (TensorFlow or JAX)
    # The id of the on-disk format it was read from (readers/formats/registry.py), set by its reader:
    # what to ask about the file itself (how its events are addressed), where `framework` says who
    # wrote the program. "" for a Profile built by hand.
    format: str = ""
    properties: Dict[str, Any] = field(default_factory=dict)  # format-specific facts (rank, schema…)

    @property
    def host_planes(self) -> List[Plane]:
        return [p for p in self.planes if p.kind == "host"]

    @property
    def host_plane(self) -> Optional[Plane]:
        """The `/host:CPU` plane (all host threads), if any."""
        planes = self.host_planes
        for plane in planes:
            if plane.name == "/host:CPU":
                return plane
        return planes[0] if planes else None

    @property
    def gpus(self) -> List[Device]:
        return [d for d in self.devices if d.kind == "gpu"]

    def time_range_ns(self) -> Tuple[int, int]:
        """Earliest start and latest end over every host and device event (0, 0) when empty."""
        lines = self._timed_lines()
        if not lines:
            return (0, 0)
        return (self.first_start_ns(), max(int(line.end_ns.max()) for line in lines))

    def first_start_ns(self) -> int:
        """Earliest start over every host and device event (0 when empty): the start of
        time_range_ns, without the ends of every event (an array the size of each line)."""
        return min((int(line.start_ns.min()) for line in self._timed_lines()), default=0)

    def _timed_lines(self) -> List[Line]:
        return [line for plane in self.planes if plane.kind in ("host", "gpu", "tpu", "device")
                for line in plane.lines if len(line)]


@dataclass
class RunProfiles:
    """A profile run (one session): one Profile per host file."""

    run: str
    profiles: List[Profile]

    @property
    def hosts(self) -> List[str]:
        return [p.host for p in self.profiles]


# ---------------------------------------------------------------------------------------------------
# Device activity: kernels and copies of one accelerator as columns, derived by the reader once so
# that analyses don't each redo it.


@dataclass(frozen=True)
class KernelDetails:
    """CUPTI's `kernel_details` stat, parsed."""

    registers_per_thread: Optional[int] = None
    static_shared_bytes: Optional[int] = None
    dynamic_shared_bytes: Optional[int] = None
    grid: Optional[Tuple[int, int, int]] = None
    block: Optional[Tuple[int, int, int]] = None
    occupancy_pct: Optional[float] = None


@dataclass
class KernelTable:
    """Every kernel (or device op) of one device, as columns sorted by start time.

    `name_index` points into `names`; `tf_op`, `hlo_op`, `hlo_module`, `details` point into `strings`
    (-1 where absent). For TPUs and other XLA devices the "kernels" are the device's op events.
    """

    names: List[str]
    strings: List[str]
    start_ns: np.ndarray
    duration_ns: np.ndarray
    name_index: np.ndarray
    line_index: np.ndarray  # which stream / line of the device plane (index into Device.plane.lines)
    tf_op: np.ndarray
    hlo_op: np.ndarray
    hlo_module: np.ndarray
    details: np.ndarray
    correlation_id: np.ndarray  # int32 or int64 (as the lines'), -1 where absent

    def __len__(self) -> int:
        return int(self.start_ns.shape[0])

    @property
    def total_ns(self) -> int:
        return int(self.duration_ns.sum())

    def string(self, column: np.ndarray, i: int) -> Optional[str]:
        idx = int(column[i])
        return self.strings[idx] if idx >= 0 else None


MEMCPY_DIRECTIONS = ("H2D", "D2H", "D2D", "P2P", "other")


@dataclass
class MemcpyTable:
    """Every copy on one device as columns; `direction` indexes MEMCPY_DIRECTIONS."""

    start_ns: np.ndarray
    duration_ns: np.ndarray
    direction: np.ndarray  # int8
    bytes: np.ndarray  # int64, -1 where unknown
    line_index: np.ndarray
    # the runtime call that issued each copy (-1 where absent); empty when the reader kept none
    correlation_id: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.start_ns.shape[0])

    def total_ns(self, direction: Optional[str] = None) -> int:
        if direction is None:
            return int(self.duration_ns.sum())
        code = MEMCPY_DIRECTIONS.index(direction)
        return int(self.duration_ns[self.direction == code].sum())


@dataclass
class Device:
    """An accelerator (GPU, TPU) with its properties and activity."""

    name: str  # plane name, e.g. "/device:GPU:0"
    kind: str  # "gpu" | "tpu" | "device"
    ordinal: int
    vendor: str  # "Nvidia", "AMD", "Google", "" when unknown
    model: str  # e.g. "NVIDIA A100-SXM4-40GB"
    compute_capability: Optional[Tuple[int, int]]
    core_count: Optional[int]  # SMs / CUs / TensorCores
    clock_rate_khz: Optional[float]
    memory_bytes: Optional[int]
    memory_bandwidth: Optional[float]  # bytes/s
    plane: Plane = field(repr=False)
    kernels: KernelTable = field(repr=False)
    memcpys: MemcpyTable = field(repr=False)
    # What analyses derive from the tables and share (analysis/classify/kernel_view.py): computed once
    # per device
    derived: Dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def has_activity(self) -> bool:
        return len(self.kernels) > 0 or len(self.memcpys) > 0
