"""Kineto trace file → typed events: a guarded, bounded read (readers/guarded_io.py), typed JSON
decoding.

The parser is msgspec with typed Structs (bench/bench_kineto.py measures it against orjson and the
stdlib): each event is decoded into a Struct that skips every field the Advisor does not use, and
its `args` stay raw until the event's role needs them. Memory shapes the decoding. The reader's
usual path (stream.py) decodes traceEvents a batch at a time while the text streams by, and holds
neither the text nor anything per event but the columns. This module is also the whole-document
path it falls back on: the document validated in one pass with each event kept as a raw slice of
the input (`msgspec.Raw`, ~60 bytes an event, no copy), then decoded one event at a time; that
path words every error, and holds the text and the slices until the last event is read.
"""

from __future__ import annotations

from typing import Any, List, Optional, Union

import msgspec

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.guarded_io import ReadLimits, current, read_whole

_NO_NUMBER = msgspec.Raw(b"")


class TraceEvent(msgspec.Struct, array_like=False, gc=False):
    """One Chrome trace event; only the fields the Advisor reads are decoded."""

    ph: str = ""
    name: Any = ""
    cat: Any = ""
    # Process and thread ids key the timeline's lines: a scalar, or the trace is refused by field.
    pid: Union[int, float, str, bool, None] = None
    tid: Union[int, float, str, bool, None] = None
    # Times stay raw text: float µs since the epoch (ns_resolution traces) would lose the ns digits
    # in a float64 (0.25 µs steps at 1.7e15); micros_to_ns reads them exactly.
    ts: msgspec.Raw = _NO_NUMBER
    dur: msgspec.Raw = _NO_NUMBER
    id: Any = None
    s: Optional[str] = None
    args: msgspec.Raw = msgspec.Raw(b"")


class KinetoTrace(msgspec.Struct, gc=False):
    """The top-level object of a `.pt.trace.json`."""

    traceEvents: Optional[List[msgspec.Raw]] = None
    schemaVersion: Any = None
    deviceProperties: Any = None
    distributedInfo: Any = None
    baseTimeNanoseconds: Optional[int] = None
    displayTimeUnit: Optional[str] = None
    traceName: Optional[str] = None
    trace_id: Optional[str] = None
    host_name: Optional[str] = None
    record_shapes: Any = None
    profile_memory: Any = None
    with_stack: Any = None
    roctracer_version: Any = None
    hip_runtime_version: Any = None
    cuda_runtime_version: Any = None


TRACE_DECODER = msgspec.json.Decoder(KinetoTrace)
EVENT_DECODER = msgspec.json.Decoder(TraceEvent)
ARGS_DECODER = msgspec.json.Decoder(dict)


def decoded(decoder: msgspec.json.Decoder, data: Any) -> Any:
    """decoder.decode(data), with invalid UTF-8 in a string raised as UnicodeDecodeError (at its byte
    of `data`) whatever msgspec's version: up to 0.22 it raised that itself, from 0.23 a DecodeError
    that says only "Invalid UTF-8 encoded string"."""
    try:
        return decoder.decode(data)
    except msgspec.DecodeError as exc:
        if "UTF-8" not in str(exc):
            raise
        found = first_invalid_utf8(data)
        if found is None:
            raise
        raise found from exc


def first_invalid_utf8(data: Any, block: int = 1 << 20) -> Optional[UnicodeDecodeError]:
    """The UnicodeDecodeError of the first invalid UTF-8 sequence in `data`, its start and end counted
    from the start of `data`; None when all of it is valid. Checked a block at a time: a trace of
    hundreds of MB is never held as text (a block holds at least one whole character: 4 bytes)."""
    block = max(block, 4)
    with memoryview(data) as view:
        start = 0
        while start < len(view):
            chunk = bytes(view[start:start + block])
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                cut = exc.reason == "unexpected end of data" and start + len(chunk) < len(view)
                if cut and exc.start > 0:  # a character cut by the block's end: read with the next block
                    start += exc.start
                    continue
                found = UnicodeDecodeError(exc.encoding, chunk, exc.start, exc.end, exc.reason)
                found.start, found.end = start + exc.start, start + exc.end
                return found
            start += len(chunk)
    return None


# Nanoseconds a time may reach (±146 years from its origin), so that start + duration, and the base
# time of relative traces plus an offset, still fit the int64 columns the analyses read.
TIME_LIMIT_NS = 1 << 62


def decode_args(raw: msgspec.Raw) -> dict:
    """An event's args (raw bytes until now) → dict; {} when absent, not an object, or nested beyond
    what the decoder follows; invalid UTF-8 shows as U+FFFD."""
    if not raw:
        return {}
    try:
        return decoded(ARGS_DECODER, raw)
    except UnicodeDecodeError:
        return decode_args(repair_utf8(raw))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return {}


def repair_utf8(raw: msgspec.Raw) -> bytes:
    """The bytes of one event with each invalid UTF-8 sequence replaced by U+FFFD: a name cut in the
    middle of a multi-byte character stays readable instead of refusing the whole trace."""
    return bytes(raw).decode("utf-8", "replace").encode("utf-8")


def decode_event(raw: msgspec.Raw, index: int, source: str) -> TraceEvent:
    """One event of traceEvents (already known to be valid JSON) → TraceEvent. UnicodeDecodeError
    passes to the caller, which counts the event and decodes `repair_utf8(raw)` instead."""
    try:
        return decoded(EVENT_DECODER, raw)
    except msgspec.ValidationError as exc:
        where = str(exc).replace("`$.", f"`traceEvents[{index}].").replace("`$`", f"`traceEvents[{index}]`")
        raise ProfileReadError(source, f"not a PyTorch profiler trace: {where}") from exc


def micros_to_ns(raw: msgspec.Raw) -> Optional[int]:
    """A JSON number of µs (`1623143089861`, `1712170298123456.789`, `-5`, `1.5e3`) → exact int ns;
    None when it is not a finite number (a string, null, `1e400`)."""
    text = bytes(raw)
    if b"." not in text and b"e" not in text and b"E" not in text:
        try:
            return int(text) * 1000
        except ValueError:
            return None
    whole, _, fraction = text.partition(b".")
    if b"e" in text or b"E" in text or not whole.lstrip(b"-").isdigit() or not fraction.isdigit():
        try:
            return round(float(text) * 1000)
        except (ValueError, OverflowError):
            return None
    digits = fraction[:4].ljust(4, b"0")
    ns = abs(int(whole)) * 1000 + (int(digits) + 5) // 10  # round half up at the 4th decimal
    return -ns if text.startswith(b"-") else ns


def read_trace_bytes(source: str, limits: Optional[ReadLimits] = None) -> bytes:
    """The uncompressed bytes of a trace file, local or remote, through the readers' one guarded I/O
    layer and its one size cap (a FIFO or device is refused, a decompression bomb stops inflating)."""
    return read_whole(source, limits or current())


def decode_trace(data: bytes, source: str) -> KinetoTrace:
    """Bytes → KinetoTrace, or a ProfileReadError that says what is wrong and where."""
    if len(data) < 4096 and not bytes(data).strip():  # (a big buffer is never copied to check)
        raise ProfileReadError(source, "the file is empty")
    try:
        trace = decoded(TRACE_DECODER, data)
    except msgspec.ValidationError as exc:
        raise ProfileReadError(source, f"not a PyTorch profiler trace: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise ProfileReadError(source, f"invalid JSON ({exc})") from exc
    except RecursionError as exc:
        raise ProfileReadError(
            source, "the JSON is nested too deeply to be a PyTorch profiler trace (arrays or objects "
            "inside each other thousands of levels down)") from exc
    except UnicodeDecodeError as exc:
        raise ProfileReadError(
            source, f"invalid UTF-8 at byte {exc.start} in a top-level field ({exc.reason})") from exc
    if trace.traceEvents is None:
        raise ProfileReadError(
            source, "not a PyTorch profiler trace: the JSON object has no 'traceEvents' list")
    base = trace.baseTimeNanoseconds
    if isinstance(base, int) and not -TIME_LIMIT_NS < base < TIME_LIMIT_NS:
        raise ProfileReadError(
            source, f"baseTimeNanoseconds is out of range ({base}); a trace's base time is ns since 1970")
    return trace
