"""What the first bytes of a trace file say: when its events start, whether a JSON file under another
name starts like a trace, and whether it is a trace at all.

Discovery lists every trace of a run directory and must stay cheap however large the traces are, so
this reads a bounded head (guarded_io.read_head: at most HEAD_BYTES of the file, and of its text when
gzip) and frames the whole events in it the way the reader does (stream.EventStream), never the
rest of the file. The answer is the earliest start of a complete (`X`) event among them, in ns since
the epoch: `baseTimeNanoseconds` plus the event's `ts` where the trace has a base time (written
before the events by current torch), else `ts` itself (2021 traces write µs since the epoch). A trace
whose base time comes only after its events (ROCm) gives its relative `ts` here: whoever uses the
answer must check it is plausible (captures.py holds it to the file's handler stamp).

None when the head holds no whole `X` event, is not a trace, or cannot be read.

The trace route serves a file only once its content is a trace (readers/profile_check.py):
`check_trace_head` asks for a JSON object whose `traceEvents` array starts within TRACE_HEAD bytes
(the fields before it decoded as the reader decodes them). The largest head in the corpus is 23 KB
(TraceLens' MI300 traces); text, keys and other JSON have no such array.
"""

from __future__ import annotations

from typing import Iterator, Optional

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.guarded_io import read_head
from tb_plugin_advisor.readers.kineto.load import TIME_LIMIT_NS, micros_to_ns
from tb_plugin_advisor.readers.kineto.stream import Declined, EventStream

# Bytes of the file read (and of text inflated): the top-level fields before traceEvents are ~3 KB
# for eight GPUs' deviceProperties, and an event ~300 bytes, so a head holds a hundred events or more.
HEAD_BYTES = 64 << 10
# Bytes read to tell a trace saved under another name (`prof.export_chrome_trace`) from other JSON:
# Kineto writes `"schemaVersion"` first, so 4 KiB of head is plenty.
SNIFF_BYTES = 4096


def looks_like_trace(path: str) -> bool:
    """Whether a local `.json[.gz]` file starts like a Kineto trace (reads at most SNIFF_BYTES of it,
    through the readers' guarded I/O: a file swapped for a FIFO since the listing is not waited on)."""
    try:
        head = read_head(path, SNIFF_BYTES)
    except (ProfileReadError, OSError):
        return False
    return head.lstrip()[:1] == b"{" and b'"schemaVersion"' in head


def first_event_ns(source: str, head_bytes: int = HEAD_BYTES) -> Optional[int]:
    """The earliest start of a complete event in the first `head_bytes` of a local trace file, in ns
    (since the epoch when the trace's times are), or None (see the module docstring)."""
    try:
        text = read_head(source, head_bytes)
    except (ProfileReadError, OSError):
        return None
    stream = EventStream(iter([bytes(text)]))
    try:
        base = stream.head().baseTimeNanoseconds
        _, events, _ = next(stream.batches())
    except (Declined, StopIteration):
        return None
    finally:
        stream.close()
    starts = [micros_to_ns(e.ts) for e in events if e.ph == "X" and e.ts]
    known = [s for s in starts if s is not None]
    if not known:
        return None
    earliest = min(known) + (base if isinstance(base, int) and base > 0 else 0)
    return earliest if -TIME_LIMIT_NS < earliest < TIME_LIMIT_NS else None


TRACE_HEAD = 1 << 20  # bytes of text within which a trace's traceEvents array must start


def check_trace_head(pieces: Iterator[bytes], source: str) -> None:
    """None when the text (a piece at a time) is a JSON object whose traceEvents array starts within
    TRACE_HEAD bytes; ProfileReadError saying why not. The Kineto format's content check."""
    try:
        EventStream(pieces).head(within=TRACE_HEAD)
    except Declined as exc:
        problem = (f"not a PyTorch profiler trace: no JSON object with a traceEvents array in its "
                   f"first {TRACE_HEAD >> 20} MB ({exc})")
        raise ProfileReadError(source, problem) from None
