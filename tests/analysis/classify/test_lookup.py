"""lookup.py's presence-table unique equals np.unique on every kind of key it can meet."""

from __future__ import annotations

import numpy as np
import pytest

from tb_plugin_advisor import lookup
from tb_plugin_advisor.lookup import (
    grouped_sums,
    has_repeats,
    hash_codes,
    sums_by_code,
    unique_codes,
    unique_columns,
    unique_inverse,
)

RNG = np.random.default_rng(7)
KEYS = {
    "dense": RNG.integers(0, 50, 1000),
    "with_none": RNG.integers(-1, 20, 1000),  # -1: no details string
    "negative_range": RNG.integers(-500, -400, 300),
    "sparse": np.array([0, 1 << 40, 5, 1 << 40], dtype=np.int64),  # falls back to np.unique
    "int32": RNG.integers(0, 9, 100).astype(np.int32),
    "unsigned": RNG.integers(0, 9, 100).astype(np.uint16),
    "huge_unsigned": np.array([2**64 - 1, 2**64 - 3, 2**64 - 1], dtype=np.uint64),  # refs in a broken file
    "huge_signed": np.array([2**63 - 1, 2**63 - 9], dtype=np.int64),
    "float": np.array([2.5, 1.0, 2.5]),
    "empty": np.zeros(0, dtype=np.int64),
    "one": np.array([3]),
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_unique_codes_and_inverse_equal_numpys(name):
    keys = KEYS[name]
    expected, inverse = np.unique(keys, return_inverse=True)
    got = unique_codes(keys)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    values, ranks = unique_inverse(keys)
    assert values.dtype == expected.dtype and np.array_equal(values, expected)
    assert np.array_equal(ranks, inverse.reshape(-1))


@pytest.mark.parametrize("rows", [
    np.array([[3, 1, 3, 0, 1], [2, 2, 2, 9, 2], [0, 5, 0, 1, 5]], dtype=np.int64),  # packed into one key
    np.array([[1, 0, 1], [2**40, 7, 2**40]], dtype=np.int64),  # spans too wide to pack: np.unique
    np.array([[1, -1, 1], [0, 3, 0]], dtype=np.int64),  # a negative code: np.unique
    np.zeros((2, 0), dtype=np.int64),
    np.random.default_rng(3).integers(0, 50, size=(3, 2000)),
])
def test_unique_columns_equal_np_unique_over_axis_one(rows):
    unique, inverse = unique_columns(rows)
    expected, expected_inverse = np.unique(rows, axis=1, return_inverse=True)
    assert unique.tolist() == expected.tolist() and unique.dtype == rows.dtype
    assert inverse.tolist() == expected_inverse.reshape(-1).tolist()


def test_unique_columns_of_separate_columns_in_their_common_type():
    rng = np.random.default_rng(4)
    columns = [rng.integers(0, 30, 500).astype(np.int32), rng.integers(0, 3, 500).astype(np.int16),
               rng.integers(0, 9, 500).astype(np.int32)]
    unique, inverse = unique_columns(columns)
    expected, expected_inverse = np.unique(np.stack(columns), axis=1, return_inverse=True)
    assert unique.dtype == np.int32 and unique.tolist() == expected.tolist()
    assert inverse.tolist() == expected_inverse.reshape(-1).tolist()
    assert columns[0].dtype == np.int32 and int(columns[0].max()) < 30  # the input is not packed in place


@pytest.mark.parametrize("chunk", [1, 3, 1 << 20])
def test_sums_by_code_a_chunk_at_a_time_equal_bincount(monkeypatch, chunk):
    monkeypatch.setattr(lookup, "ROW_CHUNK", chunk)
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 9, size=101).astype(np.int32)
    weights = rng.integers(0, 1000, size=101).astype(np.int64)
    rows = rng.random(101) < 0.6
    expected = np.bincount(codes[rows], weights[rows], 9).tolist()
    assert sums_by_code(codes, 9, weights, rows).tolist() == expected
    assert sums_by_code(codes, 9).tolist() == np.bincount(codes, minlength=9).tolist()
    assert sums_by_code(codes, 4).tolist() == np.bincount(codes, minlength=4).tolist()  # grows past minlength
    assert sums_by_code(codes[:0], 3, weights[:0]).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("chunk", [1, 5, 1 << 20])
@pytest.mark.parametrize("order", ["ascending", "high codes", "descending runs"])
def test_sums_by_code_over_codes_in_order_equal_bincount(monkeypatch, chunk, order):
    """Each chunk sums over its own codes' span: kernels in time order use their names in about that
    order. The sums, their type and length are bincount's, whatever the chunks' spans."""
    monkeypatch.setattr(lookup, "ROW_CHUNK", chunk)
    rng = np.random.default_rng(11)
    codes = np.sort(rng.integers(0, 400, size=203))
    if order == "high codes":
        codes = codes + 1000  # no chunk holds a low code: every chunk's span starts high
    elif order == "descending runs":
        codes = np.concatenate([codes[100:], codes[:100]])
    codes = codes.astype(np.int32)
    weights = rng.integers(0, 1 << 40, size=codes.size).astype(np.int64)
    rows = rng.random(codes.size) < 0.3
    rows[:40] = False  # whole chunks with no row selected
    for minlength in (0, 5, int(codes.max()) + 50):
        expected = np.bincount(codes[rows], weights[rows], minlength)
        found = sums_by_code(codes, minlength, weights, rows)
        assert found.dtype == expected.dtype and found.tolist() == expected.tolist()
        derived = sums_by_code(lambda part: codes[part], minlength, weights)  # codes made a chunk at a time
        assert derived.tolist() == np.bincount(codes, weights, minlength).tolist()
        counted = sums_by_code(codes, minlength, rows=rows)
        assert counted.dtype == np.int64
        assert counted.tolist() == np.bincount(codes[rows], minlength=minlength).tolist()


@pytest.mark.parametrize("chunk", [1, 4, 1 << 20])
def test_grouped_sums_a_chunk_at_a_time_equal_one_pass(monkeypatch, chunk):
    monkeypatch.setattr(lookup, "ROW_CHUNK", chunk)
    rng = np.random.default_rng(8)
    keys = rng.integers(0, 10**9, size=6)[rng.integers(0, 6, size=57)].astype(np.int64)  # spread keys
    weights = rng.integers(0, 100, size=57).astype(np.int64)
    rows = rng.random(57) < 0.7
    distinct, sums, counts = grouped_sums(lambda part: keys[part], 57, weights, rows)
    expected, inverse = np.unique(keys[rows], return_inverse=True)
    assert distinct.tolist() == expected.tolist()
    assert sums.tolist() == np.bincount(inverse, weights=weights[rows]).tolist()
    assert counts.tolist() == np.bincount(inverse).tolist() and counts.dtype == np.int64
    assert [a.size for a in grouped_sums(lambda part: keys[part], 0, weights)] == [0, 0, 0]


def test_grouped_sums_add_a_keys_chunk_sums_in_chunk_order(monkeypatch):
    """Float weights: a key several chunks hold gets its chunks' sums added in chunk order, to the
    last bit (as the report's figures were made before the chunks' keys were joined by a sort)."""
    monkeypatch.setattr(lookup, "ROW_CHUNK", 7)
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 5, size=60).astype(np.int64) * 10**12  # few keys, in every chunk
    weights = rng.random(60) * 1e6
    distinct, sums, counts = grouped_sums(lambda part: keys[part], 60, weights)
    expected = {}
    for start in range(0, 60, 7):
        chunk = {}
        for key, weight in zip(keys[start:start + 7].tolist(), weights[start:start + 7].tolist()):
            chunk[key] = chunk.get(key, 0.0) + weight
        for key, total in chunk.items():
            expected[key] = expected[key] + total if key in expected else total
    assert distinct.tolist() == sorted(expected)
    assert sums.tolist() == [expected[k] for k in sorted(expected)]  # exactly
    assert counts.tolist() == [int((keys == k).sum()) for k in sorted(expected)]


def test_hash_codes_and_repeats():
    """hash_codes is hash() per item in order; has_repeats finds a key seen twice anywhere in the array,
    and no repeat in distinct keys or in none at all."""
    items = ["conv", ("device", "gemm"), "gemm", "conv"]
    codes = hash_codes(items, len(items))
    assert codes.dtype == np.int64 and codes.tolist() == [hash(item) for item in items]
    assert has_repeats(codes) is True  # "conv" first and last: apart in the array
    assert has_repeats(codes[:3]) is False
    assert has_repeats(np.zeros(0, dtype=np.int64)) is False


@pytest.mark.parametrize("block", [1 << 16, 3, 1])
@pytest.mark.parametrize("count", [0, 1, 4, 50])
def test_smallest_rows_equal_heapq_nsmallest_ties_in_row_order(monkeypatch, block, count):
    """A block of rows at a time, as one nsmallest over them all would pick: the smallest keys, and of
    equal keys the earlier rows."""
    import heapq

    monkeypatch.setattr(lookup, "_SMALLEST_BLOCK", block)
    rng = np.random.default_rng(3)
    keys = [f"k{v}" for v in rng.integers(0, 6, size=40)]
    rows = np.flatnonzero(rng.random(40) < 0.7)
    expected = heapq.nsmallest(count, rows.tolist(), key=keys.__getitem__)
    assert lookup.smallest_rows(rows, count, keys.__getitem__) == expected


@pytest.mark.parametrize("seed", range(12))
def test_largest_first_equals_a_stable_sort_cut(seed):
    """The count largest values, largest first, ties in position order — what a stable argsort of the
    negated values cut at count gives — for int32 and int64 values with many ties, and any count."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 500))
    values = rng.integers(0, int(rng.choice([2, 10, 10**9])), size).astype(rng.choice([np.int32, np.int64]))
    for count in (0, 1, 5, size // 2, size, size + 3):
        expected = np.argsort(-values.astype(np.int64), kind="stable")[:count]
        assert lookup.largest_first(values, count).tolist() == expected.tolist()


def test_largest_first_by_hand():
    values = np.array([3, 7, 7, 1, 7, 9], dtype=np.int32)
    assert lookup.largest_first(values, 3).tolist() == [5, 1, 2]  # 9, then the first two 7s
    assert lookup.largest_first(values, 0).tolist() == []


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64])
def test_among_equals_isin(dtype):
    """One-byte codes are looked up in a table (negative ones and chosen values no code can take
    included); other types go to np.isin: the same mask either way."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    codes = rng.integers(max(info.min, -3), min(info.max, 300), size=500).astype(dtype)
    codes[:3] = [max(info.min, -1), 0, min(info.max, 255)]
    for chosen in ([], [0], [1, 3, 5], [-1, 2], [255, 300, -200], list(range(-5, 12))):
        assert lookup.among(codes, chosen).tolist() == np.isin(codes, chosen).tolist(), chosen
    assert lookup.among(np.zeros(0, dtype=dtype), [1]).tolist() == []
