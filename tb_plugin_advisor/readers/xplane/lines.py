"""One XLine's bytes → numpy columns (start, duration, metadata index, sparse stat columns).

Events are parsed a chunk at a time by the protobuf runtime and copied into columns at once; stat
values are grouped by stat id and typed once per group, so no per-event Python object outlives its
chunk (ARCHITECTURE.md §8).
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.formatting import format_number
from tb_plugin_advisor.lookup import unique_codes, unique_inverse
from tb_plugin_advisor.model import Line, Plane, StatColumn, StringTable, compact_ints
from tb_plugin_advisor.readers.xplane import event_columns, schema
from tb_plugin_advisor.readers.xplane.event_columns import decode_events
from tb_plugin_advisor.readers.xplane.line_windows import LineRange, decode_windows
from tb_plugin_advisor.readers.xplane.metadata_ids import DenseIds
from tb_plugin_advisor.readers.xplane.wire import Progress, event_chunks


class EventBudget:
    """Events left to read in this file (ReadLimits.max_events)."""

    def __init__(self, source: str, limit: int):
        self.source = source
        self.limit = limit
        self.left = limit
        self.ignored_values = 0  # NaN, infinite or out-of-range numbers dropped (a counted warning)
        self.unknown_metadata = 0  # metadata ids events named that no plane defined (placeholders made)

    def take(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise ProfileReadError(
                self.source,
                f"the profile holds more than {format_number(self.limit)} events, the reader's limit",
            )


_StatPieces = Dict[str, List[Tuple[np.ndarray, str, np.ndarray]]]


def read_line(
    line: Union[bytes, LineRange],
    plane: Plane,
    dense: DenseIds,
    stat_names: Dict[int, str],
    strings: StringTable,
    progress: Progress,
    budget: EventBudget,
) -> Line:
    """One serialized XLine (its bytes, or where they are) → a Line: a long line decoded from the file
    a window at a time (line_windows.py), else numpy decoding of all events at once, else chunk by
    chunk."""
    # A line over the event budget is declined by the fast decoders before they allocate per event;
    # the runtime path counts first, and refuses it with the limit's message.
    pieces: _StatPieces = {}

    def typed(block: event_columns.StatBlock) -> None:  # each block's raw stats, typed and dropped
        _add_pieces(pieces, block, stat_names, strings)

    decoded = None  # (columns, the line's non-event fields serialized)
    if isinstance(line, LineRange):
        decoded = decode_windows(line, progress.done, typed, budget.left)
        if decoded is None:
            pieces.clear()  # what the windows handed over is void: the line is read whole
            line = bytes(line.read())
    if decoded is None:
        found = decode_events(line, progress.done, typed, budget.left)
        decoded = None if found is None else (found[0], [line[a:b] for a, b in found[1]])
        del found
    if decoded is not None:
        columns, header_parts = decoded
        count = int(columns.metadata_id.size)
        budget.take(count)
        metadata_ids, start_ns, duration_ns = columns.metadata_id, columns.offset_ps, columns.duration_ps
        progress.done(len(line))
        del line, columns, decoded  # the caller passed its only reference: free the bytes
    else:
        metadata_ids, start_ns, duration_ns, pieces, header_parts, count = _runtime_columns(
            memoryview(line), stat_names, strings, progress, budget
        )
    header = schema.XLine.FromString(b"".join(header_parts))
    metadata_index = dense.lookup(metadata_ids, plane)
    del metadata_ids
    start_ns //= 1000
    start_ns += header.timestamp_ns
    duration_ns += 500
    duration_ns //= 1000
    stats = {name: _combine(parts, count, strings) for name, parts in pieces.items()}
    for name in IDENTIFIER_STATS.intersection(stats):
        column = stats[name]
        if column.kind == "int":
            column.data = compact_ints(column.data)
    budget.ignored_values += _drop_unusable_floats(stats)
    _merge_metadata_stats(stats, metadata_index, len(plane.event_names), strings, dense)
    if count > 1 and np.any(start_ns[1:] < start_ns[:-1]):  # (a comparison, not an int64 diff)
        order = np.argsort(start_ns, kind="stable")
        start_ns, duration_ns, metadata_index = start_ns[order], duration_ns[order], metadata_index[order]
        stats = {k: _reordered(c, order) for k, c in stats.items()}
    return Line(
        id=header.id,
        name=header.name,
        display_name=header.display_name,
        plane=plane,
        start_ns=start_ns,
        duration_ns=compact_ints(duration_ns),
        metadata_index=metadata_index,
        stats=stats,
    )


# Int stats that only identify (compared with each other, never computed with): kept in 32 bits
# when their values fit (compact_ints). A stream's and a host thread's correlation ids were 8 bytes
# per event, 17 MB of a 100 MB profile.
IDENTIFIER_STATS = frozenset({"correlation_id"})


def _runtime_columns(buf: memoryview, stat_names: Dict[int, str], strings: StringTable, progress: Progress,
                     budget: EventBudget):
    """The protobuf runtime's way, a chunk of events at a time (lines event_columns declines)."""
    header_parts: List[bytes] = []
    chunks = list(event_chunks(buf, budget.source, header_parts))  # one walk; sizes the columns first
    total = sum(n for _, _, n in chunks)
    budget.take(total)
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
        progress.done(end)
    return metadata_ids, start_ns, duration_ns, pieces, header_parts, count


_KIND_NAMES = {
    event_columns.DOUBLE: "double_value",
    event_columns.UINT64: "uint64_value",
    event_columns.INT64: "int64_value",
    event_columns.STR: "str_value",
    event_columns.REF: "ref_value",
}


def _add_pieces(pieces: _StatPieces, block: event_columns.StatBlock, stat_names: Dict[int, str],
                strings: StringTable) -> None:
    """A block's stats, group by group (stat id, value kind), as typed pieces `_combine` merges."""
    for stat_id, kind_code, lo, hi in block.groups:
        kind = _KIND_NAMES.get(kind_code)
        if kind is None:  # bytes values and stats without a value are not kept
            continue
        where = _as_run(block.owner[lo:hi])
        if kind == "str_value":
            typed = _typed_values(kind, [block.text[k] for k in range(lo, hi)], stat_names, strings)
        elif kind == "double_value":  # copied: a view would keep every group's bits alive
            typed = ("float", block.bits[lo:hi].view(np.float64).copy())
        elif kind == "ref_value":
            typed = _typed_values(kind, block.bits[lo:hi], stat_names, strings)
        else:
            typed = ("int", block.bits[lo:hi].view(np.int64).copy())
        name = stat_names.get(stat_id, str(stat_id))
        if name in IDENTIFIER_STATS and typed[0] == "int":  # 32 bits where they fit, piece by piece
            typed = ("int", compact_ints(typed[1]))
        pieces.setdefault(name, []).append((where, *typed))


# A float beyond this is no time, size or count a profiler writes; int64 columns could not hold it.
FLOAT_LIMIT = float(1 << 62)


def usable_number(value: Any) -> bool:
    """False for NaN, infinities and floats too large for int64 arithmetic."""
    return not isinstance(value, float) or abs(value) < FLOAT_LIMIT  # NaN compares False


def _drop_unusable_floats(stats: Dict[str, StatColumn]) -> int:
    """Remove NaN/inf/huge values from float columns so analyses never see them; returns how many."""
    dropped = 0
    for name, column in list(stats.items()):
        if column.kind != "float":
            continue
        keep = np.abs(column.data) < FLOAT_LIMIT
        if keep.all():
            continue
        dropped += int(keep.size - np.count_nonzero(keep))
        if keep.any():
            stats[name] = StatColumn("float", column.indices[keep], column.data[keep], column.count)
        else:
            del stats[name]
    return dropped


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
        if refs.size and int(refs.max()) < 1 << 20:  # small ids: a lookup table, no sort
            small = refs.astype(np.int64)
            distinct = np.flatnonzero(np.bincount(small))
            table = np.zeros(int(distinct[-1]) + 1, dtype=np.int32)
            table[distinct] = strings.intern_all(map(stat_names.get, distinct.tolist(), repeat("")))
            return "str", table[small]
        unique, inverse = unique_inverse(refs)
        ids = np.array(strings.intern_all(map(stat_names.get, unique.tolist(), repeat(""))), dtype=np.int32)
        return "str", ids[inverse.reshape(-1)]
    if kind == "str_value":
        return "str", np.array(strings.intern_all(values), dtype=np.int32)
    if kind == "double_value":
        return "float", np.array(values, dtype=np.float64)
    dtype = np.uint64 if kind == "uint64_value" else np.int64
    return "int", np.array(values, dtype=dtype).astype(np.int64)  # uint64 ids wrap into int64


_Rows = Union[np.ndarray, slice]  # the events a piece's values belong to: indices, or a run of them
_Piece = Tuple[_Rows, str, np.ndarray]  # (events, kind, values)


def _as_run(rows: np.ndarray) -> _Rows:
    """`rows` as a slice when they are consecutive events (a stat on every event of a block): no
    index array is then kept for it, and a stat on every event of a line needs none at all."""
    if rows.size and int(rows[-1]) - int(rows[0]) == rows.size - 1 and (
            rows.size == 1 or bool(np.all(rows[1:] > rows[:-1]))):
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


def _row_count(rows: _Rows) -> int:
    return rows.stop - rows.start if isinstance(rows, slice) else int(rows.size)


def _row_array(rows: _Rows) -> np.ndarray:
    return np.arange(rows.start, rows.stop, dtype=np.int32) if isinstance(rows, slice) else rows


def _tile_the_line(pieces: List[_Piece], count: int) -> bool:
    """Are the pieces runs that cover events 0..count-1 once each, in order?"""
    at = 0
    for rows, _, _ in pieces:
        if not isinstance(rows, slice) or rows.start != at:
            return False
        at = rows.stop
    return at == count


def _combine(pieces: List[_Piece], count: int, strings: StringTable) -> StatColumn:
    """One sparse column from typed pieces; mixed kinds widen to float, or to strings. The pieces are
    copied into the column one by one and dropped (the list is emptied): a GPU stream's three stats
    on 3 million kernels are 110 MB of pieces, which a concatenation would hold twice."""
    kinds = {kind for _, kind, _ in pieces}
    kind = "str" if "str" in kinds else "float" if "float" in kinds else "int"
    every_event = _tile_the_line(pieces, count)
    indices: Optional[np.ndarray]
    if len(pieces) == 1 and pieces[0][1] == kind:
        rows, _, data = pieces.pop()
        indices = None if every_event else _row_array(rows)
    else:
        total = sum(_row_count(rows) for rows, _, _ in pieces)
        indices = None if every_event else np.empty(total, dtype=np.result_type(
            *(np.int32 if isinstance(rows, slice) else rows.dtype for rows, _, _ in pieces)))
        data_type = (np.float64 if kind == "float" else np.int32 if kind == "str"
                     else np.result_type(*(piece.dtype for _, _, piece in pieces)))  # as concatenate would
        data = np.empty(total, dtype=data_type)
        at = 0
        pieces.reverse()
        while pieces:
            rows, piece_kind, piece = pieces.pop()
            if kind == "str" and piece_kind != "str":
                piece = np.array([strings.intern_value(v) for v in piece.tolist()], dtype=np.int32)
            size = _row_count(rows)
            if indices is not None:
                indices[at:at + size] = _row_array(rows)
            data[at:at + size] = piece
            at += size
            del rows, piece
    if indices is None:
        return StatColumn(kind, None, data, count)
    if indices.size > 1 and not np.all(indices[1:] > indices[:-1]):  # (strictly rising: no repeats)
        indices, data = _by_event(indices, data, count)
        keep = np.concatenate(([True], np.diff(indices) != 0))
        if not keep.all():  # an event repeating a stat: keep the first, as the profiler's readers do
            indices, data = indices[keep], data[keep]
    return StatColumn(kind, indices, data, count)


def _by_event(indices: np.ndarray, data: np.ndarray, count: int) -> Tuple[np.ndarray, np.ndarray]:
    """Entries ordered by event, an event's repeats in their given order.

    The decoder hands a line's stats over field position by field position; when no event repeats
    the stat (the usual case) a scatter over the line's events orders them in two passes, no sort.
    """
    if indices.size * 8 >= count:
        slot = np.full(count, -1, dtype=np.int64)
        slot[indices] = np.arange(indices.size)
        taken = np.flatnonzero(slot >= 0)
        if taken.size == indices.size:
            return taken.astype(indices.dtype), data[slot[taken]]
    order = np.argsort(indices, kind="stable")
    return indices[order], data[order]


def _reordered(column: StatColumn, order: np.ndarray) -> StatColumn:
    """The column after the line's events were put in `order` (old index at each new position)."""
    if column.on_every_event:  # per-event data: reordered with the events
        return StatColumn(column.kind, None, column.data[order], column.count)
    new_position = np.empty_like(order)
    new_position[order] = np.arange(order.size)
    indices = new_position[column.indices]
    by_index = np.argsort(indices, kind="stable")
    return StatColumn(column.kind, indices[by_index], column.data[by_index], column.count)


def _typed_piece(values: List[Any], strings: StringTable) -> Tuple[str, np.ndarray]:
    if any(isinstance(v, str) for v in values):
        return "str", np.array([strings.intern_value(v) for v in values], dtype=np.int32)
    if any(isinstance(v, float) for v in values):
        return "float", np.array(values, dtype=np.float64)
    return "int", np.array([v if v < (1 << 63) else v - (1 << 64) for v in values], dtype=np.int64)


def _merge_metadata_stats(stats: Dict[str, StatColumn], metadata_index: np.ndarray, names_count: int,
                          strings: StringTable, dense: DenseIds) -> None:
    """Per-op constant stats sit on the event metadata; fill them in where the event has none (only
    the dense indices whose metadata has stats are looked at: a line of half a million distinct
    kernels makes no list of them). `names_count`: the plane's names, placeholders included."""
    with_stats, of_entry = dense.with_stats, dense.stats
    if metadata_index.size == 0 or with_stats.size == 0:
        return
    used = unique_codes(metadata_index)
    used = used[np.isin(used, with_stats, assume_unique=True)].tolist()
    names = {k for m in used for k in of_entry[m]}
    count = int(metadata_index.size)
    for name in names:
        owners = [m for m in used if name in of_entry[m]]
        kind, per_owner = _typed_piece([of_entry[m][name] for m in owners], strings)
        slot = np.full(names_count, -1, dtype=np.int64)
        slot[owners] = np.arange(len(owners))
        events = np.flatnonzero(slot[metadata_index] >= 0).astype(np.int32)
        existing = stats.get(name)
        if existing is not None and existing.on_every_event:
            continue  # every event has its own value, which wins over the metadata's
        if existing is not None:
            events = events[~np.isin(events, existing.indices, assume_unique=True)]
        if events.size == 0:
            continue
        piece = (events, kind, per_owner[slot[metadata_index[events]]])
        if existing is None:
            stats[name] = _combine([piece], count, strings)
        else:
            stats[name] = _combine([(existing.indices, existing.kind, existing.data), piece], count, strings)
