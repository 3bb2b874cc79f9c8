"""intervals.window_index: the window holding each time, whichever way it is found (times in order
are cut at the windows' bounds, others searched one by one), equals a plain loop over the windows."""

from __future__ import annotations

import numpy as np
import pytest

from tb_plugin_advisor.analysis import intervals as iv


def _by_loop(starts, ends, times):
    """For each time, the last window starting at or before it, if it holds it (else -1): what the
    function answers for windows in order and disjoint, and for any others too."""
    found = []
    for t in times.tolist():
        at = -1
        for i, start in enumerate(starts.tolist()):
            if start <= t:
                at = i
        found.append(at if at >= 0 and t < int(ends[at]) else -1)
    return found


def _windows(rng, count, disjoint):
    bounds = np.sort(rng.integers(-5, 80, size=2 * count))
    starts, ends = bounds[0::2].copy(), bounds[1::2].copy()
    if not disjoint and count:
        k = int(rng.integers(0, count))
        ends[k] += int(rng.integers(-30, 30))  # inverted, or over the next window
    return starts, ends


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("disjoint", [True, False])
def test_window_index_equals_a_loop_over_the_windows(seed, ordered, disjoint):
    rng = np.random.default_rng(seed)
    starts, ends = _windows(rng, int(rng.integers(0, 9)), disjoint)
    times = rng.integers(-10, 90, size=int(rng.integers(0, 70)))
    if ordered:
        times = np.sort(times)
    assert iv.window_index(starts, ends, times).tolist() == _by_loop(starts, ends, times)


def test_touching_and_empty_windows_in_ordered_times():
    """A time at a window's end belongs to the window that starts there; an empty window holds nothing."""
    starts, ends = np.array([0, 10, 10, 20]), np.array([10, 10, 20, 30])
    times = np.arange(-1, 32)
    assert iv._ordered_cut(starts, ends, times)  # (the path cut at the bounds)
    assert iv.window_index(starts, ends, times).tolist() == _by_loop(starts, ends, times)
    found = dict(zip(times.tolist(), iv.window_index(starts, ends, times).tolist()))
    assert [found[t] for t in (-1, 0, 9, 10, 19, 20, 29, 30)] == [-1, 0, 0, 2, 2, 3, 3, -1]


def test_only_signed_integer_times_in_order_are_cut_at_the_bounds():
    starts, ends = np.array([0, 10]), np.array([5, 15])
    assert iv._ordered_cut(starts, ends, np.array([1, 2, 12]))
    assert not iv._ordered_cut(starts, ends, np.array([2, 1, 12]))  # out of order
    assert not iv._ordered_cut(starts, ends, np.array([1, 2, 12], dtype=np.uint64))
    assert not iv._ordered_cut(starts, ends, np.array([1.0, 2.0]))
    assert not iv._ordered_cut(np.array([0, 4]), ends, np.array([1, 2]))  # overlapping windows
    assert not iv._ordered_cut(starts, np.array([5, 9]), np.array([1, 2]))  # a window ends before it starts
