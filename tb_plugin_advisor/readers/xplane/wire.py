"""The protobuf wire format, just enough to split an XSpace without parsing it whole.

A parsed message holds ~7x its bytes, so the reader cuts planes, lines and runs of events out of the
file at this level and hands only those pieces to the protobuf runtime.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, List, Optional, Tuple

from tb_plugin_advisor.errors import ProfileReadError

try:  # the optional C walker (readers/xplane/_wire.c): split_fields' loop, a window at a time
    from tb_plugin_advisor.readers.xplane import _wire
except ImportError:  # pragma: no cover - built without a compiler
    _wire = None

# Events are parsed a few MB at a time: one GPU stream of a large profile can be hundreds of MB.
CHUNK_BYTES = 1 << 20


def varint(buf: memoryview, pos: int, end: int, source: str) -> Tuple[int, int]:
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


def fields(buf: memoryview, pos: int, end: int, source: str, where: str) -> Iterator[Tuple[int, int, Any]]:
    """Yield (field number, wire type, value) where value is an int or a (start, end) slice."""
    while pos < end:
        key, pos = varint(buf, pos, end, source)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProfileReadError(source, f"{_corrupt(where)} (field number 0 at byte {pos})")
        if wire_type == 0:
            value, pos = varint(buf, pos, end, source)
            yield number, 0, value
        elif wire_type == 2:
            length, pos = varint(buf, pos, end, source)
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


def utf8(raw: memoryview, source: str) -> str:
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileReadError(source, f"corrupt text field ({exc})") from exc


def event_chunks(
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
                length, pos = varint(buf, pos + 1, end, source)
            if pos + length > end:
                missing = pos + length - end
                raise ProfileReadError(source, f"the file is truncated: an event needs {missing} more bytes")
            if chunk_start < 0:
                chunk_start = field_start
            pos += length
            in_chunk += 1
            if pos - chunk_start >= CHUNK_BYTES:
                yield chunk_start, pos, in_chunk
                chunk_start, in_chunk = -1, 0
            continue
        stop = field_end(buf, pos, end, source)
        header_parts.append(bytes(buf[pos:stop]))  # a field's raw bytes are a valid encoding
        pos = stop
    if chunk_start >= 0:
        yield chunk_start, end, in_chunk


def field_end(buf: memoryview, pos: int, end: int, source: str) -> int:
    """Where the field starting at pos ends."""
    key, pos = varint(buf, pos, end, source)
    wire_type = key & 7
    if wire_type == 0:
        return varint(buf, pos, end, source)[1]
    if wire_type == 2:
        length, pos = varint(buf, pos, end, source)
        if pos + length > end:
            raise ProfileReadError(source, "the file is truncated inside a line")
        return pos + length
    if wire_type in (1, 5):
        return pos + (8 if wire_type == 1 else 4)
    raise ProfileReadError(source, f"corrupt data in XLine (wire type {wire_type})")


class ByteSource:
    """Bytes [start, end) of a profile, copied from a file with pread or sliced from memory."""

    def __init__(self, name: str, size: int, reader: Callable[[int, int], Any]):
        self.name = name
        self.size = size
        self.read = reader

    @classmethod
    def of_memory(cls, name: str, view: memoryview) -> ByteSource:
        return cls(name, len(view), lambda start, end: view[start:end])


class Window:
    """Field headers of a large region, read a window at a time (a few syscalls, not one per field)."""

    SPAN = 1 << 16

    def __init__(self, source: ByteSource, end: int):
        self.source = source
        self.end = end
        self.base = 0
        self.buf: Any = b""
        self.field_start = self.field_end = 0  # the span of the field just yielded (key included)

    def fields(self, pos: int, where: str) -> Iterator[Tuple[int, int, Any]]:
        """Like `fields`, but over the source: values of length-delimited fields are (start, end)."""
        name = self.source.name
        while pos < self.end:
            self.field_start = pos
            head = self._at(pos, 20)
            key, used = varint(head, 0, len(head), name)
            number, wire_type = key >> 3, key & 7
            if number == 0:
                raise ProfileReadError(name, f"{_corrupt(where)} (field number 0 at byte {pos})")
            if wire_type == 0:
                value, used = varint(head, used, len(head), name)
                pos += used
                self.field_end = pos
                yield number, 0, value
            elif wire_type == 2:
                length, used = varint(head, used, len(head), name)
                start = pos + used
                if start + length > self.end:
                    missing = start + length - self.end
                    problem = f"the file is truncated: a field of the {where} needs {missing} more bytes"
                    raise ProfileReadError(name, problem)
                self.field_end = start + length
                yield number, 2, (start, start + length)
                pos = start + length
            elif wire_type in (1, 5):
                size = 8 if wire_type == 1 else 4
                if pos + used + size > self.end:
                    raise ProfileReadError(name, f"the file is truncated inside {where}")
                self.field_end = pos + used + size
                yield number, wire_type, (pos + used, pos + used + size)
                pos += used + size
            else:
                raise ProfileReadError(name, f"{_corrupt(where)} (wire type {wire_type} at byte {pos})")

    def _at(self, pos: int, size: int) -> Any:
        end = min(pos + size, self.end)
        if not (self.base <= pos and end <= self.base + len(self.buf)):
            self.base = pos
            self.buf = self.source.read(pos, min(pos + self.SPAN, self.end))
        return memoryview(self.buf)[pos - self.base : end - self.base]


class Progress:
    """Reports bytes done to an `on_progress(done, total)` callback, seen from inside a slice."""

    def __init__(self, callback: Optional[Callable[[int, int], None]], total: int, base: int = 0):
        self.callback = callback
        self.total = total
        self.base = base

    def at(self, offset: int) -> Progress:
        return Progress(self.callback, self.total, self.base + offset)

    def done(self, offset: int) -> None:
        if self.callback is not None:
            self.callback(min(self.base + offset, self.total), self.total)


Spans = List[Tuple[int, int]]


def split_fields(source: ByteSource, pos: int, end: int, split: int, counted: Tuple[int, ...],
                 max_split: int, max_counted: int, compiled: bool = False) -> Optional[Tuple[Spans, Spans]]:
    """The values of length-delimited field `split`, and the runs of all other fields between them,
    by one inline pass over [pos, end) (a plane's 100,000 metadata entries: Window.fields costs a
    generator step and two calls per field). None for anything unusual — a malformed field, more than
    `max_split` split fields or `max_counted` length-delimited `counted` fields — so that the caller
    walks again with Window.fields, which raises the precise error. `compiled`: the C walker's loop
    (it declines more than this one: varints over 64 bits), then this one where it declines."""
    if compiled and _wire is not None:
        found = _split_fields_compiled(source, pos, end, split, counted, max_split, max_counted)
        if found is not None:
            return found
    spans: Spans = []
    runs: Spans = []
    run_start, n_counted = -1, 0
    buf, base = b"", pos
    while pos < end:
        i = pos - base
        if i + 20 > len(buf) and base + len(buf) < end:  # a key and a length fit in what is read
            buf, base, i = bytes(source.read(pos, min(pos + Window.SPAN, end))), pos, 0
        key = buf[i]
        if key < 0x80:
            i += 1
        else:
            key, i = _varint_or_none(buf, i)
            if key is None:
                return None
        number, wire_type = key >> 3, key & 7
        if number == 0:
            return None
        if wire_type == 2 or wire_type == 0:
            value = buf[i] if i < len(buf) else 0x80
            if value < 0x80:
                i += 1
            else:
                value, i = _varint_or_none(buf, i)
                if value is None:
                    return None
            start = base + i
            stop = start + value if wire_type == 2 else start
        elif wire_type in (1, 5):
            start = base + i
            stop = start + (8 if wire_type == 1 else 4)
        else:
            return None
        if stop > end:
            return None
        if number == split and wire_type == 2:
            if run_start >= 0:
                runs.append((run_start, pos))
                run_start = -1
            spans.append((start, stop))
            if len(spans) > max_split:
                return None
        else:
            if wire_type != 0 and number in counted:
                n_counted += 1
                if n_counted > max_counted:
                    return None
            if run_start < 0:
                run_start = pos
        pos = stop
    if run_start >= 0:
        runs.append((run_start, pos))
    return spans, runs


def _split_fields_compiled(source: ByteSource, pos: int, end: int, split: int, counted: Tuple[int, ...],
                           max_split: int, max_counted: int) -> Optional[Tuple[Spans, Spans]]:
    mask = sum(1 << number for number in set(counted) if 0 <= number < 64)
    spans: Spans = []
    runs: Spans = []
    run_start, n_counted = -1, 0
    while pos < end:
        found = _wire.split_window(source.read(pos, min(pos + Window.SPAN, end)), pos, end, split, mask,
                                   run_start, n_counted, max_split - len(spans), max_counted)
        if found is None or found[2] <= pos:
            return None
        found_spans, found_runs, pos, run_start, n_counted = found
        spans += _pairs(found_spans)
        runs += _pairs(found_runs)
    if run_start >= 0:
        runs.append((run_start, pos))
    return spans, runs


def _pairs(raw: bytes) -> Spans:
    """Native int64 pairs → [(a, b), …]."""
    values = memoryview(raw).cast("q").tolist()
    return list(zip(values[::2], values[1::2]))


def _varint_or_none(buf: bytes, i: int) -> Tuple[Optional[int], int]:
    result = shift = 0
    while i < len(buf) and shift <= 63:
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i
        shift += 7
    return None, i
