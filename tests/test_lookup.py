"""lookup.py's presence-table unique equals np.unique on every kind of key it can meet."""

from __future__ import annotations

import numpy as np
import pytest

from tb_plugin_advisor.lookup import unique_codes, unique_inverse

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
