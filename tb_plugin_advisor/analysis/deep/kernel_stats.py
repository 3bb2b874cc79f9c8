"""Per-kernel statistics: launches, time, launch shape, occupancy and Tensor Core use, per kernel name.

Reads only the model: each device's KernelTable (start, duration, name, `kernel_details`), the device's
properties, and patterns.kernel_view for Tensor Core use. `kernel_details` is CUPTI's text in XSpace
(`regs:N static_shared:B dynamic_shared:B grid:x,y,z block:x,y,z occ_pct:F`); the Kineto reader writes
the same text from its kernel args, so both formats land here unchanged. Occupancy is labelled by
where it comes from: the profile's own value (CUPTI's theoretical occupancy in XSpace; Kineto's
estimated achieved occupancy) or computed here from the launch shape (analysis/deep/occupancy.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view, used_kernel_names
from tb_plugin_advisor.analysis.classify.patterns import FAMILIES, MATRIX_FAMILIES, PRECISIONS
from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.analysis.deep.occupancy import Occupancy, SmLimits, sm_limits, theoretical_occupancy
from tb_plugin_advisor.analysis.intervals import in_windows
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.lookup import (
    grouped_sums,
    has_repeats,
    hash_codes,
    row_chunks,
    smallest_rows,
    sums_by_code,
    unique_codes,
    unique_columns,
    unique_inverse,
)
from tb_plugin_advisor.model import Device, KernelDetails, Profile
from tb_plugin_advisor.readers.devices import parse_kernel_details

# Stats on a device line that mark the profile's occupancy as Kineto's *estimated achieved* occupancy
# (XSpace's `occ_pct` is CUPTI's theoretical occupancy).
ACHIEVED_OCCUPANCY_STATS = ("occupancy_pct", "est. achieved occupancy %")
OCCUPANCY_SOURCES = ("profile_theoretical", "profile_achieved_estimate", "computed_theoretical")


@dataclass
class KernelStat:
    """One kernel name on one host (all devices of the host together)."""

    name: str
    family: str
    launches: int
    total_ns: int
    min_ns: int
    max_ns: int
    steady_ns: int  # inside steady steps
    steady_launches: int
    devices: int
    configs: int  # distinct launch configurations seen
    details: KernelDetails  # the configuration with the most time
    occupancy_pct: Optional[float]  # time-weighted over launches that report one, else computed
    occupancy_source: Optional[str]  # one of OCCUPANCY_SOURCES
    theoretical_pct: Optional[float]  # computed from the dominant configuration
    limiter: Optional[str]
    tensor_core_pct: float  # share of this kernel's time on Tensor Cores / matrix cores
    precision: str

    @property
    def mean_ns(self) -> float:
        return self.total_ns / self.launches if self.launches else 0.0

    @property
    def threads_per_block(self) -> Optional[int]:
        b = self.details.block
        return b[0] * b[1] * b[2] if b else None

    @property
    def shared_bytes(self) -> Optional[int]:
        d = self.details
        if d.static_shared_bytes is None and d.dynamic_shared_bytes is None:
            return None
        return (d.static_shared_bytes or 0) + (d.dynamic_shared_bytes or 0)


@dataclass
class KernelSums:
    """Figures over every kernel name (the listed rows are only the top ones): sums of launches and
    time, of the tiny kernels' (mean under thresholds.TINY_KERNEL_US) and time-weighted occupancy and
    Tensor Core use."""

    distinct: int = 0
    steady_launches: int = 0
    tiny_launches: int = 0
    tiny_steady_launches: int = 0
    tiny_ns: int = 0
    occupancy_ns: int = 0  # time of the names with an occupancy
    occupancy_weighted: float = 0.0  # Σ occupancy % × time over those names
    tensor_core_weighted: float = 0.0  # Σ Tensor Core % × time over every name


@dataclass
class KernelStats:
    """Per-kernel statistics of one host: the listed names and the sums over every name."""

    kernels: List[KernelStat]  # the top names by total time, descending (KERNEL_STATS_TOP, every hot one)
    total_ns: int
    launches: int
    steps: int  # steady steps the per-step numbers divide by (0: no steps, per-step numbers are None)
    sums: KernelSums = field(default_factory=KernelSums)

    def to_json(self, top: int = th.KERNEL_STATS_TOP) -> Dict[str, Any]:
        n = self.steps
        total = self.total_ns or 1
        sums = self.sums
        return {
            "launches": self.launches,
            "distinct": sums.distinct,
            "total_ms": _r(self.total_ns / 1e6),
            "steps": n,
            "launches_per_step": _r(sums.steady_launches / n, 2) if n else None,
            "tiny_launch_pct": _r(100.0 * sums.tiny_launches / (self.launches or 1), 2),
            "tiny_time_pct": _r(100.0 * sums.tiny_ns / total, 2),
            "occupancy_pct": (_r(sums.occupancy_weighted / sums.occupancy_ns, 2)
                              if sums.occupancy_ns else None),
            "tensor_core_time_pct": _r(sums.tensor_core_weighted / total, 2),
            "kernels": [self.row_json(k) for k in self.kernels[:top]],
        }

    def row_json(self, k: KernelStat) -> Dict[str, Any]:
        """One kernel's row as this host writes it: its share of this host's kernel time, its figures
        per this host's steady steps."""
        return _kernel_json(k, self.total_ns or 1, self.steps)


def _kernel_json(k: KernelStat, total: int, steps: int) -> Dict[str, Any]:
    d = k.details
    return {
        "name": k.name,
        "short_name": short_name(k.name),
        "family": k.family,
        "launches": k.launches,
        "total_ms": _r(k.total_ns / 1e6),
        "time_pct": _r(100.0 * k.total_ns / total, 3),
        "mean_us": _r(k.mean_ns / 1e3, 3),
        "min_us": _r(k.min_ns / 1e3, 3),
        "max_us": _r(k.max_ns / 1e3, 3),
        "per_step_ms": _r(k.steady_ns / 1e6 / steps) if steps else None,
        "launches_per_step": _r(k.steady_launches / steps, 3) if steps else None,
        "grid": list(d.grid) if d.grid else None,
        "block": list(d.block) if d.block else None,
        "threads_per_block": k.threads_per_block,
        "registers_per_thread": d.registers_per_thread,
        "shared_memory_bytes": k.shared_bytes,
        "configs": k.configs,
        "occupancy_pct": _r(k.occupancy_pct, 2) if k.occupancy_pct is not None else None,
        "occupancy_source": k.occupancy_source,
        "theoretical_occupancy_pct": _r(k.theoretical_pct, 2) if k.theoretical_pct is not None else None,
        "occupancy_limiter": k.limiter,
        "tensor_cores": k.tensor_core_pct >= 50.0,
        "tensor_core_pct": _r(k.tensor_core_pct, 2),
        "precision": k.precision,
        "devices": k.devices,
    }


def _steady_windows(steps: Optional[Steps]) -> Tuple[np.ndarray, np.ndarray, int]:
    if steps is None or steps.count == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    lo, hi = steps.start_ns[steps.steady], steps.end_ns[steps.steady]
    order = np.argsort(lo, kind="stable")
    return lo[order], hi[order], int(lo.size)


def _device_occupancy_source(device: Device) -> str:
    achieved = any(s in line.stats for line in device.plane.lines for s in ACHIEVED_OCCUPANCY_STATS)
    return "profile_achieved_estimate" if achieved else "profile_theoretical"


@dataclass
class _Columns:
    """The per-name sums the listing and the sums over every name read, and the non-zero (name, launch
    shape) sums, over every device: name ids index `names`, shape ids index `texts` (the
    `kernel_details` strings). The figures read only for the listed names (shortest and longest
    launch, steady time, devices, precision) are taken once those are known (_ListedFigures): a
    column each over a million names was 8 MB, and the (name, precision) rows 18 MB."""

    names: List[str]  # never changed in place: at first the first device's own list, not a copy (8 MB)
    name_hashes: np.ndarray  # per row, hash() of its name: rows are found by hash, checked by name
    launches: np.ndarray
    total_ns: np.ndarray
    steady_launches: np.ndarray
    tc_ns: np.ndarray
    family: np.ndarray  # per row, its family's index in FAMILIES
    texts: List[str]
    configs: List[_Rows]  # per device, rows: name id, device, shape id, ns
    config_occupancy: List[np.ndarray]  # per device, per config: the occupancy it reports (NaN: none)
    name_ids: List[np.ndarray]  # per device, the row of each name it uses (as used_kernel_names lists them)
    steady: List[np.ndarray]  # per device, per kernel: whether it ran in a steady step


class _Rows(NamedTuple):
    """(name id, device, key, ns) rows of one device, a column each in its own type: as one int64
    array they were 32 bytes a row (a million names: two such arrays of 32 MB)."""

    name: np.ndarray  # int32: a row of the columns
    device: np.ndarray  # int16: the device's position
    key: np.ndarray  # int32: a launch shape's text id, or a precision code
    ns: np.ndarray  # int64


def kernel_stats(profile: Profile, steps: Optional[Steps] = None) -> KernelStats:
    """Statistics per kernel name over every accelerator of one host's profile.

    Everything is numpy over (name, device, shape) rows; Python runs once per name only to build the
    KernelStat (100,000 distinct names).
    """
    lo, hi, n_steps = _steady_windows(steps)
    devices = [d for d in profile.devices if len(d.kernels)]
    # counts in int32 (ReadLimits.max_events bounds a profile far below 2**31 kernels), times in int64
    counts, times = np.zeros(0, np.int32), np.zeros(0, np.int64)
    columns = _Columns([], times, counts, times, counts, times, np.zeros(0, np.int8), [], [], [], [], [])
    text_ids: Dict[str, int] = {}
    for device_index, device in enumerate(devices):
        _add_device(columns, text_ids, device, device_index, lo, hi, n_steps, device is devices[-1])
    total_ns, launches = int(columns.total_ns.sum()), int(columns.launches.sum())
    stats, sums = _stats(columns, devices, th.KERNEL_STATS_TOP)  # by total time, descending, then name
    result = KernelStats(
        kernels=stats,
        total_ns=total_ns,
        launches=launches,
        steps=n_steps,
        sums=sums,
    )
    return result


def _name_rows(c: _Columns, used_names: List[str]) -> Tuple[np.ndarray, np.ndarray]:
    """Each used name's row in the columns, and which used names brought the new rows (one per new row,
    in row order); names not seen on an earlier device get the next rows, in order, and are appended
    to `c.names`. Found by the names' hashes with numpy, then checked by name where two share a hash:
    a million distinct names cost a few int64 arrays, not a dict of them."""
    n_old = len(c.names)
    every = np.concatenate([c.name_hashes, hash_codes(used_names, len(used_names))])
    if not has_repeats(every):  # every hash new (the usual case): the next rows, in order
        c.names = c.names + used_names if n_old else used_names
        c.name_hashes = every
        return (np.arange(n_old, n_old + len(used_names), dtype=np.int32),  # (rows fit int32: the counts do)
                np.arange(len(used_names), dtype=np.int32))
    _, first, inverse = np.unique(every, return_index=True, return_inverse=True)
    rep = first[inverse.reshape(-1)[n_old:]]  # per used name: where its hash was seen first
    new_reps = np.unique(rep[rep >= n_old])  # first sightings, in order
    rows = np.where(rep < n_old, rep, n_old + np.searchsorted(new_reps, rep))
    c.names = c.names + [used_names[k] for k in (new_reps - n_old).tolist()]
    c.name_hashes = every[np.concatenate([np.arange(n_old), new_reps])]
    shared = np.flatnonzero(rep != n_old + np.arange(len(used_names)))  # a hash seen before
    if any(c.names[row] != used_names[k] for k, row in zip(shared.tolist(), rows[shared].tolist())):
        raise _HashCollision
    return rows, new_reps - n_old


class _HashCollision(Exception):
    """Two different names with one hash (2**-64 odds a pair): the names are matched by a dict instead."""


def _name_rows_by_dict(c: _Columns, used_names: List[str], n_old: int) -> Tuple[np.ndarray, np.ndarray]:
    """`_name_rows` by a dict of the names, after it met a hash collision (its rows are undone first)."""
    c.names = c.names[:n_old]
    name_ids = {name: row for row, name in enumerate(c.names)}
    rows = np.fromiter((name_ids.setdefault(name, len(name_ids)) for name in used_names), dtype=np.int64,
                       count=len(used_names))
    c.names = c.names + list(name_ids)[n_old:]
    c.name_hashes = hash_codes(c.names, len(c.names))
    new = np.flatnonzero(rows >= n_old)
    return rows, new[np.unique(rows[new], return_index=True)[1]]


def _add_device(c: _Columns, text_ids: Dict[str, int], device: Device, device_index: int,
                lo: np.ndarray, hi: np.ndarray, n_steps: int, last: bool) -> None:
    """Add one device's kernels to the columns. Sums are taken over the table's own name codes (its
    int32 column, no per-kernel copy) and then read at the names it uses: a 300 MB profile has 3
    million kernels, and each per-kernel int64 temporary was 24 MB."""
    table = device.kernels
    view = kernel_view(device)
    dur = table.duration_ns
    steady = in_windows(lo, hi, table.start_ns) if n_steps else np.zeros(len(table), bool)
    code = table.name_index  # per kernel: its name's code in table.names
    n_codes = len(table.names)
    launches = sums_by_code(code, n_codes)
    # the names used, ascending (their rows in this device's sums), and the list of them the kernel
    # view made once: the table's own list when every name is used
    local, used_names = used_kernel_names(device)
    count = local.size
    first_new = len(c.names)
    try:
        ids, new = _name_rows(c, used_names)
    except _HashCollision:
        ids, new = _name_rows_by_dict(c, used_names, first_new)
    if last:  # no later device looks its names up: the hashes go before the sums below are made
        c.name_hashes = np.zeros(0, c.name_hashes.dtype)
    del used_names
    # class -1 (unclassified): other
    families = np.array([FAMILIES.index(cls.family) for cls in view.class_list] + [FAMILIES.index("other")],
                        dtype=np.int8)
    c.family = np.concatenate([c.family, families[view.class_of[local[new]]]])
    del new
    c.name_ids.append(ids)
    c.steady.append(steady)
    grow = len(c.names) - c.launches.size
    for attr in ("launches", "total_ns", "steady_launches", "tc_ns"):
        column = getattr(c, attr)
        setattr(c, attr, np.concatenate([column, np.zeros(grow, column.dtype)]))
    # two codes of one table may carry one name (XSpace metadata differing in display name only):
    # their sums then add up in one row, which a fancy-index += would not do
    each_row_once = int(np.bincount(ids, minlength=1).max()) <= 1

    def add(column: np.ndarray, values: np.ndarray) -> None:
        if each_row_once:
            column[ids] += values
        else:
            np.add.at(column, ids, values.astype(column.dtype, copy=False))

    def per_name(rows: Optional[np.ndarray] = None, weighted: bool = True) -> np.ndarray:
        """Per used name (as this device's rows), the time (or, unweighted, the count) of the kernels
        in `rows` (all if None); float sums truncated per device, as always."""
        return sums_by_code(code, n_codes, dur if weighted else None, rows)[local].astype(np.int64)

    add(c.launches, launches[local])
    del launches
    add(c.total_ns, per_name())
    add(c.steady_launches, per_name(steady, weighted=False))
    add(c.tc_ns, per_name(view.tensor_cores))
    row_of_code = np.full(n_codes, -1, dtype=np.int32)
    row_of_code[local] = np.arange(count, dtype=np.int32)
    # per (name, details string): time and, where the details report one, occupancy
    details_ids = unique_codes(table.details)  # string ids (-1: none), ascending
    texts = [table.strings[i] if i >= 0 else "" for i in details_ids.tolist()]
    text_of = np.array([text_ids.setdefault(t, len(text_ids)) for t in texts], dtype=np.int32)
    occupancy = np.array([_nan_if_none(parse_kernel_details(t).occupancy_pct) if i >= 0 else np.nan
                          for i, t in zip(details_ids.tolist(), texts)], dtype=np.float64)
    # each kernel's row in details_ids (int32): string id -1 ("no details") reads the table's last slot
    shape_of_string = np.full(len(table.strings) + 1, -1, dtype=np.int32)
    shape_of_string[details_ids] = np.arange(details_ids.size, dtype=np.int32)
    shape_codes = shape_of_string[table.details]
    k, j, ns = _pair_sums(code, shape_codes, details_ids.size, dur)
    k = row_of_code[k]
    # a name whose every launch lasted 0 ns keeps its first launch shape (with 0 ns)
    idle = np.ones(count, dtype=bool)
    idle[k] = False
    idle_k = np.flatnonzero(idle)
    first_row = np.zeros(0, dtype=np.int64)
    if idle_k.size:  # each idle name's first kernel (one pass over the kernels, not one per name)
        candidates = np.flatnonzero(np.isin(code, local[idle_k]))
        first_row = candidates[np.unique(code[candidates], return_index=True)[1]]
    if idle_k.size:  # (else the sums' own columns: copies of them were the stage's peak)
        k, j = np.concatenate([k, idle_k]), np.concatenate([j, shape_codes[first_row]])
        ns = np.concatenate([ns, np.zeros(idle_k.size, np.int64)])
    del shape_codes, shape_of_string
    # (each column made in its final type, in place: the copies and casts of a million rows were
    # the stage's peak)
    shape_occupancy = occupancy[j]
    shape_occupancy[ns == 0] = np.nan  # 0 ns: weighs nothing
    c.config_occupancy.append(shape_occupancy)
    c.configs.append(_rows(ids[k], device_index, text_of[j], ns))
    c.texts[:] = list(text_ids)


def _rows(name: np.ndarray, device_index: int, key: np.ndarray, ns: np.ndarray) -> _Rows:
    return _Rows(name.astype(np.int32, copy=False), np.full(name.size, device_index, dtype=np.int16),
                 key.astype(np.int32, copy=False), ns.astype(np.int64, copy=False))


def _nan_if_none(value: Optional[float]) -> float:
    return np.nan if value is None else value


def _pair_sums(first: np.ndarray, second: np.ndarray, width: int,
               weights: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, summed weight as int) for every pair with a non-zero sum, ordered by first then
    second: sparse, so 100,000 names × many launch shapes need no dense names × shapes array. The
    pairs are made and summed a million kernels at a time; when their range is no larger than the
    kernels (a few launch shapes or precisions per name, the usual case) the sums are one dense
    array over it."""
    count = first.shape[0]
    if count == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)

    def pairs_of(part: slice) -> np.ndarray:
        pair = first[part].astype(np.int64)
        pair *= width
        pair += second[part]
        return pair

    n_first = int(first.max()) + 1
    span = n_first * width
    codes = int(first.min()) >= 0 and int(second.min()) >= 0
    if codes and span <= max(count, 1 << 16):
        sums = sums_by_code(pairs_of, span, weights)
        pairs = np.flatnonzero(sums)
        sums = sums[pairs]
    elif codes and (only := _only_second(first, second, n_first)) is not None:
        # each first with one second (a name launched one way, at one precision: the usual case):
        # the sums are per first, two columns over the names instead of a grouping of the kernels
        sums = sums_by_code(first, n_first, weights).astype(np.int64)
        kept = (only >= 0) & (sums != 0)
        if kept.all():  # (every first: the columns themselves, no copies of them)
            return np.arange(n_first, dtype=np.int32), only, sums
        kept = np.flatnonzero(kept)
        return kept, only[kept], sums[kept]  # (the second codes in their own type)
    else:
        pairs, sums, _ = grouped_sums(pairs_of, count, weights)
        keep = sums != 0
        pairs, sums = pairs[keep], sums[keep]
    firsts = pairs // width
    np.remainder(pairs, width, out=pairs)  # (the pairs are this function's own: the seconds in place)
    return firsts, pairs, sums.astype(np.int64)


def _only_second(first: np.ndarray, second: np.ndarray, n_first: int) -> Optional[np.ndarray]:
    """Per first code, the one second code its rows hold (-1: no row), or None if some first holds
    two."""
    if second.dtype.kind != "i":
        second = second.astype(np.int64)
    kind = second.dtype  # ufunc.at casting per element is 30x slower: the codes' own type
    low = np.full(n_first, np.iinfo(kind).max, dtype=kind)
    high = np.full(n_first, -1, dtype=kind)
    np.minimum.at(low, first, second)
    np.maximum.at(high, first, second)
    if (low[high >= 0] != high[high >= 0]).any():
        return None
    return high


def _stats(c: _Columns, devices: List[Device], top: int) -> Tuple[List[KernelStat], KernelSums]:
    """The sums over every name, and a KernelStat for each of the `top` names by time and every hot one
    (the per-device accumulation rules, vectorised: 100,000 names make 100,000 numbers per column,
    not 100,000 objects). The names listed are chosen first, and each per-name figure is let go once
    its sum is taken and its listed values read: held to the end, they were the report's peak with a
    million names (nine 8 MB columns beside the profile)."""
    count = len(c.names)
    if not count:
        return [], KernelSums()
    listed = np.array(_listed(c.names, c.total_ns, top), dtype=np.int64)
    launch_sums = _launch_sums(c)
    tensor_core_weighted, tc_pct = _tensor_core_shares(c, listed)
    figures = _ListedFigures.of(c, listed, devices)  # the figures read at the listed names only
    rows, occ = _joined_rows(c.configs), _joined(c.config_occupancy)
    c.configs.clear()  # (the columns' own lists held them as long as `rows`: twice the memory)
    c.config_occupancy.clear()
    name, device, text, ns = rows
    # occupancy: time-weighted over the (device, shape) sums that report one, summed in device order
    known = ~np.isnan(occ)
    if known.all():  # (every shape reports one: the columns themselves, not copies of them)
        known = slice(None)
    occ_weighted = np.bincount(name[known], weights=occ[known] * ns[known], minlength=count)
    del occ
    occ_ns = np.bincount(name[known], weights=ns[known], minlength=count).astype(np.int64)
    occ_device = np.full(count, -1, dtype=device.dtype)  # (the devices' own type: ufunc.at casts slowly)
    np.maximum.at(occ_device, name[known], device[known])  # the last device that reported one
    del known
    occ_device = occ_device[listed]
    # the configuration with the most time (ties: the greater details text, then the first device)
    width = max(len(c.texts), 1)
    if _one_per_name(name, count):  # every name launched one way on one device: nothing to choose
        dominant = device.astype(np.int64) * width + text  # device and shape as one int key
        configs = np.ones(listed.size, dtype=np.int8)
        del rows, name, device, text, ns
    else:
        rank = np.argsort(np.argsort(np.array(c.texts, dtype=object), kind="stable"))
        summed, inverse = unique_columns([name, device, text])
        summed_ns = np.bincount(inverse.reshape(-1), weights=ns, minlength=summed.shape[1]).astype(np.int64)
        del rows, name, device, text, ns, inverse  # (each temporary goes once read: the peak of the view)
        s_name, s_device, s_text = summed
        order = np.lexsort((s_device, -rank[s_text], -summed_ns, s_name))
        first = order[np.flatnonzero(np.diff(s_name[order], prepend=-1))]
        dominant = s_device[first].astype(np.int64) * width + s_text[first]
        del order, first, summed_ns
        # the distinct (name, shape) pairs are those of the (name, device, shape) sums, fewer rows
        configs = np.bincount(unique_columns(summed[[0, 2]])[0][0], minlength=count)[listed]
        del summed, s_name, s_device, s_text
    precision = figures.dominant_precision()
    # launch shapes and occupancy repeat across names: parse and compute each distinct one once
    limits = [sm_limits(d.vendor, d.compute_capability, d.plane.stats) for d in devices]
    occupancy_of = lru_cache(maxsize=None)(theoretical_occupancy)
    keys, key_of = unique_inverse(dominant.astype(np.int64))
    del dominant
    shapes: List[Tuple[KernelDetails, Optional[float], Optional[str]]] = []
    for key in keys.tolist():  # few distinct (device, launch shape) pairs
        d_index, d_text = divmod(key, width)
        details = parse_kernel_details(c.texts[d_text])
        shapes.append((details, *_theoretical(details, limits[d_index], occupancy_of)))
    # the profile's own occupancy where it reports one, else the one computed from the launch shape
    occupancy = np.array([np.nan if t is None else t for _, t, _ in shapes], dtype=np.float64)[key_of]
    key_of = key_of[listed]
    reported = occ_ns != 0
    occupancy[reported] = occ_weighted[reported] / occ_ns[reported]
    del occ_weighted, occ_ns
    known = ~np.isnan(occupancy)
    occupancy_ns = int(c.total_ns[known].sum())
    occupancy_weighted = float((occupancy[known] * c.total_ns[known]).sum())
    reported, known, occupancy = reported[listed], known[listed], occupancy[listed]
    sums = KernelSums(
        distinct=count,
        **launch_sums,
        occupancy_ns=occupancy_ns,
        occupancy_weighted=occupancy_weighted,
        tensor_core_weighted=tensor_core_weighted,
    )
    sources = [_device_occupancy_source(d) for d in devices]
    precision_names = PRECISIONS + ("unknown",)  # code -1: unknown
    out = []
    for at, i in enumerate(listed.tolist()):
        details, theoretical_pct, limiter = shapes[key_of[at]]
        if reported[at]:
            source: Optional[str] = sources[int(occ_device[at])]
        elif theoretical_pct is not None:
            source = "computed_theoretical"
        else:
            source = None
        out.append(KernelStat(
            c.names[i], FAMILIES[figures.family[at]], int(figures.launches[at]), int(c.total_ns[i]),
            int(figures.min_ns[at]), int(figures.max_ns[at]), int(figures.steady_ns[at]),
            int(figures.steady_launches[at]), int(figures.devices[at]),
            int(configs[at]), details,
            float(occupancy[at]) if known[at] else None, source, theoretical_pct, limiter, float(tc_pct[at]),
            precision_names[precision[at]],
        ))
    return out, sums


def _launch_sums(c: _Columns) -> Dict[str, int]:
    """The steady launches over every name, and the launches, steady launches and time of the tiny
    names (mean under thresholds.TINY_KERNEL_US): KernelSums' figures that read launch counts."""
    mean_ns = np.divide(c.total_ns, c.launches, out=np.zeros(c.total_ns.size), where=c.launches != 0)
    tiny = mean_ns < th.TINY_KERNEL_US * 1e3
    del mean_ns
    return {
        "steady_launches": int(c.steady_launches.sum()),
        "tiny_launches": int(c.launches[tiny].sum()),
        "tiny_steady_launches": int(c.steady_launches[tiny].sum()),
        "tiny_ns": int(c.total_ns[tiny].sum()),
    }


def _tensor_core_shares(c: _Columns, listed: np.ndarray) -> Tuple[float, np.ndarray]:
    """Σ Tensor Core % × time over every name, and the listed names' Tensor Core %. The shares are
    divided and weighed in place (a name's Tensor Core time is part of its time: 0 where it took
    none)."""
    tc_pct = 100.0 * c.tc_ns
    np.divide(tc_pct, c.total_ns, out=tc_pct, where=c.total_ns != 0)
    listed_pct = tc_pct[listed]
    np.multiply(tc_pct, c.total_ns, out=tc_pct)  # (each share weighed by its time, in place)
    return float(tc_pct.sum()), listed_pct


@dataclass
class _ListedFigures:
    """The per-name figures read only at the listed names. The columns over every name are cut to them
    before the launch shapes are summed, and the shortest and longest launch, steady time and devices
    are taken from those names' kernels alone, a device at a time."""

    family: np.ndarray
    launches: np.ndarray
    steady_launches: np.ndarray
    min_ns: np.ndarray
    max_ns: np.ndarray
    steady_ns: np.ndarray
    devices: np.ndarray
    precision_ns: np.ndarray  # per listed name and precision code, the time summed over the devices
    precision_seen: np.ndarray  # … and the first device that ran it there, as device × codes + code

    @classmethod
    def of(cls, c: _Columns, listed: np.ndarray, devices: List[Device]) -> _ListedFigures:
        count = listed.size
        figures = cls(c.family[listed], c.launches[listed], c.steady_launches[listed],
                      np.full(count, 2**62, np.int64), np.zeros(count, np.int64), np.zeros(count, np.int64),
                      np.zeros(count, np.int32), np.zeros((count, len(PRECISIONS)), np.int64),
                      np.full((count, len(PRECISIONS)), np.iinfo(np.int64).max, np.int64))
        for name in ("family", "launches", "steady_launches", "tc_ns"):  # (tc_ns: its shares are taken)
            setattr(c, name, np.zeros(0, getattr(c, name).dtype))  # (not a view: that would keep it)
        slot = np.full(len(c.names), -1, dtype=np.int32)  # per row: its place among the listed (-1: none)
        slot[listed] = np.arange(count, dtype=np.int32)
        for device_index, (device, ids, steady) in enumerate(zip(devices, c.name_ids, c.steady)):
            figures._add_device(device, device_index, slot[ids], steady)
        c.name_ids.clear()
        c.steady.clear()
        return figures

    def _add_device(self, device: Device, device_index: int, slots: np.ndarray, steady: np.ndarray) -> None:
        """The listed names' kernels on one device, a chunk of kernels at a time (lookup.row_chunks:
        the listed names may hold most of 3 million kernels); `slots`: per name the device uses, its
        place among the listed (-1: none); `steady`: per kernel, whether it ran in a steady step."""
        table = device.kernels
        precision = kernel_view(device).precision
        width = len(PRECISIONS)
        precision_ns = np.zeros(self.precision_ns.size)  # this device's, float sums (truncated at its end)
        local = used_kernel_names(device)[0]
        listed = slots >= 0
        slot_of_code = np.full(len(table.names), -1, dtype=np.int32)
        slot_of_code[local[listed]] = slots[listed]
        self.devices[np.unique(slots[listed])] += 1
        for part in row_chunks(len(table)):
            slot = slot_of_code[table.name_index[part]]
            chosen = slot >= 0
            slot = slot[chosen]
            dur = table.duration_ns[part][chosen].astype(np.int64)  # (ufunc.at casting per element is slow)
            np.minimum.at(self.min_ns, slot, dur)
            np.maximum.at(self.max_ns, slot, dur)
            inside = steady[part][chosen]
            # float sums truncated, as the sums over every name are (whole numbers: exact)
            self.steady_ns += np.bincount(slot[inside], weights=dur[inside],
                                          minlength=self.steady_ns.size).astype(np.int64)
            pair = slot.astype(np.int64) * width + precision[part][chosen]
            precision_ns += np.bincount(pair, weights=dur, minlength=precision_ns.size)
        ran = (precision_ns.astype(np.int64) != 0).reshape(-1, width)  # (a time of 0 ns weighs nothing)
        self.precision_ns[ran] += precision_ns.astype(np.int64).reshape(-1, width)[ran]
        first = device_index * width + np.broadcast_to(np.arange(width, dtype=np.int64), ran.shape)
        np.minimum(self.precision_seen, np.where(ran, first, self.precision_seen), out=self.precision_seen)

    def dominant_precision(self) -> np.ndarray:
        """Per listed name, the precision code with the most time (ties: the one seen first, in device
        then precision order; -1: none)."""
        most = self.precision_ns.max(axis=1, initial=0)
        tied = (self.precision_ns == most[:, None]) & (self.precision_ns > 0)
        chosen = np.where(tied, self.precision_seen, np.iinfo(np.int64).max).argmin(axis=1)
        return np.where(most > 0, chosen, -1)


def _joined(parts: List[np.ndarray]) -> np.ndarray:
    """The parts (one per device) as one array: the part itself for one device, not a copy of it."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _joined_rows(parts: List[_Rows]) -> _Rows:
    """The devices' rows as one set of columns (the one device's own, not a copy)."""
    return parts[0] if len(parts) == 1 else _Rows(*(np.concatenate(column) for column in zip(*parts)))


def _one_per_name(name: np.ndarray, count: int) -> bool:
    """Whether rows ordered by name hold each of `count` names exactly once (a million distinct names
    launched one way each), so that no grouping is needed to pick each name's row."""
    return name.size == count and bool((name[1:] > name[:-1]).all()) and (count == 0 or int(name[0]) == 0)


def _listed(names: List[str], total_ns: np.ndarray, top: int) -> List[int]:
    """The names listed, by total time descending then name: the `top` first, and every hot one
    (thresholds.HOT_KERNEL_PCT of all kernel time) after them. Only the names that can be among them are
    sorted (100,000 names: a partition, then a sort of the few at or above its threshold)."""
    whole = int(total_ns.sum()) or 1
    hot = int(np.count_nonzero(total_ns >= _least_share(whole, th.HOT_KERNEL_PCT, int(total_ns.max()))))
    keep = min(max(top, hot), total_ns.size)
    if keep <= 0:
        return []
    threshold = np.partition(total_ns, total_ns.size - keep)[total_ns.size - keep]  # the keep-th largest
    above = np.flatnonzero(total_ns > threshold)  # fewer than `keep`: all listed
    totals = dict(zip(above.tolist(), total_ns[above].tolist()))
    listed = sorted(totals, key=lambda i: (-totals[i], names[i]))
    # the rest tie at the threshold (all 100,000 when every name took the same time): by name
    tied = np.flatnonzero(total_ns == threshold)
    return listed + smallest_rows(tied, keep - len(listed), names.__getitem__)


def _least_share(whole: int, pct: float, most: int) -> int:
    """The smallest time t (0 … most + 1) with `100.0 * t / whole >= pct`, as numpy would compute it
    for each name: names at or over it are found by one comparison of the times, not by two float
    arrays of them (the share grows with t, so a binary search finds the bound exactly)."""
    low, high = 0, most + 1
    while low < high:
        mid = (low + high) // 2
        if 100.0 * float(mid) / float(whole) >= pct:
            high = mid
        else:
            low = mid + 1
    return low


def _theoretical(details: KernelDetails, limits: Optional[SmLimits],
                 occupancy_of: Callable[..., Optional[Occupancy]]) -> Tuple[Optional[float], Optional[str]]:
    threads = details.block[0] * details.block[1] * details.block[2] if details.block else 0
    if limits is None or threads <= 0:
        return None, None
    shared = (details.static_shared_bytes or 0) + (details.dynamic_shared_bytes or 0)
    occ = occupancy_of(limits, threads, details.registers_per_thread, shared)
    return (occ.pct, occ.limiter) if occ is not None else (None, None)


def is_matrix_family(family: str) -> bool:
    return family in MATRIX_FAMILIES
