"""Kineto trace file → typed events: bounded reading, bounded gunzip, one typed JSON decode.

The parser is msgspec with typed Structs (bench/bench_kineto.py measures it against orjson and the
stdlib). Memory is what shapes the decoding: the whole document is validated in one pass with each
event kept as a raw slice of the input (`msgspec.Raw`, ~50 bytes an event, no copy); events are
then decoded one at a time into a Struct that skips every field the Advisor does not use, and each
event's `args` stay raw until the event's role needs them. Peak memory is the uncompressed bytes
plus about a third, where a whole-document parse into dicts takes 5–10× the file size.
"""

from __future__ import annotations

import os
import zlib
from typing import Any, List, Optional

import msgspec

from tb_plugin_advisor.errors import ProfileReadError

# The largest uncompressed trace the Advisor reads. Beyond it a trace would need several times that
# in memory; the message says how to raise it. A gzip member that inflates past it is refused while
# inflating (a decompression bomb never reaches memory). TB_ADVISOR_MAX_TRACE_BYTES overrides it.
DEFAULT_MAX_TRACE_BYTES = 2 * 1024**3
_INFLATE_CHUNK = 16 * 1024**2


def max_trace_bytes() -> int:
    value = os.environ.get("TB_ADVISOR_MAX_TRACE_BYTES", "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_TRACE_BYTES


_NO_NUMBER = msgspec.Raw(b"")


class TraceEvent(msgspec.Struct, array_like=False, gc=False):
    """One Chrome trace event; only the fields the Advisor reads are decoded."""

    ph: str = ""
    name: Any = ""
    cat: Any = ""
    pid: Any = None
    tid: Any = None
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


_DECODER = msgspec.json.Decoder(KinetoTrace)
_EVENT_DECODER = msgspec.json.Decoder(TraceEvent)
_ARGS_DECODER = msgspec.json.Decoder(dict)


def decode_args(raw: msgspec.Raw) -> dict:
    """An event's args (raw bytes until now) → dict; {} when absent or not an object."""
    if not raw:
        return {}
    try:
        value = _ARGS_DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return {}
    return value


def decode_event(raw: msgspec.Raw, index: int, source: str) -> TraceEvent:
    """One event of traceEvents (already known to be valid JSON) → TraceEvent."""
    try:
        return _EVENT_DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        where = str(exc).replace("`$.", f"`traceEvents[{index}].").replace("`$`", f"`traceEvents[{index}]`")
        raise ProfileReadError(source, f"not a PyTorch profiler trace: {where}") from exc


def micros_to_ns(raw: msgspec.Raw) -> Optional[int]:
    """A JSON number of µs (`1623143089861`, `1712170298123456.789`, `-5`, `1.5e3`) → exact int ns;
    None when it is not a number (a string, null)."""
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
        except ValueError:
            return None
    digits = fraction[:4].ljust(4, b"0")
    ns = abs(int(whole)) * 1000 + (int(digits) + 5) // 10  # round half up at the 4th decimal
    return -ns if text.startswith(b"-") else ns


def read_trace_bytes(source: str) -> bytes:
    """The uncompressed bytes of a trace file (local, or remote through TensorBoard's file layer)."""
    limit = max_trace_bytes()
    if "://" in source:
        data = _read_remote(source, limit)
    else:
        try:
            size = os.stat(source).st_size
        except OSError as exc:
            raise ProfileReadError(source, f"cannot open file ({exc})") from exc
        if size > limit:
            raise ProfileReadError(source, _too_big(size, limit))
        try:
            with open(source, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise ProfileReadError(source, f"cannot read file ({exc})") from exc
    return inflate(data, source, limit)


def inflate(data: bytes, source: str, limit: Optional[int] = None) -> bytes:
    """Gunzip (all members) when gzip, refusing output beyond `limit` bytes; plain data passes."""
    limit = max_trace_bytes() if limit is None else limit
    if data[:2] != b"\x1f\x8b":
        if len(data) > limit:
            raise ProfileReadError(source, _too_big(len(data), limit))
        return data
    pieces = bytearray()  # grown in place: no second copy of the whole trace when done
    total = 0
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(wbits=31)
            chunk = inflater.decompress(rest, _INFLATE_CHUNK)
            while True:
                total += len(chunk)
                if total > limit:
                    raise ProfileReadError(
                        source, f"the gzip data inflates past {limit:,} bytes (refused as a possible "
                        "decompression bomb; set TB_ADVISOR_MAX_TRACE_BYTES to allow more)")
                pieces += chunk
                if inflater.eof or not inflater.unconsumed_tail:
                    break
                chunk = inflater.decompress(inflater.unconsumed_tail, _INFLATE_CHUNK)
            if not inflater.eof:
                raise ProfileReadError(source, "the gzip data is truncated (the stream ends early)")
            rest = inflater.unused_data.lstrip(b"\x00")  # concatenated members, zero padding
    except zlib.error as exc:
        raise ProfileReadError(source, f"the gzip data is corrupt ({exc})") from exc
    return pieces


def decode_trace(data: bytes, source: str) -> KinetoTrace:
    """Bytes → KinetoTrace, or a ProfileReadError that says what is wrong and where."""
    if len(data) < 4096 and not bytes(data).strip():  # (a big buffer is never copied to check)
        raise ProfileReadError(source, "the file is empty")
    try:
        trace = _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        raise ProfileReadError(source, f"not a PyTorch profiler trace: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise ProfileReadError(source, f"invalid JSON ({exc})") from exc
    if trace.traceEvents is None:
        raise ProfileReadError(
            source, "not a PyTorch profiler trace: the JSON object has no 'traceEvents' list")
    return trace


def _too_big(size: int, limit: int) -> str:
    return (f"the trace is {size:,} bytes uncompressed, over the {limit:,}-byte limit "
            "(set TB_ADVISOR_MAX_TRACE_BYTES to read it anyway)")


def _read_remote(source: str, limit: int) -> bytes:
    # TensorBoard's own file layer stub (gs://, s3://, fsspec), never TensorFlow itself.
    from tensorboard.compat.tensorflow_stub.io import gfile

    try:
        with gfile.GFile(source, "rb") as handle:
            data = handle.read(limit + 1)
    except Exception as exc:  # the stub raises its own NotFoundError / UnimplementedError types
        raise ProfileReadError(source, f"cannot open file ({exc})") from exc
    if len(data) > limit and data[:2] != b"\x1f\x8b":
        raise ProfileReadError(source, _too_big(len(data), limit))
    return data
