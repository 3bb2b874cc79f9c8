"""An XLine's events decoded straight from the wire format into numpy columns.

Touching one Python object per event and per stat was 90 % of the reader's time. Here the protobuf
runtime only splits the line into raw events (in C: `XLineRawEvents`, whose lengths give every
event's position), and the fields of all events are then decoded together, one field position at a
time ("lockstep": the k-th field of every event, then the (k+1)-th …), with vectorised varint
decoding; the stats of all events are decoded the same way. Only string stat values become Python
objects (TF writes most strings as references, so they are few).

Anything unusual — an event field with a multi-byte tag, a wire type the schema does not use, a
varint running past its event, interleaved line fields, invalid UTF-8 — makes `decode_events`
return None, and the reader decodes that line with the protobuf runtime instead, which gives the
same result or the same clear error. So this module never decides what a valid file means.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from google.protobuf.message import DecodeError

from tb_plugin_advisor.process_memory.heap import one_heap_for_threads
from tb_plugin_advisor.readers.xplane.event_frames import EVENTS_TAG, frame_events
from tb_plugin_advisor.readers.xplane.varints import Unusual as _Unusual
from tb_plugin_advisor.readers.xplane.varints import field_end as _field_end
from tb_plugin_advisor.readers.xplane.varints import varints as _varints
from tb_plugin_advisor.readers.xplane.varints import words_at as _words_at

try:  # the optional C walker (readers/xplane/_wire.c); without a compiler at install time, numpy alone
    from tb_plugin_advisor.readers.xplane import _wire
except ImportError:  # pragma: no cover - depends on how the package was installed
    _wire = None

# TB_ADVISOR_NO_COMPILED=1 keeps the C walker out (to compare the two, or to rule it out).
COMPILED = _wire is not None and os.environ.get("TB_ADVISOR_NO_COMPILED", "") in ("", "0")

BLOCK = 1 << 14  # events decoded together: ~2 MB of decoded stats (1 << 16: 30 MB of blocks in flight)
BLOCK_STATS = 1 << 20  # the C walker ends a block after the event that reaches this many stats

# XStat value fields -> kind code (0: no value); the protobuf oneof keeps the last one seen.
DOUBLE, UINT64, INT64, STR, BYTES, REF = 2, 3, 4, 5, 6, 7


@dataclass
class StatBlock:
    """The stats of one block of events, grouped by (stat id, value kind) as the reader types them.

    Blocks are kept apart (joining them would copy them all). Groups come in ascending (stat id,
    kind) order; within a group, stats keep their order in the file.
    """

    groups: List[Tuple[int, int, int, int]]  # (stat id, kind code, first row, end row)
    owner: np.ndarray  # int32 event index (in the line) of each stat row
    bits: np.ndarray  # uint64: the varint, or the double's bits
    text: Dict[int, str]  # str_value by row (TF writes most strings as refs)


@dataclass
class EventColumns:
    """One line's events decoded: their scalar fields as columns, their stats a block at a time."""

    metadata_id: np.ndarray  # int64
    offset_ps: np.ndarray  # int64
    duration_ps: np.ndarray  # int64
    stats: List[StatBlock]  # in event order


def decode_events(
    line: bytes, on_offset: Optional[Callable[[int], None]] = None,
    on_stats: Optional[Callable[[StatBlock], None]] = None, max_events: Optional[int] = None,
) -> Optional[Tuple[EventColumns, List[Tuple[int, int]]]]:
    """(columns, header field spans) of one serialized XLine, or None when the line is unusual or
    holds more than `max_events` events (the runtime path then counts them and says so).

    `on_offset(bytes decoded so far)` is called after each block of events (progress bars). With
    `on_stats`, each block's stats go to it (in order, on the calling thread) as soon as they are
    decoded instead of into the columns, so a caller can type and drop them; a None result means
    the blocks it was given are void.
    """
    try:
        if COMPILED:
            decoded = _decode_compiled(line, on_offset, on_stats, max_events)
            if decoded is not None:
                return decoded  # else the walker declined the line: numpy decides
        if max_events is not None and _tag_bytes(line) > max_events:
            return None
        return _decode(line, on_offset, on_stats)
    except (_Unusual, IndexError, UnicodeDecodeError, DecodeError):
        return None  # the runtime reads it again and says what is wrong


def _decode(line: bytes, on_offset: Optional[Callable[[int], None]] = None,
            on_stats: Optional[Callable[[StatBlock], None]] = None
            ) -> Tuple[EventColumns, List[Tuple[int, int]]]:
    b = np.frombuffer(line, dtype=np.uint8)
    first, header = _first_event(b)
    payload, ends, stop = frame_events(line, b, first)
    header += _header_fields(b, stop)
    count = int(payload.size)
    if count == 0:
        empty = np.zeros(0, dtype=np.int64)
        return EventColumns(empty, empty, empty, []), header
    columns = tuple(np.zeros(count, dtype=np.int64) for _ in range(3))  # metadata id, offset, duration
    blocks = [(lo, min(count, lo + BLOCK)) for lo in range(0, count, BLOCK)]  # bound the temporaries

    def block(bounds: Tuple[int, int]) -> StatBlock:
        lo, hi = bounds
        return _decode_block(b, line, payload[lo:hi], ends[lo:hi], lo, columns)

    stats: List[StatBlock] = []
    for (_, hi), part in zip(blocks, _in_order(block, blocks)):
        if on_stats is not None:
            on_stats(part)
        else:
            stats.append(part)
        if on_offset is not None:
            on_offset(int(ends[hi - 1]))
    return EventColumns(*columns, stats), header


def _tag_bytes(line: bytes) -> int:
    """Bytes that could start an event: the numpy decoder allocates per event before it can count
    them exactly, so this bound is checked against the budget first."""
    return line.count(EVENTS_TAG.to_bytes(1, "little"))


def _decode_compiled(line: bytes, on_offset: Optional[Callable[[int], None]] = None,
                     on_stats: Optional[Callable[[StatBlock], None]] = None, max_events: Optional[int] = None
                     ) -> Optional[Tuple[EventColumns, List[Tuple[int, int]]]]:
    """`_decode` with the C walker: one pass over each block's bytes instead of one per field.

    The walker frames the line first (block bounds and counts), so the event columns are allocated
    once and two threads fill blocks straight into them. None when the walker declines the line.
    """
    b = np.frombuffer(line, dtype=np.uint8)
    first, header = _first_event(b)
    if first > len(line):
        raise _Unusual()  # a field before the events claims more bytes than the line has
    framed = _wire.frame(line, first, BLOCK, BLOCK_STATS)  # counts without allocating per event
    if framed is None:
        return None
    starts, events, stats, stop = (np.frombuffer(x, dtype=np.int64).tolist() if i < 3 else x
                                   for i, x in enumerate(framed))
    rows = np.concatenate(([0], np.cumsum(events, dtype=np.int64))).tolist()
    if max_events is not None and rows[-1] > max_events:
        raise _Unusual()
    header += _header_fields(b, stop)
    columns = tuple(np.empty(rows[-1], dtype=np.int64) for _ in range(3))  # metadata id, offset, duration

    def fill(k: int) -> StatBlock:
        parts = _wire.fill_block(line, starts[k], events[k], stats[k], BLOCK_STATS, *columns, rows[k])
        return _stat_block(line, *parts)

    blocks: List[StatBlock] = []
    for k, part in enumerate(_in_order(fill, list(range(len(starts))))):
        if on_stats is not None:
            on_stats(part)
        else:
            blocks.append(part)
        if on_offset is not None:
            on_offset(starts[k + 1] if k + 1 < len(starts) else stop)
    return EventColumns(*columns, blocks), header


def _stat_block(line: bytes, groups: bytearray, owner: bytearray, bits: bytearray, text_start: bytearray,
                text_end: bytearray) -> StatBlock:
    """The C walker's grouped stats as a StatBlock (str values decoded here)."""
    rows = np.frombuffer(groups, dtype=np.int64).reshape(-1, 3).tolist()
    bounds, row = [], 0
    for stat_id, kind, count in rows:
        bounds.append((stat_id, kind, row, row + count))
        row += count
    texts: Dict[int, str] = {}
    starts, ends = np.frombuffer(text_start, dtype=np.int64), np.frombuffer(text_end, dtype=np.int64)
    for _, kind, lo, hi in bounds:
        if kind == STR:
            spans = zip(starts[lo:hi].tolist(), ends[lo:hi].tolist())
            texts.update((k, line[a:b].decode("utf-8")) for k, (a, b) in enumerate(spans, lo))
    owners = np.frombuffer(owner, dtype=np.int32)
    return StatBlock(bounds, owners, np.frombuffer(bits, dtype=np.uint64), texts)


def grouped(owner: np.ndarray, stat_id: np.ndarray, kind: np.ndarray, bits: np.ndarray,
            texts: Dict[int, str]) -> StatBlock:
    """Stats in any order (the numpy decoder's) → a StatBlock grouped as the C walker groups them."""
    if owner.size == 0:
        return StatBlock([], owner.astype(np.int32), bits, {})
    # groups in ascending (stat id, kind) order; within a group, the order given (the reader sorts
    # by event)
    if int(stat_id.max()) < 1 << 27 and int(stat_id.min()) >= 0:
        keys = stat_id.astype(np.int32) * 8 + kind.view(np.uint8)  # one int32 key: half the bytes
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        cuts = np.flatnonzero(np.diff(keys)) + 1
    else:  # ids a combined key would overflow
        order = np.lexsort((kind, stat_id))
        ids, kinds = stat_id[order], kind[order]
        cuts = np.flatnonzero((ids[1:] != ids[:-1]) | (kinds[1:] != kinds[:-1])) + 1
    starts = np.concatenate(([0], cuts)).tolist()
    ends = np.concatenate((cuts, [order.size])).tolist()
    bounds = [(int(stat_id[order[a]]), int(kind[order[a]]), a, b) for a, b in zip(starts, ends)]
    new_row = np.empty(order.size, dtype=np.int64)
    new_row[order] = np.arange(order.size)
    moved = {int(new_row[k]): v for k, v in texts.items()}
    return StatBlock(bounds, owner[order].astype(np.int32), bits[order], moved)


# Blocks are decoded on two threads: numpy releases the GIL inside each whole-array step and the C
# walker while it fills a block, which is where the time goes, so a second core takes half the
# blocks. The reading thread decodes the other half itself (one extra thread, not two), and the
# helper allocates from the reading thread's heap (process_memory/heap.py: a heap of its own kept
# its freed temporaries, 30 MB of a 100 MB profile's peak).
THREADS = min(2, os.cpu_count() or 1)


def _in_order(decode: Callable[[Any], StatBlock], blocks: List[Any]):
    """decode(block) for every block, yielded in order; odd blocks on a helper thread, which works at
    most AHEAD odd blocks ahead (a helper given every odd block at once ran ahead of the caller, and
    the decoded blocks waiting for it were 90 MB of a 300 MB profile)."""
    if len(blocks) < 2 or THREADS < 2:
        yield from map(decode, blocks)
        return
    one_heap_for_threads()
    with ThreadPoolExecutor(1) as helper:
        ahead: Dict[int, Any] = {}  # odd block index -> its future
        try:
            for k, bounds in enumerate(blocks):
                for odd in range(k + 1 if k % 2 == 0 else k + 2, min(len(blocks), k + 2 * AHEAD + 1), 2):
                    if odd not in ahead:  # the next odd blocks: started before this one is decoded
                        ahead[odd] = helper.submit(decode, blocks[odd])
                if k % 2 == 0:
                    yield decode(bounds)
                else:
                    found = ahead.pop(k, None)
                    yield found.result() if found is not None else decode(bounds)
        finally:
            for future in ahead.values():
                future.cancel()


AHEAD = 3  # odd blocks the helper thread decodes ahead of the caller (a few MB each)


# Event fields by tag byte: metadata_id, offset_ps, duration_ps (varints), stats (length-delimited).
_EVENT_SCALARS = {0x08: 0, 0x10: 1, 0x18: 2}
_EVENT_STATS = 0x22


def _decode_block(b: np.ndarray, line: bytes, payload: np.ndarray, ends: np.ndarray, lo: int,
                  columns: Tuple[np.ndarray, np.ndarray, np.ndarray]):
    """Events [lo, lo + len(payload)): their scalar fields into `columns`, their stats decoded.

    Returns the stats (see _decode_stats) and their str values by index within this block.
    """
    owners: List[np.ndarray] = []
    stat_starts: List[np.ndarray] = []
    stat_ends: List[np.ndarray] = []
    for rows, tag, value, value_end in _lockstep(b, payload, ends):
        rows = rows + lo
        for t, sel in _by_tag(tag):
            field = t >> 3
            if t in _EVENT_SCALARS:
                columns[_EVENT_SCALARS[t]][_take(rows, sel)] = _take(value, sel).view(np.int64)
            elif t == _EVENT_STATS:
                owners.append(_take(rows, sel))
                start = _take(value_end, sel)  # the payload follows the length
                stat_starts.append(start)
                stat_ends.append(start + _take(value, sel).astype(np.int64))
            elif field in (0, 1, 2, 3, 4, 5):
                # field 0 is invalid, a known field with the wrong wire type is the runtime's to judge,
                # and num_occurrences (5) shares a oneof with offset_ps: the runtime decides
                raise _Unusual()
    none = np.zeros(0, dtype=np.int64)
    texts: Dict[int, str] = {}
    stats = _decode_stats(b, line, np.concatenate(owners + [none]), np.concatenate(stat_starts + [none]),
                          np.concatenate(stat_ends + [none]), texts, 0)
    return grouped(*stats, texts)


def _by_tag(tag: np.ndarray):
    """(tag, rows selector) per distinct tag byte; the selector is None when every row has it."""
    low, high = int(tag.min()), int(tag.max())
    if low == high:
        return [(low, None)]
    counts = np.bincount(tag, minlength=high + 1)
    return [(t, tag == t) for t in np.flatnonzero(counts).tolist()]


def _take(values: np.ndarray, sel: Optional[np.ndarray]) -> np.ndarray:
    return values if sel is None else values[sel]


def _first_event(b: np.ndarray) -> Tuple[int, List[Tuple[int, int]]]:
    """Where the first event field starts, and the spans of the fields before it."""
    pos, spans = 0, []
    while pos < b.size and b[pos] != EVENTS_TAG:
        end = _field_end(b, pos)
        spans.append((pos, end))
        pos = end
    return pos, spans


def _header_fields(b: np.ndarray, pos: int) -> List[Tuple[int, int]]:
    spans = []
    while pos < b.size:
        if b[pos] == EVENTS_TAG:
            raise _Unusual()  # events interleaved with other fields
        end = _field_end(b, pos)
        spans.append((pos, end))
        pos = end
    return spans


def _lockstep(b: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """For the k-th field of every message at once, yield (rows, tag byte, value, value_end).

    value is the varint (wire 0), the length (wire 2: the payload ends at value_end), or 0 for fixed
    fields (value_end is where the 8 or 4 bytes start). Tags must be one byte (fields 1-15).
    """
    cursor = starts.copy()
    rows = np.flatnonzero(cursor < ends)
    while rows.size:
        at = cursor[rows]
        tag = b[at]
        shape = _TAG_SHAPE[tag]  # one lookup checks the tag and says how its value is stored
        widest = int(shape.max())
        if widest == _BAD:
            raise _Unusual()
        limit = ends[rows]
        if widest >= _FIXED64:
            value = np.zeros(rows.size, dtype=np.uint64)
            value_end = at + 1
            varint = shape <= _LENGTH
            value[varint], value_end[varint] = _varints(b, value_end[varint], limit[varint])
            following = value_end + _FIXED_SIZE[shape]
        else:
            value, value_end = _varints(b, at + 1, limit)
            following = value_end.copy()
        if widest >= _LENGTH:
            sizes = np.where(shape == _LENGTH, value, np.uint64(0))
            if int(sizes.max()) > 1 << 40:
                raise _Unusual()
            following += sizes.astype(np.int64)
        if np.any(following > limit):
            raise _Unusual()
        yield rows, tag, value, value_end
        cursor[rows] = following
        rows = rows[following < limit]


# How each one-byte tag's value is stored: wire type 0, 2, 1 (8 bytes), 5 (4 bytes); others (groups,
# wire types 6 and 7, multi-byte tags) are not decoded here.
_VARINT, _LENGTH, _FIXED64, _FIXED32, _BAD = 0, 1, 2, 3, 4
_TAG_SHAPE = np.full(256, _BAD, dtype=np.uint8)
for _tag in range(0x80):
    _TAG_SHAPE[_tag] = {0: _VARINT, 2: _LENGTH, 1: _FIXED64, 5: _FIXED32}.get(_tag & 7, _BAD)
_FIXED_SIZE = np.array([0, 0, 8, 4, 0], dtype=np.int64)


# XStat value fields by tag byte: uint64_value, int64_value, ref_value (varints); str, bytes.
_STAT_VARINTS = {0x18: UINT64, 0x20: INT64, 0x38: REF}
_STAT_TEXTS = {0x2A: STR, 0x32: BYTES}


def _decode_stats(b: np.ndarray, line: bytes, owner: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                  texts: Dict[int, str], first_index: int):
    """(owner, metadata id, kind, bits) of every XStat, in the order given (not sorted by owner:
    the k-th stat of every event, then the (k+1)-th …; one event's stats keep their file order).

    str values go to `texts`, keyed by the stat's index in the line (`first_index` + k).
    """
    n = owner.size
    stat_id = np.zeros(n, dtype=np.int64)
    kind = np.zeros(n, dtype=np.int8)
    bits = np.zeros(n, dtype=np.uint64)
    text_span = np.zeros((n, 2), dtype=np.int64)
    for rows, tag, value, value_end in _lockstep(b, starts, ends):
        for t, sel in _by_tag(tag):
            field = t >> 3
            where = _take(rows, sel)
            if t == 0x08:
                stat_id[where] = _take(value, sel).view(np.int64)
            elif t in _STAT_VARINTS:
                kind[where] = _STAT_VARINTS[t]
                bits[where] = _take(value, sel)
            elif t == 0x11:  # double_value: eight bytes
                kind[where] = DOUBLE
                bits[where] = _words_at(b, _take(value_end, sel))
            elif t in _STAT_TEXTS:
                kind[where] = _STAT_TEXTS[t]
                start = _take(value_end, sel)
                text_span[where, 0] = start
                text_span[where, 1] = start + _take(value, sel).astype(np.int64)
            elif field <= 7:
                raise _Unusual()  # a schema field with the wrong wire type: let the runtime say what
    for k in np.flatnonzero(kind == STR).tolist():
        texts[first_index + k] = line[text_span[k, 0] : text_span[k, 1]].decode("utf-8")
    small_ids = stat_id.size == 0 or (stat_id.min() >= 0 and stat_id.max() < 2**31)
    return owner.astype(np.int32), stat_id.astype(np.int32) if small_ids else stat_id, kind, bits
