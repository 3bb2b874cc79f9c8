"""analysis/_intervals.c against intervals.py's numpy versions: the same blocks for any input.

Runs where the package was built with a compiler (the CI does); without one there is nothing to compare.
"""

from __future__ import annotations

import numpy as np
import pytest
from wire_build import compiler_present

from tb_plugin_advisor import lookup
from tb_plugin_advisor.analysis import intervals as iv


@pytest.fixture(autouse=True)
def compiled():
    if iv._intervals is None:
        if compiler_present():
            pytest.fail("analysis/_intervals.c was not built although a C compiler is present: reinstall "
                        "with `pip install -e .` and read the build warning")
        pytest.skip("no C compiler here: intervals.py runs on numpy alone")


def random_intervals(rng, n: int, span: int):
    starts = np.sort(rng.integers(-span, span, n)).astype(np.int64)
    ends = starts + rng.integers(0, span // 4 + 1, n)
    return starts, ends


def same(x, y):
    return all(np.array_equal(a, b) and a.dtype == b.dtype == np.int64 for a, b in zip(x, y))


@pytest.mark.parametrize("seed", range(20))
def test_blocks_and_merges_equal_numpys(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(0, 300)), int(rng.integers(0, 300))
    span = int(rng.choice([5, 50, 10**6, 2**40]))  # small spans: many touching and equal starts
    a = random_intervals(rng, n, span)
    b = random_intervals(rng, m, span)
    if n:
        assert same(iv._as_intervals(iv._intervals.blocks(*a)), iv._blocks_numpy(*a))
    merged_a, merged_b = iv._blocks_numpy(*a) if n else a, iv._blocks_numpy(*b) if m else b
    if n and m:
        got = iv._as_intervals(iv._intervals.merge(*merged_a, *merged_b))
        assert same(got, iv._merge_numpy(merged_a, merged_b))


@pytest.mark.parametrize("seed", range(30))
def test_level_blocks_equal_numpys(seed, monkeypatch):
    """One slice's blocks per code (and of all codes) from the C pass equal the numpy path's: clipped
    to the slice, empty events and negative codes left out, int32 or int64 durations, long events
    before the first row."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    span = int(rng.choice([5, 50, 10**6]))
    starts = np.sort(rng.integers(-span, span, n)).astype(np.int64)
    durations = rng.integers(0, span // 3 + 2, n).astype(rng.choice([np.int32, np.int64]))
    levels = int(rng.integers(1, 9))
    codes = rng.integers(-1, levels, n).astype(np.int8)
    first = int(rng.integers(0, n + 1))
    last = int(rng.integers(first, n + 1))
    before = np.flatnonzero(rng.random(first) < 0.2).astype(np.int64)
    a = int(rng.integers(-span, span))
    b = a + int(rng.integers(0, span))
    every = bool(rng.integers(0, 2))
    args = (starts, durations, codes, before, first, last, a, b, levels, every)
    compiled_levels, compiled_all = iv.level_blocks(*args)
    monkeypatch.setattr(iv, "COMPILED", False)
    numpy_levels, numpy_all = iv.level_blocks(*args)
    assert len(compiled_levels) == len(numpy_levels) == levels
    for got, expected in zip(compiled_levels, numpy_levels):
        assert same(got, expected)
    assert (compiled_all is None) == (numpy_all is None) == (not every)
    if every:
        assert same(compiled_all, numpy_all)


@pytest.mark.parametrize("seed", range(30))
def test_covered_equals_numpys(seed):
    """Each window's covered length from the C pass equals the numpy path's: windows in order or not,
    overlapping, empty, inverted (a negative length, as numpy's difference gives), outside the blocks,
    on block edges; blocks of int32 times; spans near 2**62, where the sums wrap as numpy's do."""
    rng = np.random.default_rng(seed)
    span = int(rng.choice([5, 50, 10**6, 2**40, 2**62]))
    merged = iv._blocks_numpy(*random_intervals(rng, int(rng.integers(1, 300)), span))
    if span < 2**31 and rng.integers(0, 2):
        merged = tuple(x.astype(np.int32) for x in merged)
    w = int(rng.integers(0, 60))
    edges = np.concatenate((merged[0], merged[1])).astype(np.int64)
    lo = np.where(rng.random(w) < 0.3, rng.choice(edges, w), rng.integers(-span, span, w)).astype(np.int64)
    hi = lo + rng.integers(-span // 8 - 1, span // 2 + 1, w)
    if rng.integers(0, 2):
        order = np.argsort(lo, kind="stable")
        lo, hi = lo[order], hi[order]
    got = iv.covered(merged, lo, hi)
    expected = iv._covered_numpy(merged[0].astype(np.int64), merged[1].astype(np.int64), lo, hi)
    assert got.dtype == np.int64 and np.array_equal(got, expected)


def test_covered_by_hand():
    """Blocks [0, 5) and [10, 20): a window across both, one inside each, one in the gap, one past the
    end, one before the start, an inverted one."""
    merged = (np.array([0, 10], dtype=np.int64), np.array([5, 20], dtype=np.int64))
    lo = np.array([-5, 3, 12, 6, 25, -9, 30], dtype=np.int64)
    hi = np.array([100, 11, 15, 9, 40, -1, 2], dtype=np.int64)
    assert iv.covered(merged, lo, hi).tolist() == [15, 3, 3, 0, 0, 0, -13]
    with pytest.raises(ValueError):
        iv._intervals.covered(*merged, lo, hi[:-1])


def test_level_blocks_by_hand():
    """Code 0: [0, 4) and [3, 6) join; code 1: the event clipped at the slice's start and [9, 10)
    clipped at its end; an empty event and a code -1 event count nowhere."""
    starts = np.array([-5, 0, 3, 7, 8, 9], dtype=np.int64)
    durations = np.array([7, 4, 3, 0, 1, 5], dtype=np.int32)
    codes = np.array([1, 0, 0, 1, -1, 1], dtype=np.int8)
    per_level, every = iv.level_blocks(starts, durations, codes, np.array([0], dtype=np.int64), 1, 6,
                                       -1, 10, 2, True)
    assert [x.tolist() for x in per_level[0]] == [[0], [6]]
    assert [x.tolist() for x in per_level[1]] == [[-1, 9], [2, 10]]
    assert [x.tolist() for x in every] == [[-1, 9], [6, 10]]


def test_level_blocks_refuses_what_it_cannot_read():
    starts = np.zeros(3, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    codes = np.zeros(3, np.int8)
    with pytest.raises(TypeError):  # codes not int8
        iv._intervals.level_blocks(starts, starts, np.zeros(3, np.int32), none, 0, 3, 0, 1, 2, True)
    with pytest.raises(TypeError):  # durations neither int32 nor int64
        iv._intervals.level_blocks(starts, np.zeros(3, np.int16), codes, none, 0, 3, 0, 1, 2, True)
    with pytest.raises(ValueError):  # rows out of range
        iv._intervals.level_blocks(starts, starts, np.zeros(3, np.int8), none, 0, 4, 0, 1, 2, True)
    with pytest.raises(ValueError):  # a row before the first that is not before it
        iv._intervals.level_blocks(starts, starts, np.zeros(3, np.int8), np.array([2]), 1, 3, 0, 1, 2, True)
    with pytest.raises(ValueError):  # no levels
        iv._intervals.level_blocks(starts, starts, np.zeros(3, np.int8), none, 0, 3, 0, 1, 0, True)


def test_touching_intervals_join_and_gaps_split():
    starts = np.array([0, 5, 5, 11, 20], dtype=np.int64)
    ends = np.array([5, 7, 6, 20, 21], dtype=np.int64)
    got = iv._as_intervals(iv._intervals.blocks(starts, ends))
    assert [x.tolist() for x in got] == [[0, 11], [7, 21]]
    a = (np.array([0, 10], dtype=np.int64), np.array([2, 12], dtype=np.int64))
    b = (np.array([2, 20], dtype=np.int64), np.array([3, 25], dtype=np.int64))
    assert [x.tolist() for x in iv._as_intervals(iv._intervals.merge(*a, *b))] == [[0, 10, 20], [3, 12, 25]]


def test_wrong_buffers_are_refused():
    with pytest.raises(TypeError):
        iv._intervals.blocks(np.zeros(3, dtype=np.int32), np.zeros(3, dtype=np.int32))
    with pytest.raises(ValueError):
        iv._intervals.blocks(np.zeros(3, dtype=np.int64), np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError):
        iv._intervals.merge(*(np.zeros(k, dtype=np.int64) for k in (1, 1, 2, 3)))


def test_in_windows_a_chunk_at_a_time_equals_window_index(monkeypatch):
    """intervals.in_windows works through the times a chunk at a time (bounded temporaries); its mask
    is `window_index(...) >= 0` whatever the chunk size."""
    rng = np.random.default_rng(11)
    starts = np.sort(rng.choice(np.arange(0, 1000, 10), size=20, replace=False)).astype(np.int64)
    ends = starts + rng.integers(1, 10, size=starts.size)
    t = rng.integers(-20, 1100, size=997).astype(np.int64)
    expected = (iv.window_index(starts, ends, t) >= 0).tolist()
    for chunk in (1, 7, 1000, 1 << 20):
        monkeypatch.setattr(lookup, "ROW_CHUNK", chunk)
        assert iv.in_windows(starts, ends, t).tolist() == expected
    assert iv.in_windows(starts, ends, np.zeros(0, np.int64)).tolist() == []
    assert not iv.in_windows(np.zeros(0, np.int64), np.zeros(0, np.int64), t).any()


def test_int32_times_are_read_as_numbers_not_as_int64_bytes():
    """A compact (int32) column handed to the C code unions as its int64 copy would (the C code reads
    any buffer as int64, so the wrapper converts)."""
    rng = np.random.default_rng(5)
    starts, ends = random_intervals(rng, 200, 10**6)
    a = (starts[:100], ends[:100])
    b = (starts[100:], ends[100:])
    narrow = tuple(x.astype(np.int32) for x in (*a, *b))
    assert same(iv.union(narrow[0], narrow[1]), iv.union(*a))
    assert same(iv.merge(iv.union(narrow[0], narrow[1]), iv.union(narrow[2], narrow[3])),
                iv.merge(iv.union(*a), iv.union(*b)))
    assert same(iv._blocks(narrow[0], narrow[1]), iv._blocks(*a))
