"""`np.unique` for the integer codes analyses group by (name, string, op and line ids).

np.unique sorts; a million kernels cost ~60 ms per call, and a report makes dozens. Codes are dense
(they index the plane's name and string tables; -1 stands for "none"), so a presence table over
their range and its running count give the same answer in two linear passes. Other keys (floats, or
spread far beyond their count) still go through np.unique.
"""

from __future__ import annotations

import heapq
from typing import Callable, Hashable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np


def _range(keys: np.ndarray) -> Optional[Tuple[int, int]]:
    """(min, max) when a presence table over [min, max] is cheap, else None."""
    if keys.size == 0 or keys.dtype.kind not in "iu":
        return None
    low, high = int(keys.min()), int(keys.max())
    return (low, high) if high - low <= 4 * keys.size + (1 << 16) else None


def _present(keys: np.ndarray, low: int, high: int) -> Tuple[np.ndarray, np.ndarray]:
    """(presence table over [low, high], keys as offsets into it)."""
    offsets = keys - keys.dtype.type(low) if low else keys  # in the keys' own type (uint64 included)
    present = np.zeros(high - low + 1, dtype=bool)
    present[offsets] = True
    return present, offsets


def unique_codes(keys: np.ndarray) -> np.ndarray:
    """np.unique(keys): the distinct values, ascending."""
    bounds = _range(keys)
    if bounds is None:
        return np.unique(keys)
    present, _ = _present(keys, *bounds)
    return np.flatnonzero(present).astype(keys.dtype) + keys.dtype.type(bounds[0])


def among(codes: np.ndarray, chosen: Iterable[int]) -> np.ndarray:
    """np.isin(codes, chosen) for one-byte integer codes (a kernel's family or precision, an index into
    a short table): one lookup per code in a table of 256 answers, where np.isin compares every code
    with each chosen value (a million kernels: 3 ms instead of 16-21 ms). Other codes go to np.isin."""
    wanted = [int(value) for value in chosen]
    if codes.dtype.kind not in "iu" or codes.dtype.itemsize != 1:
        return np.isin(codes, wanted)
    limits = np.iinfo(codes.dtype)
    table = np.zeros(256, dtype=bool)
    representable = [v for v in wanted if limits.min <= v <= limits.max]  # (others match no code)
    table[np.array(representable, dtype=codes.dtype).view(np.uint8)] = True
    return table[codes.view(np.uint8)]


def hash_codes(items: Iterable[Hashable], count: int) -> np.ndarray:
    """hash() of each of `count` items as one int64 array: a million names (or name pairs) are found
    distinct, or grouped, by numbers instead of a dict or set of the objects themselves. Equal hashes do
    not prove equal items: a caller compares the items where hashes meet."""
    return np.fromiter(map(hash, items), dtype=np.int64, count=count)


def has_repeats(keys: np.ndarray) -> bool:
    """Whether any key occurs more than once (one sort of a copy)."""
    ordered = np.sort(keys)
    return bool((ordered[1:] == ordered[:-1]).any())


def largest_first(values: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` largest of integer `values`, largest first, ties in position order: what
    `np.argsort(-values, kind="stable")[:count]` gives, without sorting them all (a million kernel
    durations): a partition finds the count-th largest, and only the values at or above it are sorted."""
    if count <= 0:
        return np.zeros(0, dtype=np.intp)
    if values.size > count:
        cut = np.partition(values, values.size - count)[values.size - count]
        above = np.flatnonzero(values > cut)
        kept = np.sort(np.concatenate((above, np.flatnonzero(values == cut)[: count - above.size])))
    else:
        kept = np.arange(values.size)
    return kept[np.argsort(-values[kept].astype(np.int64), kind="stable")]


def smallest_rows(rows: np.ndarray, count: int, key: Callable[[int], object]) -> List[int]:
    """heapq.nsmallest(count, rows.tolist(), key=key): the `count` rows with the smallest keys, ties in
    row order. The rows are turned into Python ints a block at a time: a million rows tied at a cut
    (every kernel of a profile taking the same time) were a 36 MB list."""
    best: List[int] = []
    if count <= 0:
        return best
    for start in range(0, rows.size, _SMALLEST_BLOCK):
        best = heapq.nsmallest(count, best + rows[start:start + _SMALLEST_BLOCK].tolist(), key=key)
    return best


_SMALLEST_BLOCK = 1 << 16


def unique_inverse(keys: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """np.unique(keys, return_inverse=True), inverse flat: distinct values and each key's rank."""
    bounds = _range(keys)
    if bounds is None:
        unique, inverse = np.unique(keys, return_inverse=True)
        return unique, inverse.reshape(-1)
    present, offsets = _present(keys, *bounds)
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present).astype(keys.dtype) + keys.dtype.type(bounds[0]), rank[offsets]


def unique_columns(rows: Sequence[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """np.unique(np.stack(rows), axis=1, return_inverse=True) for columns of non-negative integer codes
    (name, device, shape ids), given as a 2-D array or as 1-D arrays of one length (not stacked: a
    copy of them all in one type was the peak of the kernel statistics). The columns are packed into one
    int64 key (first most significant, so the order is the same) instead of np.unique's sort of
    structured rows. Other input goes to np.unique."""
    columns = list(rows)
    dtype = np.result_type(*columns)
    packable = (all(col.ndim == 1 and col.dtype.kind in "iu" for col in columns)
                and columns[0].size > 0 and min(int(col.min()) for col in columns) >= 0)
    spans = [int(col.max()) + 1 for col in columns] if packable else []
    if not packable or np.prod(np.array(spans, dtype=np.float64)) >= 2.0 ** 62:  # would not fit one int64
        unique, inverse = np.unique(np.stack(columns), axis=1, return_inverse=True)
        return unique.astype(dtype, copy=False), inverse.reshape(-1)
    keys = columns[0].astype(np.int64)  # (a copy: packed in place, one array however many columns)
    for col, span in zip(columns[1:], spans[1:]):
        keys *= span
        keys += col
    packed, inverse = unique_inverse(keys)
    del keys
    unique = np.empty((len(columns), packed.size), dtype=dtype)  # unpacked a column at a time, last first
    for row in range(len(columns) - 1, 0, -1):
        np.remainder(packed, spans[row], out=unique[row], casting="unsafe")
        packed //= spans[row]
    unique[0] = packed
    return unique, inverse


ROW_CHUNK = 1 << 18


def row_chunks(count: int) -> Iterator[slice]:
    """The rows [0, count) a quarter million at a time: whole-table work on a 3-million-event column
    makes 8-24 MB per temporary when done at once, 2-6 MB this way (a million at a time still put
    27 MB of a 100 MB profile's analysis peak in one step mask)."""
    for a in range(0, count, ROW_CHUNK):
        yield slice(a, min(a + ROW_CHUNK, count))


def sums_by_code(codes: Union[np.ndarray, Callable[[slice], np.ndarray]], minlength: int,
                 weights: Optional[np.ndarray] = None, rows: Optional[np.ndarray] = None) -> np.ndarray:
    """np.bincount(codes[rows], weights[rows], minlength): a count (int64) or a sum (float64) per
    code over the selected rows (a mask; None: all), a chunk of rows at a time (row_chunks).
    Selecting the rows of a 3-million-kernel table at once copies 12 bytes per kernel; sums of whole
    numbers stay exact.
    `codes` may be a function giving the codes of a slice of the rows (codes derived from columns,
    made a chunk at a time too)."""
    count = len(rows) if rows is not None else len(weights) if weights is not None else len(codes)
    total = np.zeros(minlength, dtype=np.int64 if weights is None else np.float64)
    for part in row_chunks(count):
        pick = slice(None) if rows is None else rows[part]
        chunk = codes(part) if callable(codes) else codes[part]
        chunk = chunk[pick]
        if chunk.shape[0] == 0:
            continue
        # a chunk's sums span its own codes only: kernels in time order use their names' codes in
        # about that order, and a million-code sum per chunk was 8 MB beside the total
        low = int(chunk.min())
        found = np.bincount(chunk - low if low > 0 else chunk,
                            weights=None if weights is None else weights[part][pick])
        end = low + found.shape[0]
        if end > total.shape[0]:  # a code past minlength: grow, as np.bincount would
            grown = np.zeros(end, dtype=total.dtype)
            grown[: total.shape[0]] = total
            total = grown
        total[low:end] += found
    return total



def grouped_sums(keys: Callable[[slice], np.ndarray], count: int, weights: np.ndarray,
                 rows: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct keys ascending, summed weight, row count) over the selected rows (a mask; None: all),
    a chunk of rows at a time (row_chunks): `keys(part)` gives the keys of a slice of the rows, so no
    per-row key, rank or weight array of the whole table is made (24 MB each for 3 million kernels)."""
    found: Tuple[List[np.ndarray], List[np.ndarray], List[np.ndarray]] = ([], [], [])  # per chunk
    for part in row_chunks(count):
        pick = slice(None) if rows is None else rows[part]
        distinct, inverse = unique_inverse(keys(part)[pick])
        found[0].append(distinct)
        found[1].append(np.bincount(inverse, weights=weights[part][pick], minlength=distinct.size))
        found[2].append(np.bincount(inverse, minlength=distinct.size))
    if not found[0]:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    if len(found[0]) == 1:
        return found[0][0], found[1][0], found[2][0]
    # The chunks' keys (each ascending) joined, by a stable sort of those runs, and a key that several
    # chunks hold summed over its neighbours, in chunk order as a sum over the chunks would add them.
    # One column joined, then reordered, at a time: np.unique's inverse over a million distinct keys
    # made five arrays of their size at once, the op table's peak.
    columns = []
    for parts in found:
        columns.append(np.concatenate(parts))
        parts.clear()  # (each chunk's part let go once joined)
    distinct, sums, counts = columns
    del columns
    order = np.argsort(distinct, kind="stable")
    distinct = distinct[order]
    sums = sums[order]
    counts = counts[order]
    del order
    first = np.concatenate(([True], distinct[1:] != distinct[:-1]))  # where each key's run starts
    if not first.all():
        group = np.cumsum(first) - 1
        # (bincount adds in order, one after another: np.add.reduceat's float sums differ in the last bit)
        sums = np.bincount(group, weights=sums)
        counts = np.add.reduceat(counts, np.flatnonzero(first))
        distinct = distinct[first]
    return distinct, sums, counts.astype(np.int64, copy=False)
