"""XSpace (`<host>.xplane.pb`) → Profile.

Memory and speed shape this module (DESIGN.md §8): a whole-file parse holds ~7× the file size, and
touching one Python object per event costs ~2 µs. So the file is split at the protobuf wire level —
each plane's metadata is parsed on its own and each line is parsed, turned into numpy columns and
dropped before the next — and names and string stats are interned once per plane.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import mmap
import os
import re
import zlib
from operator import attrgetter
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
    """Read one `.xplane.pb` from a local path or any path TensorBoard's file layer understands.

    Local files are memory-mapped and the pages already decoded are handed back to the kernel as the
    reader moves on, so the file's bytes never sit in memory all at once.
    """
    source = os.fspath(path)
    host = host or host_from_filename(source)
    if "://" in source:
        return read_xplane_bytes(_read_remote(source), source=source, host=host)
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed below, after the mapping
    except OSError as exc:
        raise ProfileReadError(source, f"cannot open file ({exc})") from exc
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0 or handle.read(2) == b"\x1f\x8b":  # empty, or gzip: the in-memory path says why
            handle.seek(0)
            return read_xplane_bytes(handle.read(), source=source, host=host)
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            return _decode(memoryview(mapping), source, host, _PageReleaser(mapping))
        finally:
            with contextlib.suppress(BufferError):  # a slice still referenced: the GC closes it later
                mapping.close()


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
    return _decode(memoryview(data), source, host, None)


def _read_remote(source: str) -> bytes:
    # TensorBoard's own file layer (gs://, s3://, any fsspec scheme). Its stub, never `compat.tf`,
    # which would import TensorFlow when it happens to be installed.
    from tensorboard.compat.tensorflow_stub.io import gfile

    try:
        with gfile.GFile(source, "rb") as handle:
            return handle.read()
    except Exception as exc:  # the stub raises its own NotFoundError / UnimplementedError types
        raise ProfileReadError(source, f"cannot open file ({exc})") from exc


class _PageReleaser:
    """Tells the kernel that mapped pages before an offset will not be read again.

    The reader moves forward through the file; dropping what it has decoded keeps the resident part
    of a multi-GB mapping to a few MB. Pages touched again are simply read back from the file.
    """

    def __init__(self, mapping: mmap.mmap):
        self._mapping = mapping
        self._done = 0
        self._can = hasattr(mapping, "madvise") and hasattr(mmap, "MADV_DONTNEED")

    def upto(self, offset: int) -> None:
        end = offset - offset % mmap.PAGESIZE
        if self._can and end - self._done >= 16 * mmap.PAGESIZE:
            self._mapping.madvise(mmap.MADV_DONTNEED, self._done, end - self._done)
            self._done = end


def _decode(view: memoryview, source: str, host: str, releaser: Optional[_PageReleaser]) -> Profile:
    # Building millions of small containers triggers the cyclic GC over and over; none of them form
    # cycles, so it stays off while reading (restored after).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _read_space(view, source, host, releaser)
    except DecodeError as exc:
        raise ProfileReadError(source, f"corrupt protobuf data ({exc})") from exc
    finally:
        view.release()
        if gc_was_enabled:
            gc.enable()


def _read_space(view: memoryview, source: str, host: str, releaser: Optional[_PageReleaser]) -> Profile:
    planes: List[Plane] = []
    errors: List[str] = []
    warnings: List[str] = []
    hostnames: List[str] = []
    for number, wire_type, value in _fields(view, 0, len(view), source, "XSpace"):
        if wire_type != 2 or number not in (1, 2, 3, 4):
            raise ProfileReadError(
                source, f"not an XSpace profile (corrupt data: field {number}, wire type {wire_type})"
            )
        start, end = value
        with view[start:end] as payload:
            if number == 1:
                planes.append(_read_plane(payload, source, _Offset(releaser, start)))
            else:
                (errors, warnings, hostnames)[number - 2].append(_utf8(payload, source))
    if not planes:
        raise ProfileReadError(source, "the XSpace holds no planes (an empty or aborted capture)")
    return _assemble(planes, source, host, len(view), errors, warnings, hostnames)


class _Offset:
    """A releaser seen from inside a slice that starts `base` bytes into the file."""

    def __init__(self, releaser: Optional[_PageReleaser], base: int):
        self.releaser = releaser
        self.base = base

    def at(self, offset: int) -> _Offset:
        return _Offset(self.releaser, self.base + offset)

    def done(self, offset: int) -> None:
        if self.releaser is not None:
            self.releaser.upto(self.base + offset)


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
            raise ProfileReadError(source, f"{_corrupt(where)} (field number 0 at byte {pos})")
        if wire_type == 0:
            value, pos = _varint(buf, pos, end, source)
            yield number, 0, value
        elif wire_type == 2:
            length, pos = _varint(buf, pos, end, source)
            if pos + length > end:
                missing = pos + length - end
                problem = f"the file is truncated: a field of the {where} needs {missing} more bytes"
                raise ProfileReadError(source, problem)
            yield number, 2, (pos, pos + length)
            pos += length
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            if pos + size > end:
                raise ProfileReadError(source, f"the file is truncated inside {where}")
            yield number, wire_type, (pos, pos + size)
            pos += size
        else:
            raise ProfileReadError(source, f"{_corrupt(where)} (wire type {wire_type} at byte {pos})")


def _corrupt(where: str) -> str:
    return "not an XSpace profile" if where == "XSpace" else f"corrupt data in {where}"


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


def _read_plane(buf: memoryview, source: str, offset: _Offset) -> Plane:
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
        with buf[start:end] as line_bytes:
            plane.lines.append(
                _read_line(line_bytes, plane, dense, stat_names, strings, source, offset.at(start))
            )
    offset.done(len(buf))
    return plane


def _encode_varint_field(number: int, value: int) -> bytes:
    return schema.encode_varint(number << 3) + schema.encode_varint(value)


def _raw_field(number: int, wire_type: int, payload: memoryview) -> bytes:
    key = schema.encode_varint((number << 3) | wire_type)
    if wire_type == 2:
        return key + schema.encode_varint(len(payload)) + bytes(payload)
    return key + bytes(payload)


# Events are parsed a few MB at a time: a parsed message holds ~7x its bytes, and one GPU stream of a
# large profile can be hundreds of MB on its own.
_CHUNK_BYTES = 1 << 20
_StatPieces = Dict[str, List[Tuple[np.ndarray, str, np.ndarray]]]


def _read_line(
    buf: memoryview,
    plane: Plane,
    dense: Dict[int, int],
    stat_names: Dict[int, str],
    strings: _Interner,
    source: str,
    offset: _Offset,
) -> Line:
    """Parse one XLine chunk by chunk into columns; events and stats are touched by C-level loops only."""
    header_parts: List[bytes] = []
    chunks = list(_event_chunks(buf, source, header_parts))  # one walk; sizes the columns up front
    total = sum(n for _, _, n in chunks)
    metadata_ids = np.empty(total, dtype=np.int64)
    start_ns = np.empty(total, dtype=np.int64)  # offset_ps until converted below
    duration_ns = np.empty(total, dtype=np.int64)  # duration_ps until converted below
    pieces: _StatPieces = {}
    count = 0
    for start, end, _ in chunks:
        events = schema.XLine.FromString(bytes(buf[start:end])).events
        n = len(events)
        block = np.array([(e.metadata_id, e.offset_ps, e.duration_ps) for e in events], dtype=np.int64)
        block = block.reshape(n, 3)
        metadata_ids[count : count + n] = block[:, 0]
        start_ns[count : count + n] = block[:, 1]
        duration_ns[count : count + n] = block[:, 2]
        del block
        per_event = [event.stats for event in events]
        stats_per_event = np.fromiter(map(len, per_event), dtype=np.int32, count=n)
        flat = [stat for stats in per_event for stat in stats]
        owners = np.repeat(np.arange(count, count + n, dtype=np.int32), stats_per_event)
        _collect_stats(flat, owners, stat_names, strings, pieces)
        count += n
        del events, flat, per_event
        offset.done(end)
    header = schema.XLine.FromString(b"".join(header_parts))
    metadata_index = _dense_indices(metadata_ids, plane, dense)
    del metadata_ids
    start_ns //= 1000
    start_ns += header.timestamp_ns
    duration_ns += 500
    duration_ns //= 1000
    stats = {name: _combine(parts, count, strings) for name, parts in pieces.items()}
    _merge_metadata_stats(stats, metadata_index, plane, strings)
    if count > 1 and np.any(np.diff(start_ns) < 0):
        order = np.argsort(start_ns, kind="stable")
        start_ns, duration_ns, metadata_index = start_ns[order], duration_ns[order], metadata_index[order]
        stats = {k: _reordered(c, order) for k, c in stats.items()}
    return Line(
        id=header.id,
        name=header.name,
        display_name=header.display_name,
        plane=plane,
        start_ns=start_ns,
        duration_ns=duration_ns,
        metadata_index=metadata_index,
        stats=stats,
    )


def _event_chunks(
    buf: memoryview, source: str, header_parts: List[bytes]
) -> Iterator[Tuple[int, int, int]]:
    """(start, end, event count) of runs of consecutive `events` fields; each is a valid XLine encoding.

    Other XLine fields go to header_parts. The common case — tag 0x22 followed by a one- or two-byte
    length — is decoded inline: this loop runs once per event.
    """
    pos, end = 0, len(buf)
    chunk_start = -1
    in_chunk = 0
    while pos < end:
        if buf[pos] == 0x22:  # field 4 (events), length-delimited
            field_start = pos
            first = buf[pos + 1] if pos + 1 < end else 0x80
            if first < 0x80:
                length, pos = first, pos + 2
            else:
                length, pos = _varint(buf, pos + 1, end, source)
            if pos + length > end:
                missing = pos + length - end
                raise ProfileReadError(source, f"the file is truncated: an event needs {missing} more bytes")
            if chunk_start < 0:
                chunk_start = field_start
            pos += length
            in_chunk += 1
            if pos - chunk_start >= _CHUNK_BYTES:
                yield chunk_start, pos, in_chunk
                chunk_start, in_chunk = -1, 0
            continue
        field_end = _field_end(buf, pos, end, source)
        header_parts.append(bytes(buf[pos:field_end]))  # a field's raw bytes are a valid encoding
        pos = field_end
    if chunk_start >= 0:
        yield chunk_start, end, in_chunk


def _field_end(buf: memoryview, pos: int, end: int, source: str) -> int:
    """Where the field starting at pos ends."""
    key, pos = _varint(buf, pos, end, source)
    wire_type = key & 7
    if wire_type == 0:
        return _varint(buf, pos, end, source)[1]
    if wire_type == 2:
        length, pos = _varint(buf, pos, end, source)
        if pos + length > end:
            raise ProfileReadError(source, "the file is truncated inside a line")
        return pos + length
    if wire_type in (1, 5):
        return pos + (8 if wire_type == 1 else 4)
    raise ProfileReadError(source, f"corrupt data in XLine (wire type {wire_type})")


def _dense_indices(metadata_ids: np.ndarray, plane: Plane, dense: Dict[int, int]) -> np.ndarray:
    """Metadata ids → dense int32 indices into the plane's name table (via a lookup table: no sort)."""
    if metadata_ids.size == 0:
        return np.zeros(0, dtype=np.int32)
    low, high = int(metadata_ids.min()), int(metadata_ids.max())
    if low < 0 or high > 4 * (len(dense) + metadata_ids.size):  # sparse or odd ids: sort instead
        unique, inverse = np.unique(metadata_ids, return_inverse=True)
        mapped = np.array([_dense_index(m, plane, dense) for m in unique.tolist()], dtype=np.int32)
        return mapped[inverse.reshape(-1)]
    table = np.full(high + 1, -1, dtype=np.int32)
    for metadata_id, index in dense.items():
        if 0 <= metadata_id <= high:
            table[metadata_id] = index
    result = table[metadata_ids]
    missing = np.unique(metadata_ids[result < 0])
    if missing.size:
        for metadata_id in missing.tolist():
            table[metadata_id] = _dense_index(metadata_id, plane, dense)
        result = table[metadata_ids]
    return result


def _dense_index(metadata_id: int, plane: Plane, dense: Dict[int, int]) -> int:
    found = dense.get(metadata_id)
    return found if found is not None else _placeholder_metadata(plane, dense, metadata_id)


_VALUE_DEFAULTS = {"ref_value": 0, "str_value": "", "int64_value": 0, "uint64_value": 0, "double_value": 0.0}


def _collect_stats(flat: List[Any], owners: np.ndarray, stat_names: Dict[int, str], strings: _Interner,
                   pieces: _StatPieces) -> None:
    """Group XStats (flat, owned by event `owners[k]`) by stat into typed numpy pieces per stat name.

    One stat id keeps one value kind in practice, so the kind is read once per id and the values with
    one attribute read each; values equal to the kind's default (what an unset field reads as) are
    checked one by one, so a stat id whose kind varies is still decoded exactly.
    """
    if not flat:
        return
    metadata_ids = np.fromiter((stat.metadata_id for stat in flat), dtype=np.int64, count=len(flat))
    order = np.argsort(metadata_ids, kind="stable")
    unique, starts = np.unique(metadata_ids[order], return_index=True)
    bounds = starts.tolist() + [len(flat)]
    for g, metadata_id in enumerate(unique.tolist()):
        members = order[bounds[g] : bounds[g + 1]]
        member_stats = [flat[j] for j in members.tolist()]
        kind = member_stats[0].WhichOneof("value")
        by_kind: Dict[Optional[str], Tuple[List[int], List[Any]]] = {}
        if kind in _VALUE_DEFAULTS:
            values = list(map(attrgetter(kind), member_stats))
            default = _VALUE_DEFAULTS[kind]
            unsure = [k for k, v in enumerate(values) if v == default]
            sure = np.ones(len(values), dtype=bool)
            sure[unsure] = False
            by_kind[kind] = (np.flatnonzero(sure).tolist(), [v for v, ok in zip(values, sure.tolist()) if ok])
        else:
            unsure = range(len(member_stats))
        for k in unsure:
            real = member_stats[k].WhichOneof("value")
            slot = by_kind.setdefault(real, ([], []))
            slot[0].append(k)
            slot[1].append(getattr(member_stats[k], real) if real else None)
        name = stat_names.get(metadata_id, str(metadata_id))
        for value_kind, (local, values) in by_kind.items():
            if value_kind in (None, "bytes_value") or not local:
                continue
            where = owners[members[local]]
            typed = _typed_values(value_kind, values, stat_names, strings)
            pieces.setdefault(name, []).append((where, *typed))


def _typed_values(kind: str, values: List[Any], stat_names: Dict[int, str],
                  strings: _Interner) -> Tuple[str, np.ndarray]:
    if kind == "ref_value":  # the string is the name of the referenced stat metadata
        refs = np.array(values, dtype=np.uint64)
        unique, inverse = np.unique(refs, return_inverse=True)
        ids = np.array([strings.id(stat_names.get(int(r), "")) for r in unique.tolist()], dtype=np.int32)
        return "str", ids[inverse.reshape(-1)]
    if kind == "str_value":
        return "str", np.array([strings.id(v) for v in values], dtype=np.int32)
    if kind == "double_value":
        return "float", np.array(values, dtype=np.float64)
    dtype = np.uint64 if kind == "uint64_value" else np.int64
    return "int", np.array(values, dtype=dtype).astype(np.int64)  # uint64 ids wrap into int64


def _combine(pieces: List[Tuple[np.ndarray, str, np.ndarray]], count: int, strings: _Interner) -> StatColumn:
    """One sparse column from typed pieces; mixed kinds widen to float, or to strings."""
    kinds = {kind for _, kind, _ in pieces}
    kind = "str" if "str" in kinds else "float" if "float" in kinds else "int"
    where_parts, value_parts = [], []
    for where, piece_kind, piece in pieces:
        if kind == "str" and piece_kind != "str":
            piece = np.array([strings.id(_number_text(v)) for v in piece.tolist()], dtype=np.int32)
        where_parts.append(where)
        value_parts.append(piece.astype(np.float64) if kind == "float" else piece)
    indices = np.concatenate(where_parts) if len(where_parts) > 1 else where_parts[0]
    data = np.concatenate(value_parts) if len(value_parts) > 1 else value_parts[0]
    if indices.size > 1 and not np.all(indices[1:] > indices[:-1]):  # chunks usually arrive in order
        order = np.argsort(indices, kind="stable")
        indices, data = indices[order], data[order]
    if indices.size > 1:  # an event repeating a stat: keep the first, as the profiler's readers do
        keep = np.concatenate(([True], np.diff(indices) != 0))
        indices, data = indices[keep], data[keep]
    return StatColumn(kind, indices, data, count)


def _reordered(column: StatColumn, order: np.ndarray) -> StatColumn:
    """The column after the line's events were put in `order` (old index at each new position)."""
    new_position = np.empty_like(order)
    new_position[order] = np.arange(order.size)
    indices = new_position[column.indices]
    by_index = np.argsort(indices, kind="stable")
    return StatColumn(column.kind, indices[by_index], column.data[by_index], column.count)


def _number_text(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _placeholder_metadata(plane: Plane, dense: Dict[int, int], metadata_id: int) -> int:
    """An event whose metadata is missing still counts; it gets a visible placeholder name."""
    index = dense[metadata_id] = len(plane.event_names)
    plane.event_names.append(f"<unknown event {metadata_id}>")
    plane.event_display_names.append("")
    plane.metadata_stats.append({})
    return index


def _typed_piece(values: List[Any], strings: _Interner) -> Tuple[str, np.ndarray]:
    if any(isinstance(v, str) for v in values):
        return "str", np.array([strings.id(v if isinstance(v, str) else _number_text(v)) for v in values],
                               dtype=np.int32)
    if any(isinstance(v, float) for v in values):
        return "float", np.array(values, dtype=np.float64)
    return "int", np.array([v if v < (1 << 63) else v - (1 << 64) for v in values], dtype=np.int64)


def _merge_metadata_stats(
    stats: Dict[str, StatColumn], metadata_index: np.ndarray, plane: Plane, strings: _Interner
) -> None:
    """Per-op constant stats sit on the event metadata; fill them in where the event has none."""
    if metadata_index.size == 0:
        return
    used = np.unique(metadata_index).tolist()
    names = {k for m in used for k in plane.metadata_stats[m]}
    count = int(metadata_index.size)
    for name in names:
        owners = [m for m in used if name in plane.metadata_stats[m]]
        kind, per_owner = _typed_piece([plane.metadata_stats[m][name] for m in owners], strings)
        slot = np.full(len(plane.event_names), -1, dtype=np.int64)
        slot[owners] = np.arange(len(owners))
        events = np.flatnonzero(slot[metadata_index] >= 0).astype(np.int32)
        existing = stats.get(name)
        if existing is not None:
            events = events[~np.isin(events, existing.indices, assume_unique=True)]
        if events.size == 0:
            continue
        piece = (events, kind, per_owner[slot[metadata_index[events]]])
        if existing is None:
            stats[name] = _combine([piece], count, strings)
        else:
            stats[name] = _combine([(existing.indices, existing.kind, existing.data), piece], count, strings)


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
    ids = np.full(len(line), -1, dtype=np.int32)
    if column.kind == "str":
        ids[column.indices] = column.data  # plane strings == device table strings (shared list)
    else:
        ids[column.indices] = [strings.id(_number_text(v)) for v in column.data.tolist()]
    return ids


def _int_stat(line: Line, stat: str) -> np.ndarray:
    column = line.stats.get(stat)
    values = np.full(len(line), -1, dtype=np.int64)
    if column is not None and column.kind != "str":
        values[column.indices] = column.data
    return values


def _copy_sizes(line: Line, details: Optional[StatColumn]) -> np.ndarray:
    """Bytes per event from `memcpy_details` (parsed once per distinct string), -1 where unknown."""
    sizes = np.full(len(line), -1, dtype=np.int64)
    if details is None or details.kind != "str":
        return sizes
    unique, inverse = np.unique(details.data, return_inverse=True)
    parsed = np.array([parse_memcpy_bytes(line.plane.strings[i]) for i in unique.tolist()], dtype=np.int64)
    sizes[details.indices] = parsed[inverse.reshape(-1)]
    return sizes


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
        copies = is_memcpy[line.metadata_index]  # fancy indexing: a fresh array, safe to modify
        details_column = line.stats.get("memcpy_details")
        if details_column is not None:  # any event CUPTI/ROCm describes as a copy is one
            copies[details_column.indices] = True
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
            copy_parts["bytes"].append(_copy_sizes(line, details_column)[copies])
            copy_parts["line"].append(np.full(int(copies.sum()), line_index, dtype=np.int32))

    def cat(parts: List[np.ndarray], dtype) -> np.ndarray:
        if not parts:
            return np.zeros(0, dtype=dtype)
        joined = np.concatenate(parts) if len(parts) > 1 else parts[0]
        return joined.astype(dtype, copy=False)

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
    c_order = in_order(c_start)
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
    mask = np.zeros(len(line), dtype=bool)
    if root is not None and root.kind != "str":
        mask[root.indices[root.data.astype(np.float64) == 1]] = True
    return mask


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
