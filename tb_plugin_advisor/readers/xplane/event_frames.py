"""Where each event of a serialized XLine starts and ends.

Events follow each other — the events tag (0x22), the length as a varint, the bytes — so the k-th
event's position depends on every length before it: a sequential walk. The protobuf runtime does it
in C (`XLineRawEvents`: the events as raw bytes) and only their lengths are kept. (A numpy walk over
every 0x22 byte of the line was tried: stats are tagged 0x22 too, and it came out 3x slower.)
"""

from __future__ import annotations

from typing import Tuple

import numpy as np

from tb_plugin_advisor.readers.xplane import schema
from tb_plugin_advisor.readers.xplane.varints import Unusual, varint_size, varints

EVENTS_TAG = 0x22  # XLine field 4, length-delimited


def frame_events(line: bytes, b: np.ndarray, first: int) -> Tuple[np.ndarray, np.ndarray, int]:
    """(payload starts, ends) of the consecutive events from `first`, and where they stop.

    `b` is `line` as uint8; the line's other fields start where the events stop. Raises Unusual
    when the events are not one consecutive run (the runtime decodes such a line itself).
    """
    raw = schema.XLineRawEvents.FromString(line).events
    lengths = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
    del raw
    if lengths.size == 0:
        return lengths, lengths, first
    head = 1 + varint_size(lengths)
    starts = first + np.concatenate(([0], np.cumsum(head + lengths)[:-1]))
    payload = starts + head
    ends = payload + lengths
    # the positions must be a real walk of consecutive events: every one starts with the events tag
    # and its encoded length
    if int(ends[-1]) > b.size or not np.all(b[starts] == EVENTS_TAG):
        raise Unusual()
    encoded, _ = varints(b, starts + 1, ends)
    if not np.array_equal(encoded.view(np.int64), lengths):
        raise Unusual()
    return payload, ends, int(ends[-1])
