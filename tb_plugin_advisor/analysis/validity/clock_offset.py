"""How far apart the hosts' clocks are, measured on the collectives they share.

Ranks leave a collective together (an all-reduce ends on every rank once the last one arrives), so
the ends of one host's collective kernels and another's, compared name by name, differ by the
offset between their clocks. Every pair of same-named ends is compared, not the i-th with the i-th:
the offset is the most common difference (the fullest bin of CLOCK_OFFSET_BIN_US), the median of
the differences in that bin. Pairs of different calls scatter over many bins, so unmatched calls and
point-to-point sends and receives, which need not end together, do not move it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th

# Only differences within this window are compared (a clock offset past a second is no profiler
# skew this can place; pairs that far apart are different calls).
WINDOW_NS = 1_000_000_000


@dataclass(frozen=True)
class HostClocks:
    """Each host's clock offset from the first host's (µs; None: no collective shared with it), the
    skew (largest minus smallest offset known) and how many collective ends they were measured on."""

    offsets_us: Dict[str, Optional[float]]
    skew_us: Optional[float]
    shared_ends: int


def host_clocks(hosts: List[str], ends: List[Dict[str, np.ndarray]]) -> HostClocks:
    """The offsets of `hosts` (their collectives' ends by kernel name, in the same order)."""
    offsets: Dict[str, Optional[float]] = {hosts[0]: 0.0} if hosts else {}
    shared = 0
    for host, own in zip(hosts[1:], ends[1:]):
        diffs = [(own[name][:, None] - first[None, :]).ravel()
                 for name, first in ends[0].items() if name in own and own[name].size and first.size]
        shared += sum(int(min(own[name].size, first.size)) for name, first in ends[0].items() if name in own)
        mode = _mode_ns(np.concatenate(diffs)) if diffs else None
        offsets[host] = mode / 1e3 if mode is not None else None
    known = [v for v in offsets.values() if v is not None]
    skew = max(known) - min(known) if len(known) > 1 else None
    return HostClocks(offsets, skew, shared)


def _mode_ns(diffs: np.ndarray) -> Optional[float]:
    diffs = diffs[np.abs(diffs) < WINDOW_NS]
    if diffs.size == 0:
        return None
    width = th.CLOCK_OFFSET_BIN_US * 1e3
    bins = np.floor(diffs / width).astype(np.int64)
    values, counts = np.unique(bins, return_counts=True)
    fullest = values[int(np.argmax(counts))]
    # the bin and its neighbours: an offset on a bin edge splits its pairs between two bins
    near = diffs[np.abs(bins - fullest) <= 1]
    return float(np.median(near))
