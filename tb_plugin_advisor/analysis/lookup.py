"""`np.unique` for the small non-negative integer codes analyses group by (name, string and op ids).

np.unique sorts; a million kernels cost ~60 ms per call. Codes are dense (they index the plane's
name and string tables), so a presence table and its running count give the same answer in two
linear passes. Other keys (negative, or spread far beyond their count) still go through np.unique.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np


def _dense(keys: np.ndarray) -> bool:
    if keys.size == 0 or keys.dtype.kind not in "iu":
        return False
    return int(keys.min()) >= 0 and int(keys.max()) <= 4 * keys.size + (1 << 16)


def unique_codes(keys: np.ndarray) -> np.ndarray:
    """np.unique(keys): the distinct values, ascending."""
    if not _dense(keys):
        return np.unique(keys)
    present = np.zeros(int(keys.max()) + 1, dtype=bool)
    present[keys] = True
    return np.flatnonzero(present).astype(keys.dtype)


def unique_inverse(keys: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """np.unique(keys, return_inverse=True), inverse flat: distinct values and each key's rank."""
    if not _dense(keys):
        unique, inverse = np.unique(keys, return_inverse=True)
        return unique, inverse.reshape(-1)
    present = np.zeros(int(keys.max()) + 1, dtype=bool)
    present[keys] = True
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present).astype(keys.dtype), rank[keys]
