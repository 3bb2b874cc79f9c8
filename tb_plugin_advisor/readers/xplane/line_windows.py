"""A long XLine decoded from the file a window at a time, never held whole (memory).

A 300 MB profile's busiest host thread is one XLine of 130 MB. Reading it whole put its bytes beside
its decoded columns, and that was the read's peak. Here the C walker (`_wire.frame(..., partial)`)
frames the line's events a window of the file at a time: each window's blocks and where the next
window starts (before the event the window cut). The columns are then allocated once, and each
block is read again on its own (a few MB) and decoded into them, as `event_columns` does for a
whole line. Anything unusual (no walker, fields before the first event or after the last too long
for a window, events interleaved with other fields, a block that is not what was framed because
the file changed between the passes) returns None: the reader then reads the line whole as before,
which decides what is valid and words any error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
from google.protobuf.message import DecodeError

from tb_plugin_advisor.readers.xplane import event_columns as ec
from tb_plugin_advisor.readers.xplane.event_frames import EVENTS_TAG
from tb_plugin_advisor.readers.xplane.wire import ByteSource

WINDOW = 8 << 20  # bytes of the line framed at a time
WHOLE_BELOW = 16 << 20  # shorter lines are read whole: two passes would gain nothing
HEADER_LIMIT = 1 << 20  # bytes of non-event fields before or after the events read from a window


@dataclass
class LineRange:
    """An XLine's bytes [start, end) in a profile, read only when needed."""

    source: ByteSource
    start: int
    end: int

    def read(self, start: Optional[int] = None, end: Optional[int] = None) -> Any:
        return self.source.read(self.start if start is None else start, self.end if end is None else end)

    def __len__(self) -> int:
        return self.end - self.start


@dataclass
class _Block:
    """A run of a line's events framed in one window, decoded together by fill_block."""

    start: int  # absolute offsets in the profile
    end: int
    events: int
    stats: int
    row: int  # the line's event index of its first event


def decode_windows(line: LineRange, on_offset: Optional[Callable[[int], None]],
                   on_stats: Callable[[ec.StatBlock], None], max_events: Optional[int]
                   ) -> Optional[Tuple[ec.EventColumns, List[bytes]]]:
    """(columns, the line's non-event fields as serialized parts), with each block's stats handed to
    `on_stats` in order; None when the line is short, unusual or changed between the passes (the
    blocks `on_stats` was given are then void)."""
    if not ec.COMPILED or len(line) < WHOLE_BELOW:
        return None
    try:
        framed = _frame(line, max_events)
        if framed is None:
            return None
        blocks, header = framed
        count = blocks[-1].row + blocks[-1].events
        columns = tuple(np.empty(count, dtype=np.int64) for _ in range(3))  # metadata id, offset, duration

        def fill(block: _Block) -> ec.StatBlock:
            data = bytes(line.read(block.start, block.end))  # (a memoryview slice has no .decode)
            parts = ec._wire.fill_block(data, 0, block.events, block.stats, ec.BLOCK_STATS, *columns,
                                        block.row)
            return ec._stat_block(data, *parts)

        for block, stats in zip(blocks, ec._in_order(fill, blocks)):
            on_stats(stats)
            if on_offset is not None:
                on_offset(block.end - line.start)
        return ec.EventColumns(*columns, []), header
    except (ec._Unusual, IndexError, UnicodeDecodeError, DecodeError, ValueError):
        return None  # ValueError: a block is not what was framed (the file changed between passes)


def _frame(line: LineRange, max_events: Optional[int]) -> Optional[Tuple[List[_Block], List[bytes]]]:
    """The line's blocks, framed a window at a time, and its non-event fields; None when unusual."""
    head = bytes(line.read(line.start, min(line.end, line.start + HEADER_LIMIT)))
    first, spans = ec._first_event(np.frombuffer(head, dtype=np.uint8))
    if first >= len(head):  # no event within the first window: not worth the windows
        return None
    header = [head[a:b] for a, b in spans]
    blocks: List[_Block] = []
    rows, pos, span = 0, line.start + first, WINDOW
    while pos < line.end:
        window = line.read(pos, min(line.end, pos + span))
        more = pos + len(window) < line.end
        # shallow: the stats are checked by fill_block (a ValueError there declines the line), so
        # this pass only finds the events' bounds, twice as fast as checking everything twice
        framed = ec._wire.frame(window, 0, ec.BLOCK, ec.BLOCK_STATS, more, True)
        if framed is None:
            return None
        starts, events, stats = (np.frombuffer(x, dtype=np.int64).tolist() for x in framed[:3])
        stop = framed[3]
        if not events:
            if stop < len(window) and window[stop] == EVENTS_TAG and more:
                span *= 2  # one event longer than the window: a wider one
                continue
            break  # the events end here
        for k, (start, n_events, n_stats) in enumerate(zip(starts, events, stats)):
            end = starts[k + 1] if k + 1 < len(starts) else stop
            blocks.append(_Block(pos + start, pos + end, n_events, n_stats, rows))
            rows += n_events
            if max_events is not None and rows > max_events:
                return None  # over the event budget: the whole-line path refuses it with its message
        pos += stop
        span = WINDOW
        if stop < len(window) and window[stop] != EVENTS_TAG:
            break  # the events end inside this window
    if not blocks:
        return None
    if line.end - pos > HEADER_LIMIT:
        return None  # events interleaved with other fields, or a huge field after them
    tail = bytes(line.read(pos, line.end))
    header += [tail[a:b] for a, b in ec._header_fields(np.frombuffer(tail, dtype=np.uint8), 0)]
    return blocks, header
