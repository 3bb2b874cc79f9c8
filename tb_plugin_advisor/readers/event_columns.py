"""An XLine's events decoded straight from the wire format into numpy columns (issue 12).

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
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
from google.protobuf.message import DecodeError

from tb_plugin_advisor.readers import xspace_schema as schema

EVENTS_TAG = 0x22  # XLine field 4, length-delimited
_SHIFTS = np.arange(10, dtype=np.uint64) * np.uint64(7)
_OFFSETS = np.arange(10, dtype=np.int64)
BLOCK = 1 << 16  # events decoded together: bounds the temporary arrays to a few MB

# XStat value fields -> kind code (0: no value); the protobuf oneof keeps the last one seen.
DOUBLE, UINT64, INT64, STR, BYTES, REF = 2, 3, 4, 5, 6, 7


class _Unusual(Exception):
    """This line needs the protobuf runtime (see the module docstring)."""


@dataclass
class EventColumns:
    metadata_id: np.ndarray  # int64
    offset_ps: np.ndarray  # int64
    duration_ps: np.ndarray  # int64
    stat_owner: np.ndarray  # int32 event index of each stat (file order within an event, else any)
    stat_id: np.ndarray  # stat metadata id (int32 when all fit, else int64)
    stat_kind: np.ndarray  # int8 kind code
    stat_bits: np.ndarray  # uint64: the varint, or the double's bits
    stat_text: Dict[int, str]  # str_value by stat index (TF writes most strings as references)


def decode_events(
    line: bytes, on_offset: Optional[Callable[[int], None]] = None
) -> Optional[Tuple[EventColumns, List[Tuple[int, int]]]]:
    """(columns, header field spans) of one serialized XLine, or None when the line is unusual.

    `on_offset(bytes decoded so far)` is called after each block of events (progress bars).
    """
    try:
        return _decode(line, on_offset)
    except (_Unusual, IndexError, UnicodeDecodeError, DecodeError):
        return None  # the runtime reads it again and says what is wrong


def _decode(line: bytes, on_offset: Optional[Callable[[int], None]] = None
            ) -> Tuple[EventColumns, List[Tuple[int, int]]]:
    b = np.frombuffer(line, dtype=np.uint8)
    raw = schema.XLineRawEvents.FromString(line).events
    count = len(raw)
    lengths = np.fromiter(map(len, raw), dtype=np.int64, count=count)
    del raw
    first, header = _first_event(b)
    if count == 0:
        empty = np.zeros(0, dtype=np.int64)
        return EventColumns(empty, empty, empty, empty, empty, np.zeros(0, np.int8), np.zeros(0, np.uint64),
                            {}), header
    head = 1 + _varint_size(lengths)
    starts = first + np.concatenate(([0], np.cumsum(head + lengths)[:-1]))
    payload = starts + head
    ends = payload + lengths
    # the positions are a real walk of consecutive events: every one starts with the events tag and
    # its encoded length; the fields after the last event are the line's other fields
    if int(ends[-1]) > b.size or not np.all(b[starts] == EVENTS_TAG):
        raise _Unusual()
    encoded, _ = _varints(b, starts + 1, ends)
    if not np.array_equal(encoded.view(np.int64), lengths):
        raise _Unusual()
    del encoded, starts, head, lengths
    header += _header_fields(b, int(ends[-1]))
    columns = tuple(np.zeros(count, dtype=np.int64) for _ in range(3))  # metadata id, offset, duration
    blocks = [(lo, min(count, lo + BLOCK)) for lo in range(0, count, BLOCK)]  # bound the temporaries

    def block(bounds: Tuple[int, int]) -> Tuple[Tuple[np.ndarray, ...], Dict[int, str]]:
        lo, hi = bounds
        return _decode_block(b, line, payload[lo:hi], ends[lo:hi], lo, columns)

    stat_parts: List[Tuple[np.ndarray, ...]] = []
    texts: Dict[int, str] = {}
    with _workers(len(blocks)) as pool:
        for (_, hi), (part, part_texts) in zip(blocks, pool.map(block, blocks)):
            offset = sum(p[0].size for p in stat_parts)
            texts.update((offset + k, text) for k, text in part_texts.items())
            stat_parts.append(part)
            if on_offset is not None:
                on_offset(int(ends[hi - 1]))
    joined = [np.concatenate([part[k] for part in stat_parts]) for k in range(4)]
    del stat_parts
    return EventColumns(*columns, *joined, texts), header


# Blocks are decoded on two threads: numpy releases the GIL inside each whole-array step, which is
# where the time goes, so a second core takes half the blocks.
THREADS = min(2, os.cpu_count() or 1)


class _Inline:
    """The pool's interface without threads (one block, or one core)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @staticmethod
    def map(function, items):
        return map(function, items)


def _workers(blocks: int):
    return ThreadPoolExecutor(THREADS) if blocks > 1 and THREADS > 1 else _Inline()


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
    return stats, texts


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


def _field_end(b: np.ndarray, pos: int) -> int:
    key, pos = _one_varint(b, pos)
    wire = key & 7
    if wire == 0:
        return _one_varint(b, pos)[1]
    if wire == 2:
        length, pos = _one_varint(b, pos)
        if pos + length > b.size:
            raise _Unusual()
        return pos + length
    if wire in (1, 5):
        return pos + (8 if wire == 1 else 4)
    raise _Unusual()


def _one_varint(b: np.ndarray, pos: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= b.size or shift > 63:
            raise _Unusual()
        byte = int(b[pos])
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _varint_size(values: np.ndarray) -> np.ndarray:
    size = np.ones(values.shape, dtype=np.int64)
    for bits in range(7, 64, 7):
        size += values >= (1 << bits)
    return size


def _varints(b: np.ndarray, pos: np.ndarray, limit: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Decode one varint at each position (none may run past `limit`): (uint64 values, next positions).

    When every varint is one byte (tags, lengths, small ids) that byte is the value. Otherwise the
    eight bytes at each position are read as one little-endian word, and its 7-bit groups up to the
    first byte without the continuation bit are packed together with three shift-and-mask steps
    (SWAR), for every position at once; the rare varints longer than eight bytes (negative int64s,
    padded writers) add a second word, and those too near the end of the buffer use a byte matrix.
    """
    first = b[pos]
    if first.size == 0 or int(first.max()) < 0x80:
        if np.any(pos >= limit):
            raise _Unusual()
        return first.astype(np.uint64), pos + 1
    word = _words_at(b, pos)
    below = ~word & _HIGH_BITS
    below &= ~below + _ONE  # the lowest stop bit (0 when all eight bytes continue) ...
    below -= _ONE  # ... and every bit under it: the varint's bits (all ones when it is longer)
    length = ((((below & _HIGH_BITS) >> _SEVEN) * _BYTE_SUM) >> _FIFTY_SIX).astype(np.int64) + 1
    values = _packed_groups(word & below & _LOW_BITS)
    longer = np.flatnonzero(length > 8)
    if longer.size:
        at = pos[longer]
        second = _words_at(b, at + 8)
        stop9 = (~second & np.uint64(0x80)) != 0
        stop10 = ~stop9 & ((~second & np.uint64(0x8000)) != 0)
        extra = (second & np.uint64(0x7F)) << np.uint64(56)
        extra[stop10] |= ((second[stop10] >> np.uint64(8)) & _ONE) << np.uint64(63)
        values[longer] |= extra
        length[longer[stop9]] = 9
        length[longer[stop10]] = 10
        slow = ~(stop9 | stop10)
        if slow.any():  # too near the end of the buffer for whole words (or no last byte in ten)
            where = longer[slow]
            values[where], length[where] = _long_varints(b, at[slow])
    cursor = pos + length
    if np.any(cursor > limit):
        raise _Unusual()
    return values, cursor


def _packed_groups(x: np.ndarray) -> np.ndarray:
    """Eight 7-bit groups, one per byte (low byte first), packed into one 56-bit number."""
    x = (x & np.uint64(0x007F007F007F007F)) | ((x & np.uint64(0x7F007F007F007F00)) >> _ONE)
    x = (x & np.uint64(0x00003FFF00003FFF)) | ((x & np.uint64(0x3FFF00003FFF0000)) >> np.uint64(2))
    return (x & np.uint64(0x000000000FFFFFFF)) | ((x & np.uint64(0x0FFFFFFF00000000)) >> np.uint64(4))


_HIGH_BITS = np.uint64(0x8080808080808080)
_LOW_BITS = np.uint64(0x7F7F7F7F7F7F7F7F)
_ONE, _SEVEN, _FIFTY_SIX = np.uint64(1), np.uint64(7), np.uint64(56)
_BYTE_SUM = np.uint64(0x0101010101010101)  # times a word of 0/1 bytes: their sum in the top byte


def _words_at(b: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The little-endian uint64 made of the 8 bytes at each position (bytes past the end read 0xFF,
    which reads as "continues": such varints go to the byte matrix).

    One gather through an unaligned 8-byte view with a 1-byte stride (every position is a word).
    """
    words = np.full(at.size, np.uint64(0xFFFFFFFFFFFFFFFF))
    if b.size < 8:
        return words
    view = np.ndarray(shape=(b.size - 7,), dtype="<u8", buffer=b, strides=(1,))
    inside = at < b.size - 7
    if inside.all():
        return view[at]
    words[inside] = view[at[inside]]
    return words


def _long_varints(b: np.ndarray, at: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Varints of nine or ten bytes, or near the end of the buffer: (values, lengths)."""
    window = np.minimum(at[:, None] + _OFFSETS, b.size - 1)
    raw = b[window]
    stops = raw < 0x80
    if not np.all(stops.any(axis=1)):
        raise _Unusual()  # no last byte within ten
    length = stops.argmax(axis=1) + 1
    keep = length[:, None] > _OFFSETS
    parts = (raw & 0x7F).astype(np.uint64) << _SHIFTS
    parts[~keep] = 0
    return np.bitwise_or.reduce(parts, axis=1), length


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
        if int(tag.max()) >= 0x80:
            raise _Unusual()
        wire = tag & 7
        limit = ends[rows]
        fixed = (wire == 1) | (wire == 5)
        if fixed.any():
            if np.any(~fixed & (wire != 0) & (wire != 2)):
                raise _Unusual()
            value = np.zeros(rows.size, dtype=np.uint64)
            value_end = at + 1
            varint = ~fixed
            value[varint], value_end[varint] = _varints(b, value_end[varint], limit[varint])
            following = value_end + np.where(wire == 1, 8, np.where(wire == 5, 4, 0))
        else:
            if np.any((wire != 0) & (wire != 2)):
                raise _Unusual()
            value, value_end = _varints(b, at + 1, limit)
            following = value_end.copy()
        length = wire == 2
        if length.any():
            sizes = np.where(length, value, np.uint64(0))
            if int(sizes.max()) > 1 << 40:
                raise _Unusual()
            following += sizes.astype(np.int64)
        if np.any(following > limit):
            raise _Unusual()
        yield rows, tag, value, value_end
        cursor[rows] = following
        rows = rows[following < limit]


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
