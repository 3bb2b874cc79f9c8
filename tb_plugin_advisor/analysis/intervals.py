"""Interval arithmetic on numpy columns: unions of millions of events and their measure inside windows.

The breakdown needs "how much of step i is covered by any event of category k (or of a higher
priority category)". Events overlap (nesting on a thread, several threads, several GPU streams), so
they are first merged into a sorted disjoint union; the covered length inside any window is then a
difference of a cumulative function evaluated with two binary searches — no per-event Python.
"""

from __future__ import annotations

import os
from typing import Iterable, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.lookup import row_chunks

try:  # one-pass unions in C (analysis/_intervals.c), built when a compiler was there at install time
    from tb_plugin_advisor.analysis import _intervals
except ImportError:  # pragma: no cover - depends on how the package was installed
    _intervals = None

# TB_ADVISOR_NO_COMPILED=1 keeps the compiled helpers out (as for the reader's walker).
COMPILED = _intervals is not None and os.environ.get("TB_ADVISOR_NO_COMPILED", "") in ("", "0")

Intervals = Tuple[np.ndarray, np.ndarray]  # (starts, ends), int64, sorted, disjoint when "merged"

EMPTY: Intervals = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def union(starts: np.ndarray, ends: np.ndarray) -> Intervals:
    """The sorted disjoint union of [start, end) intervals (empty ones dropped)."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    keep = ends > starts
    if not keep.all():
        starts, ends = starts[keep], ends[keep]
    if starts.size == 0:
        return EMPTY
    if starts.size > 1 and not bool((starts[1:] >= starts[:-1]).all()):  # kernels, lines: sorted already
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
    return _blocks(starts, ends)


def _blocks(starts: np.ndarray, ends: np.ndarray) -> Intervals:
    """Merge intervals sorted by start into disjoint blocks."""
    if COMPILED:
        return _as_intervals(_intervals.blocks(_int64(starts), _int64(ends)))
    return _blocks_numpy(starts, ends)


def _int64(times: np.ndarray) -> np.ndarray:
    """Times as the C code reads them: contiguous int64 (it reads any buffer as int64; an int32
    column, such as a compact duration, would be misread). No copy when they already are."""
    return np.ascontiguousarray(times, dtype=np.int64)


def _as_intervals(pair) -> Intervals:
    return np.frombuffer(pair[0], dtype=np.int64), np.frombuffer(pair[1], dtype=np.int64)


def _blocks_numpy(starts: np.ndarray, ends: np.ndarray) -> Intervals:
    running_end = np.maximum.accumulate(ends)
    # a new block starts where the interval begins after everything before it has ended
    new_block = np.empty(starts.size, dtype=bool)
    new_block[0] = True
    np.greater(starts[1:], running_end[:-1], out=new_block[1:])
    block_starts = starts[new_block]
    new_block[:-1] = new_block[1:]
    new_block[-1] = True  # now: "last interval of its block"
    block_ends = running_end[new_block]
    return block_starts, block_ends


def merge(a: Intervals, b: Intervals) -> Intervals:
    """Union of two merged sets in linear time (an interleave by binary search, no sort)."""
    if a[0].size == 0:
        return b
    if b[0].size == 0:
        return a
    if COMPILED:
        return _as_intervals(_intervals.merge(*(_int64(x) for x in (*a, *b))))
    return _merge_numpy(a, b)


def _merge_numpy(a: Intervals, b: Intervals) -> Intervals:
    n, m = a[0].size, b[0].size
    at_b = np.searchsorted(a[0], b[0], side="right") + np.arange(m)
    is_b = np.zeros(n + m, dtype=bool)
    is_b[at_b] = True
    starts = np.empty(n + m, dtype=np.int64)
    ends = np.empty(n + m, dtype=np.int64)
    starts[at_b], ends[at_b] = b
    starts[~is_b], ends[~is_b] = a
    del is_b, at_b
    return _blocks_numpy(starts, ends)


def union_all(parts: Iterable[Intervals]) -> Intervals:
    """Union of several interval sets (merged or not): each part merged, then pairwise merges."""
    return merge_all([union(*p) for p in parts if p[0].size])


def merge_all(merged: List[Intervals]) -> Intervals:
    """Union of several merged sets: pairwise merges."""
    if not merged:
        return EMPTY
    while len(merged) > 1:  # a balanced tree of merges: O(N log k)
        merged = [
            merge(merged[i], merged[i + 1]) if i + 1 < len(merged) else merged[i]
            for i in range(0, len(merged), 2)
        ]
    return merged[0]


def level_blocks(starts: np.ndarray, durations: np.ndarray, codes: np.ndarray, rows_before: np.ndarray,
                 first: int, last: int, a: int, b: int, levels: int, every: bool
                 ) -> Tuple[List[Intervals], Optional[Intervals]]:
    """One slice [a, b) of a start-sorted event column (starts, durations, int8 codes): the events of
    rows `rows_before` (ascending, all before `first`) then rows first..last-1, clipped to the slice,
    empty ones and negative codes left out. Returns the merged set of each code 0..levels-1 and, when
    `every`, of all of them (else None). One pass in C; in numpy a gather, then a mask and a union
    per code."""
    if COMPILED:
        per_level, whole = _intervals.level_blocks(
            _int64(starts), _durations(durations), np.ascontiguousarray(codes, dtype=np.int8),
            _int64(rows_before), first, last, a, b, levels, every)
        return [_as_intervals(pair) for pair in per_level], _as_intervals(whole) if every else None
    index = np.concatenate((np.asarray(rows_before, dtype=np.int64), np.arange(first, last)))
    picked_starts = starts[index]
    ends = picked_starts + durations[index]
    picked = codes[index]
    keep = (ends > a) & (picked >= 0) & (picked < levels)
    clipped_starts, clipped_ends = np.maximum(picked_starts[keep], a), np.minimum(ends[keep], b)
    picked = picked[keep]
    per_level = [union(clipped_starts[picked == k], clipped_ends[picked == k]) for k in range(levels)]
    return per_level, union(clipped_starts, clipped_ends) if every else None


def _durations(durations: np.ndarray) -> np.ndarray:
    """A duration column as the C code reads it: contiguous int32 or int64 (as the model keeps it)."""
    if durations.dtype in (np.int32, np.int64):
        return np.ascontiguousarray(durations)
    return _int64(durations)


def clip(merged: Intervals, lo: int, hi: int) -> Intervals:
    """The blocks of a merged set that overlap [lo, hi] — views, no copy."""
    starts, ends = merged
    first = int(np.searchsorted(ends, lo, side="left"))
    last = int(np.searchsorted(starts, hi, side="right"))
    return starts[first:last], ends[first:last]


def covered(merged: Intervals, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Length of `merged` (disjoint, sorted) inside each window [lo[i], hi[i]) — vectorised."""
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    starts, ends = merged
    if starts.size == 0:
        return np.zeros(lo.shape, dtype=np.int64)
    if COMPILED and lo.ndim == hi.ndim == 1 and lo.size == hi.size:
        return np.frombuffer(_intervals.covered(_int64(starts), _int64(ends), _int64(lo), _int64(hi)),
                             dtype=np.int64)
    return _covered_numpy(starts, ends, lo, hi)


def _covered_numpy(starts: np.ndarray, ends: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    cumulative = np.concatenate(([0], np.cumsum(ends - starts)))
    return _measure_up_to(starts, ends, cumulative, hi) - _measure_up_to(starts, ends, cumulative, lo)


def _measure_up_to(starts: np.ndarray, ends: np.ndarray, cumulative: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Covered length in (-inf, t)."""
    index = np.searchsorted(starts, t, side="right") - 1  # last block starting at or before t
    valid = index >= 0
    safe = np.where(valid, index, 0)
    inside = np.clip(t - starts[safe], 0, ends[safe] - starts[safe])
    return np.where(valid, cumulative[safe] + inside, 0)


def total(merged: Intervals) -> int:
    return int((merged[1] - merged[0]).sum())


def outermost(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Mask of intervals not contained in an earlier one (starts sorted): the top level of a nesting."""
    if starts.size == 0:
        return np.zeros(0, dtype=bool)
    running_end = np.maximum.accumulate(ends)
    mask = np.ones(starts.size, dtype=bool)
    mask[1:] = starts[1:] >= running_end[:-1]
    return mask


def in_windows(window_starts: np.ndarray, window_ends: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Which times fall in a window (`window_index(...) >= 0`), a chunk at a time (lookup.row_chunks):
    the index and its temporaries are 8 bytes per time each, 150 MB for a 300 MB profile's host
    thread at once."""
    out = np.empty(t.shape[0], dtype=bool)
    for part in row_chunks(t.shape[0]):
        out[part] = window_index(window_starts, window_ends, t[part]) >= 0
    return out


def window_index(window_starts: np.ndarray, window_ends: np.ndarray, t: np.ndarray) -> np.ndarray:
    """For each time t, the index of the (sorted, disjoint) window holding it, or -1.

    Times in order (a table's or a line's starts, the usual case) are cut at the windows' bounds: two
    binary searches per window and one running sum over the times, instead of a binary search per time
    and the gathers that check it (2.5x faster for a quarter million times and 700 steps)."""
    if _ordered_cut(window_starts, window_ends, t):
        first = np.searchsorted(t, window_starts, side="left")  # the times from first[i] to past[i] - 1
        past = np.searchsorted(t, window_ends, side="left")  # are those of window i
        marks = np.zeros(t.shape[0] + 1, dtype=np.int64)  # + (i + 1) where window i's times start,
        label = np.arange(1, window_starts.shape[0] + 1, dtype=np.int64)  # - (i + 1) past its last
        np.add.at(marks, first, label)
        np.add.at(marks, past, -label)
        index = np.cumsum(marks[:-1])
        index -= 1
        return index
    index = np.searchsorted(window_starts, t, side="right") - 1
    valid = index >= 0
    safe = np.where(valid, index, 0)
    inside = valid & (t < window_ends[safe]) if window_ends.size else valid & False
    return np.where(inside, index, -1)


def _ordered_cut(window_starts: np.ndarray, window_ends: np.ndarray, t: np.ndarray) -> bool:
    """Whether window_index may cut the times at the windows' bounds: signed integer times in
    ascending order, and windows that are each in order, in order, and disjoint (touching allowed)."""
    if not t.dtype.kind == window_starts.dtype.kind == window_ends.dtype.kind == "i":
        return False
    if window_starts.shape[0] and not (bool(np.all(window_ends >= window_starts))
                                       and bool(np.all(window_starts[1:] >= window_ends[:-1]))):
        return False
    return t.shape[0] < 2 or bool(np.all(t[1:] >= t[:-1]))


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """The intersection of two merged (sorted, disjoint) sets, as a merged set — a sweep, no Python loop."""
    if a[0].size == 0 or b[0].size == 0:
        return EMPTY
    times = np.concatenate((a[0], a[1], b[0], b[1]))
    steps = np.concatenate((np.ones(a[0].size, np.int8), -np.ones(a[1].size, np.int8),
                            np.ones(b[0].size, np.int8), -np.ones(b[1].size, np.int8)))
    order = np.lexsort((steps, times))  # at equal times ends (-1) first: touching blocks do not overlap
    times, depth = times[order], np.cumsum(steps[order])
    inside = depth == 2  # after this boundary both sets cover the time
    starts = times[:-1][inside[:-1]]
    ends = times[1:][inside[:-1]]
    keep = ends > starts
    return starts[keep], ends[keep]
