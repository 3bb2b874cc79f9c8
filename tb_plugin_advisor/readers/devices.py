"""Device activity and step markers, derived once from the planes so analyses never redo it.

Kernels and copies of each accelerator become columnar tables; host events that mark training steps
become StepMarker candidates. The name tables here are what the formats' writers actually emit.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.lookup import unique_inverse
from tb_plugin_advisor.model import (
    MEMCPY_DIRECTIONS,
    Device,
    KernelDetails,
    KernelTable,
    Line,
    MemcpyTable,
    Plane,
    StatColumn,
    StepMarker,
    StringTable,
)

# Lines that xprof's preprocessing derives from the raw device streams: they repeat the same time.
DERIVED_DEVICE_LINES = frozenset(
    {
        "Steps",
        "TensorFlow Ops",
        "TensorFlow Name Scope",
        "XLA Modules",
        "XLA Ops",
        "Async XLA Ops",
        "XLA TraceMe",
        "Framework Ops",
        "Framework Name Scope",
        "Source code",
        "Launch Stats",
        "Overlay",
        "SparseCore Ops",
        "Host Offload Ops",
    }
)
# On TPUs (and XLA devices without CUDA streams) the op line is the device's activity.
XLA_OP_LINES = ("XLA Ops",)

# Copy event names → direction, both the current CUPTI spelling and the older one xprof expects.
MEMCPY_NAMES: Dict[str, str] = {
    "MemcpyH2D": "H2D",
    "MemcpyD2H": "D2H",
    "MemcpyD2D": "D2D",
    "MemcpyP2P": "P2P",
    "MemcpyOther": "other",
    "MEMCPYHToD": "H2D",
    "MEMCPYDToH": "D2H",
    "MEMCPYDToD": "D2D",
    "MEMCPYP2P": "P2P",
    "MEMCPYOther": "other",
    # ROCm writers name copies after the transfer
    "CopyHostToDevice": "H2D",
    "CopyDeviceToHost": "D2H",
    "CopyDeviceToDevice": "D2D",
}

# Kineto names copies `Memcpy HtoD (Pageable -> Device)`: the direction is the second word.
MEMCPY_PREFIXES: Dict[str, str] = {
    "Memcpy HtoD": "H2D",
    "Memcpy DtoH": "D2H",
    "Memcpy DtoD": "D2D",
    "Memcpy PtoP": "P2P",
    "Memcpy HtoH": "other",
}


# What every copy name above starts with: a plane's other names (100,000 kernels) are passed over with
# one startswith each.
_COPY_STARTS = tuple(sorted({name[:4] for name in MEMCPY_NAMES} | {"Memcpy "}))


def copy_direction(event_name: str) -> Optional[str]:
    """The direction of a copy event by name (XSpace or Kineto spelling), None when not a copy."""
    direction = MEMCPY_NAMES.get(event_name)
    if direction is None and event_name.startswith("Memcpy "):
        direction = MEMCPY_PREFIXES.get(event_name[:11], "other")
    return direction


# Step markers, in the order the analyses prefer them (ARCHITECTURE.md §5).
KERAS3_MARKER_NAMES = frozenset({"Profiled batch"})
LEGACY_MARKER_NAMES = frozenset({"TraceContext"})


def parse_kernel_details(text: str) -> KernelDetails:
    """`regs:32 static_shared:0 dynamic_shared:4096 grid:80,1,1 block:256,1,1 occ_pct:50` → fields."""
    fields: Dict[str, str] = {}
    for token in text.replace("\n", " ").split():
        key, sep, value = token.partition(":")
        if sep:
            fields[key] = value

    def as_int(key: str) -> Optional[int]:
        try:
            return int(fields[key])
        except (KeyError, ValueError):
            return None

    def as_dim3(key: str) -> Optional[Tuple[int, int, int]]:
        try:
            parts = [int(p) for p in fields[key].split(",")]
        except (KeyError, ValueError):
            return None
        parts = (parts + [1, 1, 1])[:3]
        return (parts[0], parts[1], parts[2])

    try:
        occupancy = float(fields["occ_pct"]) if "occ_pct" in fields else None
    except ValueError:
        occupancy = None
    return KernelDetails(
        registers_per_thread=as_int("regs"),
        static_shared_bytes=as_int("static_shared"),
        dynamic_shared_bytes=as_int("dynamic_shared"),
        grid=as_dim3("grid"),
        block=as_dim3("block"),
        occupancy_pct=occupancy,
    )


def parse_memcpy_bytes(text: str) -> int:
    """`kind_src:1 kind_dst:2 size:4096 dest:0 async:1` → 4096 (-1 when absent)."""
    for token in text.split():
        key, sep, value = token.partition(":")
        if sep and key == "size":
            try:
                return int(value)
            except ValueError:
                return -1
    return -1


# Larger than any real core count, clock, memory size or bandwidth; rejects wrapped uint64 values.
MAX_QUANTITY = float(1 << 62)


def _small_int(value: object) -> Optional[int]:
    """An int in [0, 1000) from an int, an integral float or a digit string; None otherwise."""
    if isinstance(value, str):
        value = value.strip()
        return int(value) if value.isdigit() and len(value) < 4 else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1000:
        return int(value)
    return None


def _capability(major: object, minor: object) -> Optional[Tuple[int, int]]:
    """(major, minor) compute capability; None when absent or not a small number."""
    if major is None:
        return None
    major_int = _small_int(major)
    minor_int = _small_int(minor) if minor is not None else 0
    if major_int is None or minor_int is None:
        return None
    return (major_int, minor_int)


def _device_ordinal(plane_name: str) -> int:
    tail = plane_name.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _activity_lines(plane: Plane) -> List[int]:
    """Indices of the lines that hold the device's own activity (not xprof's derived views)."""
    streams = [i for i, line in enumerate(plane.lines) if line.name.startswith("Stream #")]
    if streams:
        return streams
    xla_ops = [i for i, line in enumerate(plane.lines) if line.name in XLA_OP_LINES]
    if xla_ops:
        return xla_ops
    return [i for i, line in enumerate(plane.lines) if line.name not in DERIVED_DEVICE_LINES]


def _constant(value: int, count: int, dtype) -> np.ndarray:
    """`count` copies of `value` as a read-only view of one element: a stat no event of a stream
    carries (`hlo_op` on a TF stream) or a stream's own line index costs nothing per kernel."""
    return np.broadcast_to(np.array(value, dtype=dtype), (count,))


def _string_ids(line: Line, stat: str, strings: StringTable, plane: Plane) -> np.ndarray:
    column = line.stats.get(stat)
    if column is None:
        return _constant(-1, len(line), np.int32)
    if column.kind == "str" and column.on_every_event and column.data.dtype == np.int32:
        return _read_only(column.data.view())  # already the per-event ids: shared, not copied
    ids = np.full(len(line), -1, dtype=np.int32)
    if column.kind == "str":
        ids[column.indices] = column.data  # plane strings == device table strings (shared list)
    else:
        ids[column.indices] = [strings.intern_value(v) for v in column.data.tolist()]
    return ids


def _int_stat(line: Line, stat: str) -> np.ndarray:
    column = line.stats.get(stat)
    if column is None or column.kind == "str":
        return _constant(-1, len(line), np.int32)
    integer = column.data.dtype.kind == "i"  # (int32 or int64; a stat that mixed in floats is float)
    if column.on_every_event and integer:
        return _read_only(column.data.view())  # a stream's correlation ids: shared, not copied
    values = np.full(len(line), -1, dtype=column.data.dtype if integer else np.int64)
    values[column.indices] = column.data
    return values


def _copy_sizes(line: Line, details: Optional[StatColumn]) -> np.ndarray:
    """Bytes per event from `memcpy_details` (parsed once per distinct string), -1 where unknown."""
    sizes = np.full(len(line), -1, dtype=np.int64)
    if details is None or details.kind != "str":
        return sizes
    unique, inverse = unique_inverse(details.data)
    parsed = np.array([parse_memcpy_bytes(line.plane.strings[i]) for i in unique.tolist()], dtype=np.int64)
    sizes[details.indices] = parsed[inverse.reshape(-1)]
    return sizes


def _read_only(values: np.ndarray) -> np.ndarray:
    """`values`, no longer writable: a kernel table and its line may share it."""
    values.flags.writeable = False
    return values


def build_device(plane: Plane) -> Device:
    strings = plane.strings  # device tables extend the plane's own string table
    names = plane.event_names
    # the names that may be copies, by one C loop over them (a million kernel names: a Python step
    # each was a tenth of a second), then each of those few read
    may_copy = np.fromiter(map(str.startswith, names, repeat(_COPY_STARTS)), dtype=bool, count=len(names))
    memcpy_direction_by_name = {
        i: MEMCPY_DIRECTIONS.index(direction)
        for i in np.flatnonzero(may_copy).tolist()
        if (direction := copy_direction(names[i])) is not None
    }
    del may_copy
    is_memcpy = np.zeros(len(plane.event_names) + 1, dtype=bool)
    direction_of = np.full(len(plane.event_names) + 1, MEMCPY_DIRECTIONS.index("other"), dtype=np.int8)
    for i, code in memcpy_direction_by_name.items():
        is_memcpy[i] = True
        direction_of[i] = code
    kernel_parts: Dict[str, List[np.ndarray]] = {k: [] for k in (
        "start", "dur", "name", "line", "tf_op", "hlo_op", "hlo_module", "details", "corr")}
    copy_parts: Dict[str, List[np.ndarray]] = {
        k: [] for k in ("start", "dur", "dir", "bytes", "line", "corr")}
    for line_index in _activity_lines(plane):
        line = plane.lines[line_index]
        if len(line) == 0:
            continue
        copies = is_memcpy[line.metadata_index]  # fancy indexing: a fresh array, safe to modify
        details_column = line.stats.get("memcpy_details")
        if details_column is not None:  # any event CUPTI/ROCm describes as a copy is one
            copies[details_column.indices] = True
        kernels = ~copies
        if kernels.any():
            # a stream of kernels only (the usual case) shares the line's columns instead of copying
            # them: 20 bytes per kernel, a fifth of what a GPU profile holds (both stay read-only)
            every = slice(None) if kernels.all() else kernels
            for key, column in (("start", line.start_ns), ("dur", line.duration_ns),
                                ("name", line.metadata_index)):
                kernel_parts[key].append(_read_only(column)[every])
            kernel_parts["line"].append(_constant(line_index, int(kernels.sum()), np.int32))
            for key, stat in (("tf_op", "tf_op"), ("hlo_op", "hlo_op"), ("hlo_module", "hlo_module"),
                              ("details", "kernel_details")):
                kernel_parts[key].append(_string_ids(line, stat, strings, plane)[every])
            kernel_parts["corr"].append(_int_stat(line, "correlation_id")[every])
        if copies.any():
            copy_parts["start"].append(line.start_ns[copies])
            copy_parts["dur"].append(line.duration_ns[copies])
            copy_parts["dir"].append(direction_of[line.metadata_index[copies]])
            copy_parts["bytes"].append(_copy_sizes(line, details_column)[copies])
            copy_parts["line"].append(np.full(int(copies.sum()), line_index, dtype=np.int32))
            copy_parts["corr"].append(_int_stat(line, "correlation_id")[copies])

    def cat(parts: List[np.ndarray], dtype) -> np.ndarray:
        """The parts joined as `dtype`; as their own common type when None (durations and ids stay
        int32 where the lines' are)."""
        if not parts:
            return np.zeros(0, dtype=dtype or np.int32)
        joined = np.concatenate(parts) if len(parts) > 1 else parts[0]
        return joined.astype(dtype or joined.dtype, copy=False)

    def in_order(starts: np.ndarray) -> Any:
        """The permutation that sorts by start, or a no-op slice when already sorted (one stream)."""
        if starts.size < 2 or np.all(starts[1:] >= starts[:-1]):
            return slice(None)
        return np.argsort(starts, kind="stable")

    k_start = cat(kernel_parts["start"], np.int64)
    k_order = in_order(k_start)
    kernels = KernelTable(
        names=plane.event_names,
        strings=plane.strings,
        start_ns=k_start[k_order],
        duration_ns=cat(kernel_parts["dur"], None)[k_order],
        name_index=cat(kernel_parts["name"], np.int32)[k_order],
        line_index=cat(kernel_parts["line"], np.int32)[k_order],
        tf_op=cat(kernel_parts["tf_op"], np.int32)[k_order],
        hlo_op=cat(kernel_parts["hlo_op"], np.int32)[k_order],
        hlo_module=cat(kernel_parts["hlo_module"], np.int32)[k_order],
        details=cat(kernel_parts["details"], np.int32)[k_order],
        correlation_id=cat(kernel_parts["corr"], None)[k_order],
    )
    c_start = cat(copy_parts["start"], np.int64)
    c_order = in_order(c_start)
    memcpys = MemcpyTable(
        start_ns=c_start[c_order],
        duration_ns=cat(copy_parts["dur"], None)[c_order],
        direction=cat(copy_parts["dir"], np.int8)[c_order],
        bytes=cat(copy_parts["bytes"], np.int64)[c_order],
        line_index=cat(copy_parts["line"], np.int32)[c_order],
        correlation_id=cat(copy_parts["corr"], None)[c_order],
    )
    stats = plane.stats
    major, minor = stats.get("compute_cap_major"), stats.get("compute_cap_minor")
    capability = _capability(major, minor)
    vendor = str(stats.get("device_vendor") or "")
    if not vendor and plane.kind == "tpu":
        vendor = "Google"
    if not vendor and capability is not None and plane.kind == "gpu":
        vendor = "Nvidia"  # older CUPTI writers record no vendor; only NVIDIA GPUs had compute_cap then
    model = str(
        stats.get("gpu_device_name") or stats.get("device_type_string") or stats.get("device_name") or ""
    )

    def number(key: str) -> Optional[float]:
        """A plausible non-negative quantity, else None (hostile or broken stats are ignored)."""
        value = stats.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value) if 0 <= value < MAX_QUANTITY else None

    core_count = number("core_count")
    memory = number("memory_size")
    return Device(
        name=plane.name,
        kind=plane.kind,
        ordinal=_device_ordinal(plane.name),
        vendor=vendor,
        model=model,
        compute_capability=capability,
        core_count=int(core_count) if core_count is not None else None,
        clock_rate_khz=number("clock_rate"),
        memory_bytes=int(memory) if memory is not None else None,
        memory_bandwidth=number("memory_bandwidth"),
        plane=plane,
        kernels=kernels,
        memcpys=memcpys,
    )


def _root_mask(line: Line) -> np.ndarray:
    """Events carrying `_r=1`: TraceMe root events that mark a step."""
    root = line.stats.get("_r")
    mask = np.zeros(len(line), dtype=bool)
    if root is not None and root.kind != "str":
        mask[root.indices[root.data.astype(np.float64) == 1]] = True
    return mask


def _marker_source(event_name: str) -> str:
    if event_name in KERAS3_MARKER_NAMES:
        return "keras3_marker"
    return "legacy_marker" if event_name in LEGACY_MARKER_NAMES else ""


def _step_number(value: object) -> Optional[int]:
    """A step number from a stat; NaN, infinite, negative or absurd values give None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if 0 <= value < MAX_QUANTITY else None


def step_markers(planes: List[Plane]) -> List[StepMarker]:
    markers: List[StepMarker] = []
    for plane in (p for p in planes if p.kind == "host"):
        source_of_name = [_marker_source(n) for n in plane.event_names] + [""]
        is_marker_name = np.array([bool(s) for s in source_of_name])  # a bool gather, not object compares
        for line in plane.lines:
            if len(line) == 0:
                continue
            is_root = _root_mask(line)
            named = is_marker_name[line.metadata_index]
            for i in np.flatnonzero(is_root | named).tolist():
                meta = int(line.metadata_index[i])
                step = line.stat_value("step_num", i)
                if step is None:
                    step = line.stat_value("iter_num", i)
                markers.append(
                    StepMarker(
                        source="root_marker" if is_root[i] else source_of_name[meta],
                        name=plane.event_names[meta],
                        step_num=_step_number(step),
                        start_ns=int(line.start_ns[i]),
                        duration_ns=int(line.duration_ns[i]),
                        line_name=line.label,
                    )
                )
    markers.sort(key=lambda m: (m.start_ns, m.source))
    return markers
