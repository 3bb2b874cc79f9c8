"""XSpace (`<host>.xplane.pb`) → Profile.

Memory and speed shape this module (DESIGN.md §8): a whole-file parse holds ~7× the file size, and
touching one Python object per event costs ~2 µs. So the file is split at the protobuf wire level —
each plane's metadata is parsed on its own and each line is parsed, turned into numpy columns and
dropped before the next — and names and string stats are interned once per plane.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import numpy as np
from google.protobuf.message import DecodeError

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.model import (
    MEMCPY_DIRECTIONS,
    Device,
    KernelDetails,
    KernelTable,
    Line,
    MemcpyTable,
    Plane,
    Profile,
    StatColumn,
    StepMarker,
)
from tb_plugin_advisor.readers import xspace_schema as schema

XPLANE_SUFFIX = ".xplane.pb"

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

# Step markers, in the order the analyses prefer them (DESIGN.md §5).
KERAS3_MARKER_NAMES = frozenset({"Profiled batch"})
LEGACY_MARKER_NAMES = frozenset({"TraceContext"})

_TRACEME_ENCODED = re.compile(r"^(?P<name>[^#]*)#(?P<args>[^#]*)#$")
_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d*(?:[eE][-+]?\d+)?$")


# ---------------------------------------------------------------------------------------------------
# Entry points


def read_xplane(path: Union[str, os.PathLike], host: Optional[str] = None) -> Profile:
    """Read one `.xplane.pb` from a local path or any path TensorBoard's file layer understands."""
    source = os.fspath(path)
    try:
        data = _read_bytes(source)
    except OSError as exc:
        raise ProfileReadError(source, f"cannot open file ({exc})") from exc
    return read_xplane_bytes(data, source=source, host=host or host_from_filename(source))


def host_from_filename(path: str) -> str:
    """`…/<session>/<host>.xplane.pb` → `<host>`."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return base[: -len(XPLANE_SUFFIX)] if base.endswith(XPLANE_SUFFIX) else base


def read_xplane_bytes(data: bytes, source: str = "<bytes>", host: str = "") -> Profile:
    """Decode an XSpace held in memory; raises ProfileReadError naming `source` on bad input."""
    if not data:
        raise ProfileReadError(source, "the file is empty (0 bytes)")
    if data[:2] == b"\x1f\x8b":  # some tools gzip profiles; be kind
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ProfileReadError(source, f"gzip data is truncated or corrupt ({exc})") from exc
    view = memoryview(data)
    planes: List[Plane] = []
    errors: List[str] = []
    warnings: List[str] = []
    hostnames: List[str] = []
    try:
        for number, wire_type, value in _fields(view, 0, len(view), source, "XSpace"):
            if wire_type != 2:
                raise ProfileReadError(source, f"not an XSpace: field {number} has wire type {wire_type}")
            if number == 1:
                planes.append(_read_plane(view[value[0] : value[1]], source))
            elif number in (2, 3, 4):
                text = _utf8(view[value[0] : value[1]], source)
                (errors, warnings, hostnames)[number - 2].append(text)
            else:
                raise ProfileReadError(source, f"not an XSpace: unexpected top-level field {number}")
    except DecodeError as exc:
        raise ProfileReadError(source, f"corrupt protobuf data ({exc})") from exc
    if not planes:
        raise ProfileReadError(source, "the XSpace holds no planes (an empty or aborted capture)")
    return _assemble(planes, source, host, len(data), errors, warnings, hostnames)


def _read_bytes(source: str) -> bytes:
    if "://" not in source:
        return Path(source).read_bytes()
    # TensorBoard's own file layer (gs://, s3://, any fsspec scheme). Its stub, never `compat.tf`,
    # which would import TensorFlow when it happens to be installed.
    from tensorboard.compat.tensorflow_stub.io import gfile

    try:
        with gfile.GFile(source, "rb") as handle:
            return handle.read()
    except Exception as exc:  # the stub raises its own NotFoundError / UnimplementedError types
        raise OSError(str(exc)) from exc


# ---------------------------------------------------------------------------------------------------
# Wire-level splitting


def _varint(buf: memoryview, pos: int, end: int, source: str) -> Tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ProfileReadError(source, "truncated or corrupt data (bad varint)")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(buf: memoryview, pos: int, end: int, source: str, where: str) -> Iterator[Tuple[int, int, Any]]:
    """Yield (field number, wire type, value) where value is an int or a (start, end) slice."""
    while pos < end:
        key, pos = _varint(buf, pos, end, source)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProfileReadError(source, f"corrupt data in {where} (field number 0)")
        if wire_type == 0:
            value, pos = _varint(buf, pos, end, source)
            yield number, 0, value
        elif wire_type == 2:
            length, pos = _varint(buf, pos, end, source)
            if pos + length > end:
                raise ProfileReadError(
                    source, f"the file is truncated: a {where} field needs {pos + length - end} more bytes"
                )
            yield number, 2, (pos, pos + length)
            pos += length
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            if pos + size > end:
                raise ProfileReadError(source, f"the file is truncated inside {where}")
            yield number, wire_type, (pos, pos + size)
            pos += size
        else:
            raise ProfileReadError(source, f"corrupt data in {where} (wire type {wire_type})")


def _utf8(raw: memoryview, source: str) -> str:
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileReadError(source, f"corrupt text field ({exc})") from exc


# ---------------------------------------------------------------------------------------------------
# Planes and lines


class _Interner:
    """Strings → dense ids, so columns hold small ints and each distinct string exists once."""

    def __init__(self) -> None:
        self.strings: List[str] = []
        self._ids: Dict[str, int] = {}

    def id(self, text: str) -> int:
        found = self._ids.get(text)
        if found is None:
            found = self._ids[text] = len(self.strings)
            self.strings.append(text)
        return found


def _parse_value(text: str) -> Any:
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def split_traceme_name(name: str) -> Tuple[str, Dict[str, Any]]:
    """`train#step_num=5,_r=1#` → ("train", {"step_num": 5, "_r": 1}); other names unchanged."""
    if not name.endswith("#"):
        return name, {}
    match = _TRACEME_ENCODED.match(name)
    if not match:
        return name, {}
    stats: Dict[str, Any] = {}
    for pair in match.group("args").split(","):
        key, sep, value = pair.partition("=")
        if sep and key:
            stats[key.strip()] = _parse_value(value.strip())
    return match.group("name"), stats


def _stat_value(stat, stat_names: Dict[int, str]) -> Any:
    kind = stat.WhichOneof("value")
    if kind == "ref_value":
        return stat_names.get(stat.ref_value, "")
    if kind == "str_value":
        return stat.str_value
    if kind == "int64_value":
        return stat.int64_value
    if kind == "uint64_value":
        return stat.uint64_value
    if kind == "double_value":
        return stat.double_value
    if kind == "bytes_value":
        return bytes(stat.bytes_value)
    return None


def _read_plane(buf: memoryview, source: str) -> Plane:
    header_parts: List[bytes] = []
    line_slices: List[Tuple[int, int]] = []
    for number, wire_type, value in _fields(buf, 0, len(buf), source, "XPlane"):
        if number == 3 and wire_type == 2:
            line_slices.append(value)
        elif wire_type == 0:
            header_parts.append(_encode_varint_field(number, value))
        else:
            start, end = value
            header_parts.append(_raw_field(number, wire_type, buf[start:end]))
    header = schema.XPlane.FromString(b"".join(header_parts))

    stat_names = {key: meta.name for key, meta in header.stat_metadata.items()}
    strings = _Interner()
    metadata_ids = sorted(header.event_metadata.keys())
    dense = {mid: i for i, mid in enumerate(metadata_ids)}
    event_names: List[str] = []
    display_names: List[str] = []
    metadata_stats: List[Dict[str, Any]] = []
    for mid in metadata_ids:
        meta = header.event_metadata[mid]
        name, encoded = split_traceme_name(meta.name)
        stats = dict(encoded)
        for stat in meta.stats:
            value = _stat_value(stat, stat_names)
            if value is not None and not isinstance(value, bytes):
                stats[stat_names.get(stat.metadata_id, str(stat.metadata_id))] = value
        event_names.append(name)
        display_names.append(meta.display_name)
        metadata_stats.append(stats)
    plane_stats = {}
    for stat in header.stats:
        value = _stat_value(stat, stat_names)
        if value is not None and not isinstance(value, bytes):
            plane_stats[stat_names.get(stat.metadata_id, str(stat.metadata_id))] = value

    plane = Plane(
        id=header.id,
        name=header.name,
        event_names=event_names,
        event_display_names=display_names,
        metadata_stats=metadata_stats,
        stats=plane_stats,
        strings=strings.strings,
    )
    del header
    for start, end in line_slices:
        plane.lines.append(_read_line(buf[start:end], plane, dense, stat_names, strings, source))
    return plane


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _encode_varint_field(number: int, value: int) -> bytes:
    return _encode_varint(number << 3) + _encode_varint(value)


def _raw_field(number: int, wire_type: int, payload: memoryview) -> bytes:
    key = _encode_varint((number << 3) | wire_type)
    if wire_type == 2:
        return key + _encode_varint(len(payload)) + bytes(payload)
    return key + bytes(payload)


def _read_line(
    buf: memoryview,
    plane: Plane,
    dense: Dict[int, int],
    stat_names: Dict[int, str],
    strings: _Interner,
    source: str,
) -> Line:
    line = schema.XLine.FromString(bytes(buf))
    events = line.events
    count = len(events)
    metadata_index = np.empty(count, dtype=np.int32)
    offset_ps = np.empty(count, dtype=np.int64)
    duration_ps = np.empty(count, dtype=np.int64)
    # stat name -> (event indices, values)
    found: Dict[str, Tuple[List[int], List[Any]]] = {}
    unknown_metadata = 0
    for i, event in enumerate(events):
        index = dense.get(event.metadata_id)
        if index is None:
            unknown_metadata += 1
            index = _placeholder_metadata(plane, dense, event.metadata_id)
        metadata_index[i] = index
        offset_ps[i] = event.offset_ps
        duration_ps[i] = event.duration_ps
        if event.stats:
            for stat in event.stats:
                value = _stat_value(stat, stat_names)
                if value is None or isinstance(value, bytes):
                    continue
                name = stat_names.get(stat.metadata_id, str(stat.metadata_id))
                slot = found.get(name)
                if slot is None:
                    slot = found[name] = ([], [])
                slot[0].append(i)
                slot[1].append(value)
    start_ns = line.timestamp_ns + offset_ps // 1000
    duration_ns = (duration_ps + 500) // 1000
    stats = {name: _column(idx, vals, count, strings) for name, (idx, vals) in found.items()}
    _merge_metadata_stats(stats, metadata_index, plane, strings)
    if count > 1 and np.any(np.diff(start_ns) < 0):
        order = np.argsort(start_ns, kind="stable")
        start_ns, duration_ns, metadata_index = start_ns[order], duration_ns[order], metadata_index[order]
        stats = {k: StatColumn(c.kind, c.values[order], c.present[order]) for k, c in stats.items()}
    return Line(
        id=line.id,
        name=line.name,
        display_name=line.display_name,
        plane=plane,
        start_ns=start_ns,
        duration_ns=duration_ns,
        metadata_index=metadata_index,
        stats=stats,
    )


def _placeholder_metadata(plane: Plane, dense: Dict[int, int], metadata_id: int) -> int:
    """An event whose metadata is missing still counts; it gets a visible placeholder name."""
    index = dense[metadata_id] = len(plane.event_names)
    plane.event_names.append(f"<unknown event {metadata_id}>")
    plane.event_display_names.append("")
    plane.metadata_stats.append({})
    return index


def _column(indices: List[int], values: List[Any], count: int, strings: _Interner) -> StatColumn:
    present = np.zeros(count, dtype=bool)
    present[indices] = True
    if any(isinstance(v, str) for v in values):
        ids = np.full(count, -1, dtype=np.int32)
        ids[indices] = [strings.id(v if isinstance(v, str) else str(v)) for v in values]
        return StatColumn("str", ids, present)
    if any(isinstance(v, float) for v in values):
        floats = np.zeros(count, dtype=np.float64)
        floats[indices] = values
        return StatColumn("float", floats, present)
    ints = np.zeros(count, dtype=np.int64)
    ints[indices] = [v if v < (1 << 63) else v - (1 << 64) for v in values]  # uint64 ids wrap
    return StatColumn("int", ints, present)


def _merge_metadata_stats(
    stats: Dict[str, StatColumn], metadata_index: np.ndarray, plane: Plane, strings: _Interner
) -> None:
    """Per-op constant stats sit on the event metadata; fill them in where the event has none."""
    if metadata_index.size == 0:
        return
    used = np.unique(metadata_index)
    names = {k for m in used.tolist() for k in plane.metadata_stats[m]}
    for name in names:
        per_meta = [(m, plane.metadata_stats[m].get(name)) for m in used.tolist()]
        per_meta = [(m, v) for m, v in per_meta if v is not None]
        meta_column = _column(
            [m for m, _ in per_meta], [v for _, v in per_meta], len(plane.event_names), strings
        )
        from_meta = meta_column.present[metadata_index]
        existing = stats.get(name)
        if existing is None:
            stats[name] = StatColumn(meta_column.kind, meta_column.values[metadata_index], from_meta)
            continue
        fill = from_meta & ~existing.present
        if not fill.any():
            continue
        if existing.kind != meta_column.kind:
            existing, meta_column = _as_common_kind(existing, meta_column, plane, strings)
            stats[name] = existing
        existing.values[fill] = meta_column.values[metadata_index][fill]
        existing.present[fill] = True


def _as_common_kind(
    a: StatColumn, b: StatColumn, plane: Plane, strings: _Interner
) -> Tuple[StatColumn, StatColumn]:
    def to_str(c: StatColumn) -> StatColumn:
        if c.kind == "str":
            return c
        ids = np.array([strings.id(str(v)) for v in c.values.tolist()], dtype=np.int32)
        return StatColumn("str", ids, c.present)

    if "str" in (a.kind, b.kind):
        return to_str(a), to_str(b)
    return (StatColumn("float", a.values.astype(np.float64), a.present),
            StatColumn("float", b.values.astype(np.float64), b.present))


# ---------------------------------------------------------------------------------------------------
# Devices, kernels, copies, step markers


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


def _string_ids(line: Line, stat: str, strings: _Interner, plane: Plane) -> np.ndarray:
    column = line.stats.get(stat)
    if column is None:
        return np.full(len(line), -1, dtype=np.int32)
    if column.kind == "str":
        ids = np.where(column.present, column.values, -1).astype(np.int32)
        return ids  # plane strings == device table strings (shared list)
    return np.array(
        [strings.id(str(v)) if p else -1 for v, p in zip(column.values.tolist(), column.present.tolist())],
        dtype=np.int32,
    )


def _int_stat(line: Line, stat: str) -> np.ndarray:
    column = line.stats.get(stat)
    if column is None or column.kind == "str":
        return np.full(len(line), -1, dtype=np.int64)
    return np.where(column.present, column.values, -1).astype(np.int64)


def _build_device(plane: Plane) -> Device:
    strings = _Interner()
    strings.strings = plane.strings  # extend the plane's own table
    strings._ids = {s: i for i, s in enumerate(plane.strings)}
    memcpy_direction_by_name = {
        i: MEMCPY_DIRECTIONS.index(MEMCPY_NAMES[name])
        for i, name in enumerate(plane.event_names)
        if name in MEMCPY_NAMES
    }
    is_memcpy = np.zeros(len(plane.event_names) + 1, dtype=bool)
    direction_of = np.full(len(plane.event_names) + 1, MEMCPY_DIRECTIONS.index("other"), dtype=np.int8)
    for i, code in memcpy_direction_by_name.items():
        is_memcpy[i] = True
        direction_of[i] = code
    kernel_parts: Dict[str, List[np.ndarray]] = {k: [] for k in (
        "start", "dur", "name", "line", "tf_op", "hlo_op", "hlo_module", "details", "corr")}
    copy_parts: Dict[str, List[np.ndarray]] = {k: [] for k in ("start", "dur", "dir", "bytes", "line")}
    for line_index in _activity_lines(plane):
        line = plane.lines[line_index]
        if len(line) == 0:
            continue
        copies = is_memcpy[line.metadata_index]
        details_column = line.stats.get("memcpy_details")
        if details_column is not None:  # any event CUPTI/ROCm describes as a copy is one
            copies = copies | details_column.present
        kernels = ~copies
        if kernels.any():
            kernel_parts["start"].append(line.start_ns[kernels])
            kernel_parts["dur"].append(line.duration_ns[kernels])
            kernel_parts["name"].append(line.metadata_index[kernels])
            kernel_parts["line"].append(np.full(int(kernels.sum()), line_index, dtype=np.int32))
            for key, stat in (("tf_op", "tf_op"), ("hlo_op", "hlo_op"), ("hlo_module", "hlo_module"),
                              ("details", "kernel_details")):
                kernel_parts[key].append(_string_ids(line, stat, strings, plane)[kernels])
            kernel_parts["corr"].append(_int_stat(line, "correlation_id")[kernels])
        if copies.any():
            copy_parts["start"].append(line.start_ns[copies])
            copy_parts["dur"].append(line.duration_ns[copies])
            copy_parts["dir"].append(direction_of[line.metadata_index[copies]])
            details = line.stat_strings("memcpy_details")
            sizes = np.array([parse_memcpy_bytes(d) if d else -1 for d in details], dtype=np.int64)
            copy_parts["bytes"].append(sizes[copies])
            copy_parts["line"].append(np.full(int(copies.sum()), line_index, dtype=np.int32))

    def cat(parts: List[np.ndarray], dtype) -> np.ndarray:
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)

    k_start = cat(kernel_parts["start"], np.int64)
    k_order = np.argsort(k_start, kind="stable")
    kernels = KernelTable(
        names=plane.event_names,
        strings=plane.strings,
        start_ns=k_start[k_order],
        duration_ns=cat(kernel_parts["dur"], np.int64)[k_order],
        name_index=cat(kernel_parts["name"], np.int32)[k_order],
        line_index=cat(kernel_parts["line"], np.int32)[k_order],
        tf_op=cat(kernel_parts["tf_op"], np.int32)[k_order],
        hlo_op=cat(kernel_parts["hlo_op"], np.int32)[k_order],
        hlo_module=cat(kernel_parts["hlo_module"], np.int32)[k_order],
        details=cat(kernel_parts["details"], np.int32)[k_order],
        correlation_id=cat(kernel_parts["corr"], np.int64)[k_order],
    )
    c_start = cat(copy_parts["start"], np.int64)
    c_order = np.argsort(c_start, kind="stable")
    memcpys = MemcpyTable(
        start_ns=c_start[c_order],
        duration_ns=cat(copy_parts["dur"], np.int64)[c_order],
        direction=cat(copy_parts["dir"], np.int8)[c_order],
        bytes=cat(copy_parts["bytes"], np.int64)[c_order],
        line_index=cat(copy_parts["line"], np.int32)[c_order],
    )
    stats = plane.stats
    major, minor = stats.get("compute_cap_major"), stats.get("compute_cap_minor")
    capability = (int(major), int(minor or 0)) if major is not None else None
    vendor = str(stats.get("device_vendor") or "")
    if not vendor and plane.kind == "tpu":
        vendor = "Google"
    if not vendor and capability is not None and plane.kind == "gpu":
        vendor = "Nvidia"  # older CUPTI writers record no vendor; only NVIDIA GPUs had compute_cap then
    model = str(
        stats.get("gpu_device_name") or stats.get("device_type_string") or stats.get("device_name") or ""
    )

    def number(key: str) -> Optional[float]:
        value = stats.get(key)
        return float(value) if isinstance(value, (int, float)) else None

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
    if root is None or root.kind == "str":
        return np.zeros(len(line), dtype=bool)
    return root.present & (root.values.astype(np.float64) == 1)


def _marker_source(event_name: str) -> str:
    if event_name in KERAS3_MARKER_NAMES:
        return "keras3_marker"
    return "legacy_marker" if event_name in LEGACY_MARKER_NAMES else ""


def _step_markers(planes: List[Plane]) -> List[StepMarker]:
    markers: List[StepMarker] = []
    for plane in (p for p in planes if p.kind == "host"):
        source_of_name = np.array([_marker_source(n) for n in plane.event_names] + [""], dtype=object)
        for line in plane.lines:
            if len(line) == 0:
                continue
            is_root = _root_mask(line)
            named = source_of_name[line.metadata_index] != ""
            for i in np.flatnonzero(is_root | named).tolist():
                meta = int(line.metadata_index[i])
                step = line.stat_value("step_num", i)
                if step is None:
                    step = line.stat_value("iter_num", i)
                markers.append(
                    StepMarker(
                        source="root_marker" if is_root[i] else source_of_name[meta],
                        name=plane.event_names[meta],
                        step_num=int(step) if isinstance(step, (int, float)) else None,
                        start_ns=int(line.start_ns[i]),
                        duration_ns=int(line.duration_ns[i]),
                        line_name=line.label,
                    )
                )
    markers.sort(key=lambda m: (m.start_ns, m.source))
    return markers


def _assemble(
    planes: List[Plane],
    source: str,
    host: str,
    size: int,
    errors: List[str],
    warnings: List[str],
    hostnames: List[str],
) -> Profile:
    devices = [_build_device(p) for p in planes if p.kind in ("gpu", "tpu", "device")]
    devices.sort(key=lambda d: (d.kind, d.ordinal))
    notes = list(warnings)
    unknown = sum(1 for p in planes for n in p.event_names if n.startswith("<unknown event "))
    if unknown:
        notes.append(
            f"{unknown} event(s) reference metadata the file does not define; shown as <unknown event N>"
        )
    return Profile(
        path=source,
        host=host or (hostnames[0] if hostnames else ""),
        size_bytes=size,
        planes=planes,
        devices=devices,
        step_markers=_step_markers(planes),
        hostnames=hostnames,
        errors=errors,
        warnings=notes,
    )
