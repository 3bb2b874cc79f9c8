"""Protobuf varints decoded many at a time with numpy (the event decoder's primitives).

Anything these cannot decode exactly — a varint running past its message, one with no last byte
within ten — raises `Unusual`, and the caller hands the line to the protobuf runtime instead.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np

_SHIFTS = np.arange(10, dtype=np.uint64) * np.uint64(7)
_OFFSETS = np.arange(10, dtype=np.int64)


class Unusual(Exception):
    """This line needs the protobuf runtime."""


def field_end(b: np.ndarray, pos: int) -> int:
    key, pos = one_varint(b, pos)
    wire = key & 7
    if wire == 0:
        return one_varint(b, pos)[1]
    if wire == 2:
        length, pos = one_varint(b, pos)
        if pos + length > b.size:
            raise Unusual()
        return pos + length
    if wire in (1, 5):
        return pos + (8 if wire == 1 else 4)
    raise Unusual()


def one_varint(b: np.ndarray, pos: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= b.size or shift > 63:
            raise Unusual()
        byte = int(b[pos])
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def varint_size(values: np.ndarray) -> np.ndarray:
    size = np.ones(values.shape, dtype=np.int64)
    for bits in range(7, 64, 7):
        size += values >= (1 << bits)
    return size


def varints(b: np.ndarray, pos: np.ndarray, limit: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
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
            raise Unusual()
        return first.astype(np.uint64), pos + 1
    word = words_at(b, pos)
    below = ~word & _HIGH_BITS
    below &= ~below + _ONE  # the lowest stop bit (0 when all eight bytes continue) ...
    below -= _ONE  # ... and every bit under it: the varint's bits (all ones when it is longer)
    length = ((((below & _HIGH_BITS) >> _SEVEN) * _BYTE_SUM) >> _FIFTY_SIX).astype(np.int64) + 1
    values = packed_groups(word & below & _LOW_BITS)
    longer = np.flatnonzero(length > 8)
    if longer.size:
        at = pos[longer]
        second = words_at(b, at + 8)
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
            values[where], length[where] = long_varints(b, at[slow])
    cursor = pos + length
    if np.any(cursor > limit):
        raise Unusual()
    return values, cursor


def packed_groups(x: np.ndarray) -> np.ndarray:
    """Eight 7-bit groups, one per byte (low byte first), packed into one 56-bit number."""
    x = (x & np.uint64(0x007F007F007F007F)) | ((x & np.uint64(0x7F007F007F007F00)) >> _ONE)
    x = (x & np.uint64(0x00003FFF00003FFF)) | ((x & np.uint64(0x3FFF00003FFF0000)) >> np.uint64(2))
    return (x & np.uint64(0x000000000FFFFFFF)) | ((x & np.uint64(0x0FFFFFFF00000000)) >> np.uint64(4))


_HIGH_BITS = np.uint64(0x8080808080808080)
_LOW_BITS = np.uint64(0x7F7F7F7F7F7F7F7F)
_ONE, _SEVEN, _FIFTY_SIX = np.uint64(1), np.uint64(7), np.uint64(56)
_BYTE_SUM = np.uint64(0x0101010101010101)  # times a word of 0/1 bytes: their sum in the top byte


def words_at(b: np.ndarray, at: np.ndarray) -> np.ndarray:
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


def long_varints(b: np.ndarray, at: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Varints of nine or ten bytes, or near the end of the buffer: (values, lengths)."""
    window = np.minimum(at[:, None] + _OFFSETS, b.size - 1)
    raw = b[window]
    stops = raw < 0x80
    if not np.all(stops.any(axis=1)):
        raise Unusual()  # no last byte within ten
    length = stops.argmax(axis=1) + 1
    keep = length[:, None] > _OFFSETS
    parts = (raw & 0x7F).astype(np.uint64) << _SHIFTS
    parts[~keep] = 0
    return np.bitwise_or.reduce(parts, axis=1), length
