"""Per-op and per-kernel time tables, per steady step: what the diff matches across runs and people
scan.

On accelerators an op is what the kernel's annotation names (the TF op `scope/name:Type`, else the
XLA `hlo_op`, else the PyTorch op that launched it, else the kernel itself) and its time is the
device time of its kernels, summed over devices. On CPU-only profiles the ops are TF and PyTorch op
events on the host's compute threads; ops of the tf.data producer threads are listed too, as
category `input_pipeline` (they run beside the step). Host ops nest (`aten::conv2d` >
`aten::convolution` > `aten::_convolution` > `aten::mkldnn_convolution`, TF ops inside `tf_function`
frames), so a row's time is its *self* time (its own time less that of the ops inside it): every
microsecond counts once, rows add up to at most the step, and a diff of two runs lists a change
once. `total_ms` keeps the inclusive time and `within` the outermost op a nested row runs inside.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify.kernel_view import used_kernel_names
from tb_plugin_advisor.analysis.classify.launching_ops import launching_ops
from tb_plugin_advisor.analysis.classify.onednn_ops import familiar_tf_op
from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.analysis.intervals import in_windows
from tb_plugin_advisor.analysis.step_time.breakdown import (
    PRIORITY,
    Breakdown,
    is_producer_line,
    kernel_name_categories,
)
from tb_plugin_advisor.lookup import (
    grouped_sums,
    has_repeats,
    hash_codes,
    smallest_rows,
    sums_by_code,
    unique_inverse,
)
from tb_plugin_advisor.model import Profile


@dataclass
class OpRow:
    """One op (or kernel) of a top table, its figures per steady step."""

    name: str
    category: str  # device_compute | communication | memcpy | host_compute | input_pipeline
    time_ms: float  # per steady step
    count: float  # per steady step
    onednn_op: Optional[str] = None  # the oneDNN op type TF ran this op as (name shows the familiar one)
    total_ms: Optional[float] = None  # inclusive time per step, where ops nest (host ops)
    within: Optional[str] = None  # the outermost op this one mostly runs inside, when nested

    def to_json(self) -> Dict[str, Any]:
        row: Dict[str, Any] = {
            "name": self.name,
            "short_name": short_name(self.name),
            "category": self.category,
            "time_ms": round(self.time_ms, 6),
            "count": round(self.count, 3),
        }
        if self.onednn_op:
            row["onednn_op"] = self.onednn_op
        if self.total_ms is not None:
            row["total_ms"] = round(self.total_ms, 6)
        if self.within:
            row["within"] = self.within
        return row


def _windows(breakdown: Breakdown):
    lo = breakdown.window_start_ns[breakdown.steady]
    hi = breakdown.window_end_ns[breakdown.steady]
    order = np.argsort(lo, kind="stable")
    return lo[order], hi[order], max(int(lo.size), 1)


def op_table(profile: Profile, breakdown: Breakdown, limit: int = th.TOP_OPS) -> List[OpRow]:
    """Top ops by time per steady step (see module docstring)."""
    lo, hi, n = _windows(breakdown)
    totals = _Totals()
    if any(len(d.kernels) for d in profile.devices):
        for device in profile.devices:
            k = device.kernels
            if not len(k):
                continue
            inside = in_windows(lo, hi, k.start_ns) if lo.size else np.ones(len(k), bool)
            if not inside.any():
                continue
            span = len(k.strings) + 1
            launched = launching_ops(device)
            keys = partial(_op_keys, k, span, launched)
            unique, time, count = grouped_sums(keys, len(k), k.duration_ns, inside)
            label_value, name_value = np.divmod(unique, len(k.names))
            del unique
            category = kernel_name_categories(device)[name_value]
            del name_value
            label_value, category, time, count = _by_label(label_value, category, time, count)
            totals.add(_labels(device, label_value, span, launched), _category_names(category), time, count)
    else:
        _host_ops(profile, lo, hi, totals)
    return _top_rows(totals, n, limit)


def _by_label(label_value: np.ndarray, category: np.ndarray, time: np.ndarray, count: np.ndarray
              ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The (label, kernel) sums as (label, category) sums, in the order each pair is first seen: what
    the totals would make of them row by row, made in numpy (a million kernel names under 200 ops:
    200 rows, not a million rows merged one by one). Times are whole nanoseconds: sums are exact."""
    pair = label_value.astype(np.int64) * len(PRIORITY) + category
    if not has_repeats(pair):  # every pair once (a label per kernel name): the sums are the rows
        return label_value, category, time, count
    distinct, inverse = unique_inverse(pair)
    first = np.full(distinct.size, inverse.size, dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(inverse.size, dtype=np.int64))
    order = np.argsort(first, kind="stable")  # first-seen order
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    at = rank[inverse]
    time = np.bincount(at, weights=time, minlength=order.size)
    count = np.bincount(at, weights=count, minlength=order.size)
    return distinct[order] // len(PRIORITY), distinct[order] % len(PRIORITY), time, count


def _op_keys(k, span: int, launched: Optional[Tuple[np.ndarray, List[str]]], part: slice) -> np.ndarray:
    """One integer per (op label, kernel) for a slice of a kernel table: the label is the tf_op, else
    the hlo_op (past `span`), else the PyTorch op that launched the kernel (classify/launching_ops.py;
    past 2 × `span` + the names), else the kernel's own name (past 2 × `span`)."""
    tf_op, hlo_op, name_index = k.tf_op[part], k.hlo_op[part], k.name_index[part]
    fallback = 2 * span + name_index.astype(np.int64)
    if launched is not None:
        launch = launched[0][part]
        fallback = np.where(launch >= 0, 2 * span + len(k.names) + launch, fallback)
    label = np.where(tf_op >= 0, tf_op, np.where(hlo_op >= 0, span + hlo_op, fallback))
    return label.astype(np.int64) * len(k.names) + name_index


def _labels(device, label_value: np.ndarray, span: int, launched: Optional[Tuple[np.ndarray, List[str]]]
            ) -> List[str]:
    """The op label of each key: the tf_op, else the short hlo_op, else the launching op, else the
    short kernel name (each distinct label made once; the kernel names, a million where no op is
    recorded, read from the kernel view's batch as the kernel table reads them). The labels are
    picked from an object array: a Python int per key was 36 MB for a million keys; the keys are
    grouped by lookup.unique_inverse (np.unique's sort of a million keys took 49 MB)."""
    k = device.kernels
    distinct, inverse = unique_inverse(label_value)
    texts = np.empty(distinct.size, dtype=object)
    ops_from = 2 * span + len(k.names)
    by_name = np.flatnonzero((distinct >= 2 * span) & (distinct < ops_from))
    if by_name.size:
        texts[by_name] = _shown_names(device, distinct[by_name] - 2 * span)
    for at in np.flatnonzero((distinct < 2 * span) | (distinct >= ops_from)).tolist():
        value = int(distinct[at])
        if value < span:
            texts[at] = k.strings[value]
        elif value < 2 * span:
            texts[at] = names.short_op_name(k.strings[value - span])
        else:
            texts[at] = launched[1][value - ops_from]
    return texts[inverse].tolist()


def _category_names(codes: np.ndarray) -> List[str]:
    """The breakdown category named by each code (breakdown.kernel_name_categories), picked from an
    object array (no Python int per code)."""
    return _PRIORITY_NAMES[codes].tolist()


_PRIORITY_NAMES = np.array(PRIORITY, dtype=object)


class _Totals:
    """Time and count per (label, category), in first-seen order. Parallel lists and str-keyed dicts:
    no tuple or list per op, so 100,000 ops leave the garbage collector nothing to walk."""

    def __init__(self) -> None:
        self.labels: List[str] = []
        self.categories: List[str] = []
        # time and count per row: float arrays while the rows are one all-distinct batch (a million
        # ops: 8 MB each, not 32 MB of Python floats), lists once batches are merged into them
        self.time: Union[List[float], np.ndarray] = []
        self.count: Union[List[float], np.ndarray] = []
        self.total: Optional[List[float]] = None  # inclusive time, for host ops (which nest)
        self.within: Dict[int, Dict[str, float]] = {}  # row → outermost enclosing op → self time
        self._at: Optional[Dict[str, Dict[str, int]]] = {}  # category → label → position (None: not built)
        self._borrowed = False  # labels and categories are the caller's lists (copied before a merge)

    def add(self, labels: List[str], categories: List[str], times: Numbers, counts: Numbers,
            totals: Optional[List[float]] = None, within: Optional[List[Dict[str, float]]] = None) -> None:
        if totals is not None or within is not None:
            self._add_nested(labels, categories, times, counts, totals or times, within)
            return
        if not self.labels and _all_distinct(labels, categories):
            # the first, all-distinct batch (a device's op table: one batch) is the rows as they are,
            # its lists not copied unless another batch comes (a million labels: 8 MB a copy); the
            # position index is built only then too
            self.labels, self.categories, self._borrowed = labels, categories, True
            self.time, self.count = np.array(times, dtype=np.float64), np.array(counts, dtype=np.float64)
            self._at = None
            return
        self.time, self.count = _floats(self.time), _floats(self.count)
        times, counts = _floats(times), _floats(counts)
        if self._borrowed:
            self.labels, self.categories, self._borrowed = list(self.labels), list(self.categories), False
        if self._at is None:
            self._at = {}
            for i, (label, category) in enumerate(zip(self.labels, self.categories)):
                self._at.setdefault(category, {})[label] = i
        for label, category, t, c in zip(labels, categories, times, counts):
            at = self._at.get(category)
            if at is None:
                at = self._at[category] = {}
            i = at.get(label)
            if i is None:
                at[label] = len(self.labels)
                self.labels.append(label)
                self.categories.append(category)
                self.time.append(0.0 + t)
                self.count.append(0.0 + c)
            else:
                self.time[i] += t
                self.count[i] += c

    def _add_nested(self, labels: List[str], categories: List[str], times: List[float], counts: List[float],
                    totals: List[float], within: Optional[List[Dict[str, float]]]) -> None:
        """Rows of host ops: self time, and the inclusive time and enclosing ops beside it."""
        if self.total is None:
            self.total = list(_floats(self.time))
        start = len(self.labels)
        self.add(labels, categories, times, counts)  # rows merged by (label, category) as above
        if self._at is None:  # the first batch was kept as it is: rows are positions
            positions = list(range(start, start + len(labels)))
        else:
            positions = [self._at[c][label] for label, c in zip(labels, categories)]
        self.total.extend(0.0 for _ in range(len(self.labels) - len(self.total)))
        for k, i in enumerate(positions):
            self.total[i] += totals[k]
            for outer, ns in (within[k] if within else {}).items():
                slot = self.within.setdefault(i, {})
                slot[outer] = slot.get(outer, 0.0) + ns


Numbers = Union[List[float], np.ndarray]


def _floats(values: Numbers) -> List[float]:
    """Python floats, as the merging of rows adds them one by one."""
    return values.astype(np.float64).tolist() if isinstance(values, np.ndarray) else values


def _all_distinct(labels: List[str], categories: List[str]) -> bool:
    """Whether every (category, label) pair is distinct: by their hashes in numpy (a million ops: one
    int64 array, not a set of a million tuples), and by the pairs themselves only where hashes meet.
    The labels' own hashes are tried first: distinct labels make distinct pairs, without a tuple made
    and hashed per row."""
    if not has_repeats(hash_codes(labels, len(labels))):
        return True
    if not has_repeats(hash_codes(zip(categories, labels), len(labels))):
        return True
    return len(set(zip(categories, labels))) == len(labels)


def _top_rows(totals: _Totals, n: int, limit: int, familiar: bool = True) -> List[OpRow]:
    """The first `limit` rows by time per step, then name (then first seen), as sorting every row would
    give, made without a row object per op (100,000 ops): rows above the limit-th largest
    time are in, and of those tied with it only the ones first by name. Names are looked at only for
    the rows that can be shown."""
    times = np.array(totals.time, dtype=np.float64)  # OpRow.time_ms (divided in place: one array)
    times /= 1e6
    times /= n
    labels = totals.labels

    def shown(i: int) -> Tuple[str, Optional[str]]:
        return familiar_tf_op(labels[i]) if familiar else (labels[i], None)

    if 0 < limit < times.size:
        cut = np.partition(times, times.size - limit)[times.size - limit]
        above = np.flatnonzero(times > cut).tolist()
        by_name = (lambda i: shown(i)[0]) if familiar else labels.__getitem__  # (a million ties: no call)
        tied = smallest_rows(np.flatnonzero(times == cut), limit - len(above), by_name)  # stable
        keep = sorted(above + tied)
    else:  # (every row: a list of a million row numbers is made only here, 40 MB)
        keep = list(range(times.size))
    names = {i: shown(i) for i in keep}
    time_of = dict(zip(keep, times[keep].tolist()))
    order = sorted(keep, key=lambda i: (-time_of[i], names[i][0]))  # stable: ties stay in first-seen order
    inclusive = totals.total
    return [OpRow(names[i][0], totals.categories[i], time_of[i], float(totals.count[i]) / n, names[i][1],
                  None if inclusive is None else inclusive[i] / 1e6 / n, _outermost(totals.within.get(i)))
            for i in order[:limit]]


def _outermost(enclosing: Optional[Dict[str, float]]) -> Optional[str]:
    """The outermost op holding most of a row's self time (ties: by name)."""
    if not enclosing:
        return None
    return min(enclosing.items(), key=lambda item: (-item[1], item[0]))[0]


# The host events that are ops on a CPU-only profile: TF ops, and PyTorch's aten ops.
HOST_OP_PATTERNS = tuple(p for p in names.HOST_COMPUTE if p.id in ("tf_op", "torch_aten_op"))


# Op events a line's walk turns into Python values at a time: a CPU profile's line may hold a million.
NEST_BLOCK = 1 << 16


def nested_op_times(starts: np.ndarray, durations: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(self time, index of the outermost enclosing event) of each event of one line's op events.

    The events nest (readers guarantee it) and come sorted by start, longest first, so a stack of
    open events gives each one's parent: its self time is its duration less its children's, as
    PyTorch's "self CPU" is. An event that encloses nothing else is its own outermost event. The
    walk goes NEST_BLOCK events at a time, the open events carried from block to block; each
    event's parent is kept as a column and the children's time taken off their parents at the end."""
    durations = durations.astype(np.int64, copy=False)
    parent = np.empty(starts.size, dtype=np.int64)
    roots = np.empty(starts.size, dtype=np.int64)
    stack: List[Tuple[int, int, int]] = []  # (end, index, outermost) of the events still open
    for begin in range(0, starts.size, NEST_BLOCK):
        block = slice(begin, begin + NEST_BLOCK)
        block_parent: List[int] = []
        block_root: List[int] = []
        block_starts = starts[block]
        for i, start, end in zip(range(begin, begin + block_starts.size), block_starts.tolist(),
                                 (block_starts + durations[block]).tolist()):
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack:
                _, up, root = stack[-1]
            else:
                up, root = -1, i
            block_parent.append(up)
            block_root.append(root)
            stack.append((end, i, root))
        parent[block] = block_parent
        roots[block] = block_root
    own = durations.copy()
    children = np.flatnonzero(parent >= 0)
    np.subtract.at(own, parent[children], durations[children])
    return np.maximum(own, 0), roots


def _host_ops(profile: Profile, lo: np.ndarray, hi: np.ndarray, totals: _Totals) -> None:
    for plane in profile.host_planes:
        is_op = np.append(names.matching(HOST_OP_PATTERNS, plane.event_names), False)
        if not is_op.any():
            continue
        for line in plane.lines:
            if len(line) == 0:
                continue
            ops = np.flatnonzero(is_op[line.metadata_index])
            if not ops.size:
                continue
            starts = line.start_ns[ops]
            durations = line.duration_ns[ops].astype(np.int64)
            self_ns, roots = nested_op_times(starts, durations)
            inside = in_windows(lo, hi, starts) if lo.size else np.ones(ops.size, bool)
            if not inside.any():
                continue
            category = "input_pipeline" if is_producer_line(line) else "host_compute"
            meta = line.metadata_index[ops]
            used, inverse = unique_inverse(meta[inside])
            time = np.bincount(inverse, weights=self_ns[inside], minlength=used.size)
            total = np.bincount(inverse, weights=durations[inside], minlength=used.size)
            count = np.bincount(inverse, minlength=used.size)
            within: List[Dict[str, float]] = [{} for _ in range(used.size)]
            nested = np.flatnonzero(inside & (roots != np.arange(ops.size)))
            if nested.size:
                row_of = np.full(ops.size, -1, dtype=np.int64)
                row_of[np.flatnonzero(inside)] = inverse
                outer_meta = meta[roots[nested]]
                keys = row_of[nested] * (len(plane.event_names) + 1) + outer_meta
                distinct, where = unique_inverse(keys)
                sums = np.bincount(where, weights=self_ns[nested], minlength=distinct.size)
                for key, ns in zip(distinct.tolist(), sums.tolist()):
                    row, outer = divmod(key, len(plane.event_names) + 1)
                    within[row][plane.event_names[outer]] = ns
            totals.add([plane.event_names[m] for m in used.tolist()], [category] * used.size, time.tolist(),
                       count.astype(np.float64).tolist(), total.tolist(), within)


def _shown_names(device, codes: np.ndarray) -> List[str]:
    """The names of kernel name codes `codes` (ascending) as a table shows them (short_op_name), read
    from the batch the kernel view made of the names the kernels use: no name is shortened or copied
    one by one when none is HLO text (a million names: a Python call each)."""
    every_used, listed = used_kernel_names(device)
    shown = names.short_names(listed).texts  # aligned with every_used
    if codes.size == len(shown):
        return shown
    return list(map(shown.__getitem__, np.searchsorted(every_used, codes).tolist()))


def kernel_table(profile: Profile, breakdown: Breakdown, limit: int = th.TOP_KERNELS) -> List[OpRow]:
    """Top kernels (device ops) by name, time per steady step summed over devices."""
    lo, hi, n = _windows(breakdown)
    totals = _Totals()
    for device in profile.devices:
        k = device.kernels
        if not len(k):
            continue
        inside = in_windows(lo, hi, k.start_ns) if lo.size else np.ones(len(k), bool)
        count = sums_by_code(k.name_index, len(k.names), rows=inside)
        used = np.flatnonzero(count)
        count = count[used]
        time = sums_by_code(k.name_index, len(k.names), k.duration_ns, inside)[used]
        del inside  # (per kernel, and the sums per name: each let go once read, a million names)
        categories = _category_names(kernel_name_categories(device)[used])
        totals.add(_shown_names(device, used), categories, time, count)
        del used, categories, time, count
    return _top_rows(totals, n, limit, familiar=False)
