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
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
from google.protobuf.message import DecodeError

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.model import (
    Line,
    Plane,
    Profile,
    StatColumn,
    StringTable,
)
from tb_plugin_advisor.readers import xspace_schema as schema
from tb_plugin_advisor.readers.devices import build_device, step_markers
from tb_plugin_advisor.readers.wire import (
    Offset,
    PageReleaser,
    encode_varint_field,
    event_chunks,
    fields,
    raw_field,
    utf8,
)

XPLANE_SUFFIX = ".xplane.pb"

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
            return _decode(memoryview(mapping), source, host, PageReleaser(mapping))
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


def _decode(view: memoryview, source: str, host: str, releaser: Optional[PageReleaser]) -> Profile:
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


def _read_space(view: memoryview, source: str, host: str, releaser: Optional[PageReleaser]) -> Profile:
    planes: List[Plane] = []
    errors: List[str] = []
    warnings: List[str] = []
    hostnames: List[str] = []
    for number, wire_type, value in fields(view, 0, len(view), source, "XSpace"):
        if wire_type != 2 or number not in (1, 2, 3, 4):
            raise ProfileReadError(
                source, f"not an XSpace profile (corrupt data: field {number}, wire type {wire_type})"
            )
        start, end = value
        with view[start:end] as payload:
            if number == 1:
                planes.append(_read_plane(payload, source, Offset(releaser, start)))
            else:
                (errors, warnings, hostnames)[number - 2].append(utf8(payload, source))
    if not planes:
        raise ProfileReadError(source, "the XSpace holds no planes (an empty or aborted capture)")
    return _assemble(planes, source, host, len(view), errors, warnings, hostnames)


# ---------------------------------------------------------------------------------------------------
# Planes and lines


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


def _read_plane(buf: memoryview, source: str, offset: Offset) -> Plane:
    header_parts: List[bytes] = []
    line_slices: List[Tuple[int, int]] = []
    for number, wire_type, value in fields(buf, 0, len(buf), source, "XPlane"):
        if number == 3 and wire_type == 2:
            line_slices.append(value)
        elif wire_type == 0:
            header_parts.append(encode_varint_field(number, value))
        else:
            start, end = value
            header_parts.append(raw_field(number, wire_type, buf[start:end]))
    header = schema.XPlane.FromString(b"".join(header_parts))

    stat_names = {key: meta.name for key, meta in header.stat_metadata.items()}
    strings = StringTable()
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
        strings=strings,
    )
    del header
    for start, end in line_slices:
        with buf[start:end] as line_bytes:
            plane.lines.append(
                _read_line(line_bytes, plane, dense, stat_names, strings, source, offset.at(start))
            )
    offset.done(len(buf))
    return plane


_StatPieces = Dict[str, List[Tuple[np.ndarray, str, np.ndarray]]]


def _read_line(
    buf: memoryview,
    plane: Plane,
    dense: Dict[int, int],
    stat_names: Dict[int, str],
    strings: StringTable,
    source: str,
    offset: Offset,
) -> Line:
    """Parse one XLine chunk by chunk into columns; events and stats are touched by C-level loops only."""
    header_parts: List[bytes] = []
    chunks = list(event_chunks(buf, source, header_parts))  # one walk; sizes the columns up front
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


def _collect_stats(flat: List[Any], owners: np.ndarray, stat_names: Dict[int, str], strings: StringTable,
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
                  strings: StringTable) -> Tuple[str, np.ndarray]:
    if kind == "ref_value":  # the string is the name of the referenced stat metadata
        refs = np.array(values, dtype=np.uint64)
        unique, inverse = np.unique(refs, return_inverse=True)
        ids = np.array([strings.intern(stat_names.get(int(r), "")) for r in unique.tolist()], dtype=np.int32)
        return "str", ids[inverse.reshape(-1)]
    if kind == "str_value":
        return "str", np.array([strings.intern(v) for v in values], dtype=np.int32)
    if kind == "double_value":
        return "float", np.array(values, dtype=np.float64)
    dtype = np.uint64 if kind == "uint64_value" else np.int64
    return "int", np.array(values, dtype=dtype).astype(np.int64)  # uint64 ids wrap into int64


_Piece = Tuple[np.ndarray, str, np.ndarray]  # (event indices, kind, values)


def _combine(pieces: List[_Piece], count: int, strings: StringTable) -> StatColumn:
    """One sparse column from typed pieces; mixed kinds widen to float, or to strings."""
    kinds = {kind for _, kind, _ in pieces}
    kind = "str" if "str" in kinds else "float" if "float" in kinds else "int"
    where_parts, value_parts = [], []
    for where, piece_kind, piece in pieces:
        if kind == "str" and piece_kind != "str":
            piece = np.array([strings.intern_value(v) for v in piece.tolist()], dtype=np.int32)
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


def _placeholder_metadata(plane: Plane, dense: Dict[int, int], metadata_id: int) -> int:
    """An event whose metadata is missing still counts; it gets a visible placeholder name."""
    index = dense[metadata_id] = len(plane.event_names)
    plane.event_names.append(f"<unknown event {metadata_id}>")
    plane.event_display_names.append("")
    plane.metadata_stats.append({})
    return index


def _typed_piece(values: List[Any], strings: StringTable) -> Tuple[str, np.ndarray]:
    if any(isinstance(v, str) for v in values):
        return "str", np.array([strings.intern_value(v) for v in values], dtype=np.int32)
    if any(isinstance(v, float) for v in values):
        return "float", np.array(values, dtype=np.float64)
    return "int", np.array([v if v < (1 << 63) else v - (1 << 64) for v in values], dtype=np.int64)


def _merge_metadata_stats(
    stats: Dict[str, StatColumn], metadata_index: np.ndarray, plane: Plane, strings: StringTable
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


def _assemble(
    planes: List[Plane],
    source: str,
    host: str,
    size: int,
    errors: List[str],
    warnings: List[str],
    hostnames: List[str],
) -> Profile:
    devices = [build_device(p) for p in planes if p.kind in ("gpu", "tpu", "device")]
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
        step_markers=step_markers(planes),
        hostnames=hostnames,
        errors=errors,
        warnings=notes,
    )
