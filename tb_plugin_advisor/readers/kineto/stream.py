"""A trace's `traceEvents`, decoded a batch of whole events at a time while its bytes stream by.

Holding the whole text costs the file's size, and one raw slice per event another ~60 bytes an
event: a trace of 10 M tiny events peaked at 3x its size, one of a million kernel names at 4x. Here
the text comes a piece at a time (guarded_io.read_pieces) and only the bytes of the events not yet
decoded are kept.

Framing needs no tokenizer of its own. A batch ends at a `}` followed, after whitespace, by a `,`
and a `{` (the next event) or by the `]` that closes the array; such a `}` can also sit inside a
string or a nested object, but then the batch, decoded as a JSON list, is not valid: a batch that
starts at a true event start is read by the decoder in the same states as inside the whole
document, so one that decodes is exactly a run of whole events (a `]` after it can only close
traceEvents). The fields around the array are decoded with `[1]` in its place: before the events
(the head, for baseTimeNanoseconds) and at the end (head and tail), which checks that the rest of
the text is one valid object and that no later key overrides this traceEvents.

Anything this cannot vouch for (no literal `"traceEvents": [`, a batch that does not decode, a
wrong type, traceEvents given twice) raises Declined: the whole-document path (load.py) then reads
the trace and words any error, so both paths give the same profile or the same message.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

import msgspec

from tb_plugin_advisor.readers.kineto.load import (
    EVENT_DECODER,
    TIME_LIMIT_NS,
    TRACE_DECODER,
    KinetoTrace,
    TraceEvent,
    decoded,
    repair_utf8,
)

_BATCH_DECODER = msgspec.json.Decoder(List[TraceEvent])
_RAW_BATCH_DECODER = msgspec.json.Decoder(List[msgspec.Raw])

KEY = b'"traceEvents"'
SENTINEL = b"[1]"  # stands for the array when the fields around it are decoded
_WHITESPACE = b" \t\n\r"
_COMMA, _OPEN, _CLOSE = ord(","), ord("{"), ord("]")
ATTEMPTS = 4  # candidate ends tried one after the other before the search halves the buffer
# Bytes of failed attempts allowed, beyond the document's own size: text built to fool the framing
# (many `},{` inside strings) is then left to the whole-document path instead of decoded again and
# again.
WASTE_ALLOWANCE = 16 << 20
# Undecoded bytes held without finding the end of an event, or the traceEvents key: declined (the
# buffer grows by a copy per piece, which must not go on without end).
LONGEST_EVENT = 64 << 20


class Declined(Exception):
    """This path cannot vouch for the document: the whole-document path reads it."""


Batch = Tuple[int, List[TraceEvent], int]  # (index of the first event, events, events with bad UTF-8)


class EventStream:
    """`head()` first (the fields before traceEvents), then `batches()`, then `trace()`."""

    def __init__(self, pieces: Iterator[bytes]):
        self._pieces = pieces
        self._buffer = b""
        self._eof = False
        self.size = 0  # bytes of text seen so far (all of it once trace() returns)
        self._head = b""
        self._tail: List[bytes] = []
        self._wasted = 0

    def close(self) -> None:
        """Stop reading (the file is closed at once, not when the generator is collected)."""
        close = getattr(self._pieces, "close", None)
        if close is not None:
            close()

    # -- bytes ------------------------------------------------------------------------------------

    def _more(self, at_least: int = 1) -> bool:
        """Append at least `at_least` more bytes to the buffer (a piece at least, joined once: a
        buffer that grows by a copy per piece grows in quadratic time); False when the text ended
        with nothing more."""
        parts = [self._buffer] if self._buffer else []
        added = 0
        for piece in self._pieces:
            if piece:
                parts.append(piece)
                added += len(piece)
                if added >= at_least:
                    break
        else:
            self._eof = True
        if added:
            self.size += added
            self._buffer = parts[0] if len(parts) == 1 else b"".join(parts)
        return added > 0

    def _skip_whitespace(self, at: int, within: int = LONGEST_EVENT) -> int:
        """The first position at or after `at` that is not whitespace, reading more as needed (up to
        `within` bytes of buffer); the buffer's length at the end of the text or of that bound."""
        while True:
            at = _skip(self._buffer, at)
            if (at < len(self._buffer) or self._eof or len(self._buffer) > within
                    or not self._more(len(self._buffer))):
                return at

    # -- the head ---------------------------------------------------------------------------------

    def head(self, within: int = LONGEST_EVENT) -> KinetoTrace:
        """The top-level fields written before traceEvents (baseTimeNanoseconds among them); Declined
        unless the array starts within about `within` bytes of text."""
        searched = 0
        while True:
            at = self._buffer.find(KEY, max(0, searched - len(KEY)))
            if at >= 0:
                break
            searched = len(self._buffer)
            if searched > within or not self._more(searched):
                raise Declined("no traceEvents key")
        colon = self._skip_whitespace(at + len(KEY), within)
        if colon >= len(self._buffer) or self._buffer[colon] != ord(":"):
            raise Declined("traceEvents is not followed by a value")
        bracket = self._skip_whitespace(colon + 1, within)
        if bracket >= len(self._buffer) or self._buffer[bracket] != ord("["):
            raise Declined("traceEvents is not an array")
        self._head = self._buffer[:bracket]
        self._buffer = self._buffer[bracket + 1 :]
        return _decode_around(self._head + SENTINEL + b"}")

    # -- the events -------------------------------------------------------------------------------

    def batches(self) -> Iterator[Batch]:
        """The events, a batch of whole events at a time, in file order."""
        index = 0
        start = self._skip_whitespace(0)
        if start < len(self._buffer) and self._buffer[start] == _CLOSE:  # `[]`
            self._end_array(start)
            return
        while True:
            found = self._decode_batch()
            if found is None:  # an event longer than the buffer: twice as much, then search again
                if len(self._buffer) > LONGEST_EVENT or not self._more(len(self._buffer)):
                    raise Declined("no decodable end of an event")
                continue
            events, bad_utf8, after, closed = found
            yield index, events, bad_utf8
            index += len(events)
            del events
            if closed:
                self._end_array(after)
                return
            self._buffer = self._buffer[after + 1 :]
            if not self._eof:  # the next batch: what is left and the next piece
                self._more()

    def _decode_batch(self) -> Optional[Tuple[List[TraceEvent], int, int, bool]]:
        """(events, events with bad UTF-8, position of the `,` or `]` after them, whether it is the
        `]`) for a long run of whole events the buffer holds, or None when it holds none yet.

        The candidate ends before the buffer's end are tried one after the other (ATTEMPTS of them),
        then those before half of it, a quarter …: once the buffer holds the end of traceEvents and
        the fields after it, their `},{` (a list of devices) are candidates too, and the true end
        lies before them. A batch that decodes up to the array's `]` and fails on what follows says
        where that `]` is (the decoder's "trailing characters" position): the search goes on from
        there. Neither hint changes what is read, only how soon."""
        buffer = self._buffer
        level = len(buffer)
        while level > 0:
            end = level
            for _ in range(ATTEMPTS):
                candidate = _candidate(buffer, end)
                if candidate is None:
                    break
                close, after, closed = candidate
                with memoryview(buffer) as view:
                    batch = b"".join((b"[", view[: close + 1], b"]"))
                end = close
                try:
                    return decoded(_BATCH_DECODER, batch), 0, after, closed
                except UnicodeDecodeError:
                    found = _repaired(batch)
                    if found is not None:
                        return found[0], found[1], after, closed
                except msgspec.ValidationError as exc:  # valid JSON of the wrong shape: the other path says
                    raise Declined(str(exc)) from exc
                except (msgspec.DecodeError, RecursionError) as exc:
                    end = min(close, _array_end(batch, str(exc)))
                self._wasted += len(batch)
                if self._wasted > 4 * self.size + WASTE_ALLOWANCE:
                    raise Declined("the events' ends cannot be found")
            level = min(level // 2, end)
        return None

    def _end_array(self, close: int) -> None:
        self._tail.append(self._buffer[close + 1 :])
        self._buffer = b""
        while self._more():
            self._tail.append(self._buffer)
            self._buffer = b""

    # -- the whole --------------------------------------------------------------------------------

    def trace(self) -> KinetoTrace:
        """Every top-level field but traceEvents, once the events are read: the values the whole
        document gives (a baseTimeNanoseconds after traceEvents included: the reader applies it
        then), or Declined."""
        tail = b"".join(self._tail)
        self._tail = []
        if KEY in tail:
            raise Declined("traceEvents given twice")
        return _decode_around(self._head + SENTINEL + tail)


def _decode_around(text: bytes) -> KinetoTrace:
    """The top-level fields with SENTINEL in the array's place; Declined unless SENTINEL is what
    traceEvents ends up as (a later key of the same name would override it) and the base time is in
    range (the whole-document path words that error)."""
    try:
        trace = decoded(TRACE_DECODER, text)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, UnicodeDecodeError) as exc:
        raise Declined(str(exc)) from exc
    events = trace.traceEvents
    if events is None or len(events) != 1 or bytes(events[0]) != b"1":
        raise Declined("traceEvents overridden")
    base = trace.baseTimeNanoseconds
    if isinstance(base, int) and not -TIME_LIMIT_NS < base < TIME_LIMIT_NS:
        raise Declined("baseTimeNanoseconds out of range")
    trace.traceEvents = None
    return trace


def _candidate(buffer: bytes, end: int) -> Optional[Tuple[int, int, bool]]:
    """The last `}` before `end` that may end an event: (its position, the position of the `,` or
    `]` after it, whether that is the `]`). What follows must be in the buffer to be judged (at the
    end of the text, a `}` with nothing after it cannot end traceEvents either)."""
    size = len(buffer)
    while True:
        close = buffer.rfind(b"}", 0, end)
        if close < 0:
            return None
        end = close
        after = _skip(buffer, close + 1)
        if after >= size:
            continue
        mark = buffer[after]
        if mark == _CLOSE:
            return close, after, True
        if mark == _COMMA:
            following = _skip(buffer, after + 1)
            if following < size and buffer[following] == _OPEN:
                return close, after, False


_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")


def _array_end(batch: bytes, message: str) -> int:
    """The buffer position of traceEvents' `]`, from a batch that failed with `message` because the
    decoder read the batch's `[` up to that `]` and stopped at what follows; the batch's length (past
    every candidate) when the message says nothing of the kind."""
    found = _TRAILING.search(message)
    if found is None:
        return len(batch)
    at = min(int(found.group(1)), len(batch)) - 1  # the trailing character, or the one before it
    if batch[at] != _CLOSE:
        at -= 1
    while at > 0 and batch[at] in _WHITESPACE:
        at -= 1
    return at - 1 if batch[at] == _CLOSE else len(batch)  # (the batch starts with its own `[`)


_TEXT = re.compile(rb"[^ \t\n\r]")


def _skip(buffer: bytes, at: int) -> int:
    """The first position at or after `at` that is not JSON whitespace, or the buffer's length."""
    found = _TEXT.search(buffer, at)
    return found.start() if found is not None else len(buffer)


def _repaired(batch: bytes) -> Optional[Tuple[List[TraceEvent], int]]:
    """A batch with invalid UTF-8: each event decoded on its own, those with bad bytes read with
    U+FFFD (as load.decode_event's caller does); None when the batch is not valid JSON."""
    try:
        raws = _RAW_BATCH_DECODER.decode(batch)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    events: List[TraceEvent] = []
    bad = 0
    try:
        for raw in raws:
            try:
                events.append(decoded(EVENT_DECODER, raw))
            except UnicodeDecodeError:
                events.append(decoded(EVENT_DECODER, repair_utf8(raw)))
                bad += 1
    except (msgspec.ValidationError, UnicodeDecodeError) as exc:
        raise Declined(str(exc)) from exc
    return events, bad
