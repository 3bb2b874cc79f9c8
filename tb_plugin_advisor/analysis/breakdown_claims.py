"""Claiming step time, one slice of the timeline at a time (breakdown.py's core loop): inside each
slice the categories claim time in priority order, so a multi-million-event profile is unioned a
slice at a time and memory stays bounded whatever the file size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis import intervals as iv

if TYPE_CHECKING:
    from tb_plugin_advisor.analysis.breakdown import EventSource


# A slice of the timeline holds about this many events: the unions of a multi-million-event profile
# are built a slice at a time, so memory stays bounded whatever the file size.
SLICE_EVENTS = 1 << 17


def time_slices(lo: np.ndarray, hi: np.ndarray, sources: List[EventSource]) -> List[Tuple[int, int]]:
    if lo.size == 0:
        return []
    first, last = int(lo.min()), int(hi.max())
    total = sum(int(s.starts.size) for s in sources)
    count = max(1, min(total // SLICE_EVENTS + 1, 4096))
    edges = np.linspace(first, last, count + 1).astype(np.int64)
    edges[-1] = last
    span = int(edges[1] - edges[0]) if count > 0 else last - first
    for source in sources:
        source.split_long(max(span, 1))
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def claim_slice(
    sources: List[EventSource],
    a: int,
    b: int,
    lo: np.ndarray,
    hi: np.ndarray,
    steady: np.ndarray,
    per_window: np.ndarray,
    busy_ns: Dict[str, int],
    columns: Sequence[int],
) -> None:
    """Add the slice [a, b)'s share of each window's categories and device busy time. Event category
    codes are priority levels (highest first); `columns[k]` is the per_window column level k adds to."""
    windows = np.flatnonzero((lo < b) & (hi > a))
    if windows.size == 0:
        return
    w_lo, w_hi = np.maximum(lo[windows], a), np.minimum(hi[windows], b)
    parts: Dict[int, List[iv.Intervals]] = {k: [] for k in range(len(columns))}
    per_device: Dict[str, List[iv.Intervals]] = {}
    for source in sources:
        starts, ends, codes = source.in_slice(a, b)
        if starts.size == 0:
            continue
        present = np.flatnonzero(np.bincount(codes, minlength=len(columns)))
        for k in present.tolist():
            mask = codes == k
            parts[k].append(iv.union(starts[mask], ends[mask]))
        if source.device is not None:
            per_device.setdefault(source.device, []).append(iv.union(starts, ends))
    claimed = iv.EMPTY
    before = np.zeros(windows.size, dtype=np.int64)
    for k, column in enumerate(columns):
        if parts[k]:
            claimed = iv.merge(claimed, iv.union_all(parts[k]))
            now = iv.covered(claimed, w_lo, w_hi)
            per_window[windows, column] += now - before
            before = now
    steady_windows = steady[windows]
    for device, pieces in per_device.items():
        merged = iv.union_all(pieces)
        busy_ns[device] += int(iv.covered(merged, w_lo[steady_windows], w_hi[steady_windows]).sum())


