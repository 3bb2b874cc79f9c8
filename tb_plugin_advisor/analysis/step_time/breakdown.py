"""Where each step's time goes: host and device merged on one time axis, categories that never double count.

Every event of the profile that matters is turned into an interval with a category (event_names.py
says which names mean what). Inside each step window the categories claim time in a fixed priority;
time claimed by a higher category is not counted again by a lower one, and time nobody claims is
`idle`. So the categories of a step always sum exactly to the step time.

Priority (highest first) and why:
  device_compute  a kernel runs: the accelerator is doing the work the step exists for
  communication   collectives (NCCL kernels, XLA all-reduce, host collective ops) with no compute
  memcpy          device copies other than input (D2H, D2D, P2P) with neither of the above
  input           the step waits for the input pipeline (get-next on a consumer thread) or copies
                  input to the device (H2D), and the device has nothing to compute
  kernel_launch   the host is inside a launch API while the device is idle
  host_compute    the host executes TF ops / functions / XLA CPU programs, device idle
  other           anything else the step's own thread does (Python, framework overhead)
  idle            nothing recorded at all

Unlike the built-in tab, which measures a GPU step from its first to its last device activity, the
window is the whole step, so host-side waiting before the first kernel is visible. On CPU-only
profiles the same rules give "waiting for input" vs "computing on host threads". tf.data producer
threads (prefetch, parallel map) run beside the step and are never counted: only waiting is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis import intervals as iv
from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view, used_kernel_names
from tb_plugin_advisor.analysis.classify.patterns import KernelClass, classify_kernel, remember
from tb_plugin_advisor.analysis.classify.prefilter import text_batch
from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.lookup import unique_codes
from tb_plugin_advisor.model import MEMCPY_DIRECTIONS, Device, Line, Plane, Profile

# Claim priority (module docstring); the categories' JSON order is categories.py's.
PRIORITY = ("device_compute", "communication", "memcpy", "input", "kernel_launch", "host_compute", "other")
_PRIORITY_COLUMNS = tuple(CATEGORIES.index(c) for c in PRIORITY)  # per_window column of each level

_H2D = MEMCPY_DIRECTIONS.index("H2D")

# Host name codes (per distinct name of a plane)
_NONE, _INPUT, _LAUNCH, _COPY_H2D, _COPY, _COMM, _HOST, _DATA_ANNOTATION = range(8)
_HOST_TABLES = (
    (_INPUT, names.HOST_INPUT),
    (_LAUNCH, names.HOST_KERNEL_LAUNCH),
    (_COPY_H2D, names.HOST_MEMCPY_H2D),
    (_COPY, names.HOST_MEMCPY_OTHER),
    (_COMM, names.HOST_COMMUNICATION),
    (_HOST, names.HOST_COMPUTE),
)
_CODE_CATEGORY = {
    _INPUT: "input",
    _LAUNCH: "kernel_launch",
    _COPY_H2D: "input",
    _COPY: "memcpy",
    _COMM: "communication",
    _HOST: "host_compute",
}


@dataclass
class Breakdown:
    """Per-window time per category (ns); windows are the steps, or the whole profile without steps."""

    window_start_ns: np.ndarray
    window_end_ns: np.ndarray
    per_window_ns: np.ndarray  # int64 [windows, len(CATEGORIES)]
    steady: np.ndarray  # bool per window: counts in averages
    device_busy_pct: Dict[str, float] = field(default_factory=dict)  # device name -> % of steady time
    input_evidence: List[Tuple[str, str, float]] = field(default_factory=list)  # (name, line, ms/step)
    has_device_activity: bool = False

    @property
    def window_count(self) -> int:
        return int(self.window_start_ns.shape[0])

    def steady_windows(self) -> Tuple[np.ndarray, np.ndarray]:
        """Starts and ends (ns) of the steady windows, in time order: what per-step analyses walk."""
        lo = self.window_start_ns[self.steady]
        hi = self.window_end_ns[self.steady]
        order = np.argsort(lo, kind="stable")
        return lo[order], hi[order]

    def per_window_ms(self, i: int) -> Dict[str, float]:
        return {c: float(self.per_window_ns[i, k]) / 1e6 for k, c in enumerate(CATEGORIES)}

    def mean_ms(self) -> Dict[str, float]:
        rows = self.per_window_ns[self.steady]
        if rows.shape[0] == 0:
            return {c: 0.0 for c in CATEGORIES}
        means = rows.mean(axis=0) / 1e6
        return {c: float(means[k]) for k, c in enumerate(CATEGORIES)}

    def pct(self) -> Dict[str, float]:
        """Shares of the steady time; they sum to 100 (all zero without windows)."""
        rows = self.per_window_ns[self.steady]
        total = float(rows.sum())
        if total <= 0:
            return {c: 0.0 for c in CATEGORIES}
        sums = rows.sum(axis=0)
        return {c: float(sums[k]) * 100.0 / total for k, c in enumerate(CATEGORIES)}


def compute_breakdown(profile: Profile, steps: Steps) -> Breakdown:
    """Categorise every step's time (see module docstring)."""
    if steps.count:
        lo, hi, steady = steps.start_ns, steps.end_ns, steps.steady
    else:
        first, last = profile.time_range_ns()
        lo = np.array([first], dtype=np.int64)
        hi = np.array([last], dtype=np.int64)
        steady = np.array([last > first])
    sources = event_sources(profile, steps)
    tally = _Tally(lo, hi, steady, busy_ns={d.name: 0 for d in profile.devices})
    for a, b in time_slices(lo, hi, sources):
        tally.claim(sources, a, b)
    per_window, busy_ns = tally.per_window, tally.busy_ns
    per_window[:, CATEGORIES.index("idle")] = (hi - lo) - per_window.sum(axis=1)
    result = Breakdown(lo, hi, per_window, steady)
    result.has_device_activity = any(d.has_activity for d in profile.devices)
    steady_ns = float((hi[steady] - lo[steady]).sum())
    result.device_busy_pct = {
        name: (value * 100.0 / steady_ns if steady_ns > 0 else 0.0) for name, value in busy_ns.items()
    }
    result.input_evidence = _input_evidence(profile, lo[steady], hi[steady])
    return result


# ---------------------------------------------------------------------------------------------------
# Event sources: every line / device table as sorted columns plus a category code per event


@dataclass
class EventSource:
    """Events of one host line or device table: sorted starts, durations, category (index into
    PRIORITY, -1 = not counted), and the device whose busy time they make (None for host lines)."""

    starts: np.ndarray
    durations: np.ndarray
    codes: np.ndarray  # int8
    device: Optional[str] = None
    long_index: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    max_short_ns: int = 0

    def split_long(self, span_ns: int) -> None:
        """Events longer than a time slice are few (markers, function calls): keep them apart so a
        slice finds its short events by binary search on the start."""
        is_long = self.durations > span_ns
        self.long_index = np.flatnonzero(is_long)
        # (the maximum read in place: a copy of the short durations was 48 MB for a 300 MB profile)
        self.max_short_ns = int(np.max(self.durations, initial=0, where=~is_long))

    def blocks_in_slice(self, a: int, b: int, levels: int
                        ) -> Tuple[List[iv.Intervals], Optional[iv.Intervals]]:
        """The counted events overlapping [a, b), clipped to it, as the merged set of each category
        level, and of all of them for a device's events (the device's busy time; None for a host
        line)."""
        first = int(np.searchsorted(self.starts, a - self.max_short_ns, side="left"))
        last = int(np.searchsorted(self.starts, b, side="left"))
        before = _NO_ROWS
        if self.long_index.size:  # long events that start before the short ones can reach the slice
            long_ = self.long_index[:int(np.searchsorted(self.long_index, first))]
            before = long_[(self.starts[long_] < b) & (self.starts[long_] + self.durations[long_] > a)]
        return iv.level_blocks(self.starts, self.durations, self.codes, before, first, last, a, b, levels,
                               self.device is not None)


_NO_ROWS = np.zeros(0, dtype=np.int64)


_P = {c: i for i, c in enumerate(PRIORITY)}


def event_sources(profile: Profile, steps: Steps) -> List[EventSource]:
    """Every device table and host line that can claim step time, with per-event categories."""
    sources: List[EventSource] = []
    h2d_correlations = _host_h2d_correlations(profile)
    kernel_names: List[List[str]] = []  # per device, the names its kernels use
    kernel_correlations: List[np.ndarray] = []
    for device in profile.devices:
        sources += _device_sources(device, h2d_correlations)
        if len(device.kernels):
            kernel_names.append(used_kernel_names(device)[1])
            ids = device.kernels.correlation_id
            known = ids >= 0
            kernel_correlations.append(ids if known.all() else ids[known])  # (the column itself: no copy)
    if len(kernel_correlations) == 1:
        launched = kernel_correlations[0]
    else:
        launched = np.concatenate(kernel_correlations) if kernel_correlations else np.zeros(0, dtype=np.int64)
    step_lines = set(steps.step_lines)
    for p, plane in enumerate(profile.planes):
        if plane.kind != "host":
            continue
        codes = host_name_codes(plane, kernel_names)
        for i, line in enumerate(plane.lines):
            if len(line) == 0 or is_producer_line(line):
                continue
            source = _host_source(line, codes, launched, steps if (p, i) in step_lines else None)
            if source is not None:
                sources.append(source)
    return sources


def is_producer_line(line: Line) -> bool:
    return names.first_match(names.INPUT_PRODUCER_LINES, line.name) is not None


def device_kernel_category(kernel_name: str) -> str:
    """device_compute | communication | memcpy for one kernel / device op name (cached: several
    analyses ask for every distinct kernel name; `kernel_category_codes` answers many at once)."""
    found = _CATEGORIES.get(kernel_name)
    if found is None:
        found = remember(_CATEGORIES, kernel_name, _device_kernel_category(kernel_name))
    return found


_CATEGORIES: Dict[str, str] = {}


def _device_kernel_category(kernel_name: str) -> str:
    family = classify_kernel(kernel_name).family
    if family == "comm":
        return "communication"
    if family == "copy":
        return "memcpy"
    short = names.short_op_name(kernel_name)
    if names.first_match(names.DEVICE_COMMUNICATION, short):
        return "communication"
    if names.first_match(names.DEVICE_MEMCPY, short):
        return "memcpy"
    return "device_compute"


def kernel_category_codes(listed: List[str], classes: Sequence[KernelClass], class_codes: np.ndarray
                          ) -> np.ndarray:
    """`device_kernel_category` of many names at once, as `_P` codes: `class_codes` index each name's
    kernel class in `classes` (classify_kernel_codes, a kernel view). The family decides collectives
    and runtime copies; the device name tables, over the short names (the names' own batch, or HLO
    text's), decide the rest. Codes in numpy: a million names make no list of categories."""
    by_class = np.array([_family_code(c.family) for c in classes], dtype=np.int8)
    fixed = by_class[class_codes] if by_class.size else np.full(len(listed), -1, dtype=np.int8)
    found = np.where(fixed >= 0, fixed, _P["device_compute"]).astype(np.int8)
    rest = fixed < 0
    if rest.any():
        batch = names.short_names(listed)
        comm = names.first_matches(names.DEVICE_COMMUNICATION, batch, rest) >= 0
        memcpy = names.first_matches(names.DEVICE_MEMCPY, batch, rest & ~comm) >= 0
        found[comm] = _P["communication"]
        found[memcpy] = _P["memcpy"]
    return found


def _family_code(family: str) -> int:
    """The `_P` code a kernel family decides (collectives, runtime copies), else -1: the name tables."""
    category = _FAMILY_CATEGORY.get(family)
    return _P[category] if category is not None else -1


_FAMILY_CATEGORY = {"comm": "communication", "copy": "memcpy"}


def kernel_name_categories(device: Device) -> np.ndarray:
    """`_P` code of each name of a device's kernel table (read-only; device_compute for names no kernel
    uses): each used name classified once, from the kernel view's families, and kept with the device
    for the breakdown and the op and kernel tables."""
    found = device.derived.get("kernel_name_categories")
    if found is None:
        kernels = device.kernels
        view = kernel_view(device)
        found = np.full(len(kernels.names), _P["device_compute"], dtype=np.int8)
        used, listed = used_kernel_names(device)  # the list classify_kernels batched
        if used.size:
            found[used] = kernel_category_codes(listed, view.class_list, view.class_of[used])
        found.flags.writeable = False
        device.derived["kernel_name_categories"] = found
    return found


def _device_sources(device: Device, h2d_correlations: np.ndarray) -> List[EventSource]:
    out: List[EventSource] = []
    kernels = device.kernels
    if len(kernels):
        codes = kernel_name_categories(device)[kernels.name_index]
        # a copy kernel (ROCm blit) whose host API call was a host-to-device copy carries input
        rows = np.flatnonzero((codes == _P["memcpy"]) & (kernels.correlation_id >= 0))
        if rows.size and h2d_correlations.size:
            codes[rows[np.isin(kernels.correlation_id[rows], h2d_correlations)]] = _P["input"]
        out.append(EventSource(kernels.start_ns, kernels.duration_ns, codes, device.name))
    copies = device.memcpys
    if len(copies):
        codes = np.where(copies.direction == _H2D, _P["input"], _P["memcpy"]).astype(np.int8)
        out.append(EventSource(copies.start_ns, copies.duration_ns, codes, device.name))
    return out


def host_name_codes(plane: Plane, kernel_names: Sequence[Sequence[str]]) -> np.ndarray:
    """Category code per distinct event name of a host plane (plus a trailing _NONE). `kernel_names`:
    per device, the names its kernels use (read, not made into one set: a million names were 40 MB)."""
    codes = np.full(len(plane.event_names) + 1, _NONE, dtype=np.int8)
    batch = text_batch(plane.event_names)
    pending = np.ones(len(batch), dtype=bool)
    for code, table in _HOST_TABLES:  # the first table that matches wins
        hits = names.first_matches(table, batch, pending) >= 0
        codes[:-1][hits] = code
        pending &= ~hits
    event_names = plane.event_names
    rest = np.flatnonzero(pending).tolist()
    rest_names = {event_names[i] for i in rest}
    launching = set().union(*(rest_names.intersection(listed) for listed in kernel_names))
    launches = [i for i in rest if event_names[i] in launching]  # older TF names the launch after
    codes[launches] = _LAUNCH                                          # the kernel it launches
    pending[launches] = False
    codes[:-1][names.data_loading_annotations(batch, pending)] = _DATA_ANNOTATION
    return codes


_HOST_CODE_TO_PRIORITY = np.full(8, -1, dtype=np.int8)
for _code, _category in _CODE_CATEGORY.items():
    _HOST_CODE_TO_PRIORITY[_code] = _P[_category]


def _host_source(
    line: Line, codes: np.ndarray, launched: np.ndarray, steps: Optional[Steps]
) -> Optional[EventSource]:
    per_event = codes[line.metadata_index]
    correlation = line.stats.get("correlation_id")
    if correlation is not None and correlation.kind == "int" and launched.size:
        # a CUPTI/roctracer API call whose correlation id names a kernel is that kernel's launch
        # (only events not already named as something else are looked up)
        # (read sparse: a dense copy of a host thread's ids would stay with the profile, 9 bytes per event)
        carried = per_event[correlation.indices]
        looked_up = (carried == _NONE) | (carried == _HOST)
        rows = correlation.indices[looked_up]
        if rows.size:
            per_event[rows[np.isin(correlation.data[looked_up], launched)]] = _LAUNCH
    categories = _HOST_CODE_TO_PRIORITY[per_event]
    if steps is not None and steps.count:
        # a user's data-loading annotation on the step's thread is input, unless it wraps whole steps
        marked = np.flatnonzero(per_event == _DATA_ANNOTATION)
        if marked.size:
            ends = line.start_ns[marked] + line.duration_ns[marked]
            categories[marked[~steps.hold_a_step(line.start_ns[marked], ends)]] = _P["input"]
        rest = np.flatnonzero(per_event == _NONE)
        if rest.size:
            ends = line.start_ns[rest] + line.duration_ns[rest]
            inner = rest[~steps.hold_a_step(line.start_ns[rest], ends)]
            categories[inner] = _P["other"]
    if not (categories >= 0).any():
        return None
    return EventSource(line.start_ns, line.duration_ns, categories)


def _host_h2d_correlations(profile: Profile) -> np.ndarray:
    """Correlation ids of host H2D copy API calls (their device side may be a blit kernel)."""
    found: List[np.ndarray] = []
    for plane in profile.host_planes:
        is_h2d = np.append(names.matching(names.HOST_MEMCPY_H2D, plane.event_names), False)
        if not is_h2d.any():
            continue
        for line in plane.lines:
            column = line.stats.get("correlation_id")
            if column is None or column.kind != "int" or len(line) == 0:
                continue
            found.append(column.data[is_h2d[line.metadata_index[column.indices]]])  # (sparse, as above)
    return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)


# ---------------------------------------------------------------------------------------------------
# Per-device busy time and input evidence


def _input_evidence(profile: Profile, lo: np.ndarray, hi: np.ndarray) -> List[Tuple[str, str, float]]:
    """The outermost input-wait events per (name, thread), in ms per steady step, largest first."""
    if lo.size == 0:
        return []
    found: Dict[Tuple[str, str], float] = {}
    for plane in profile.host_planes:
        is_input = np.append(names.matching(names.HOST_INPUT, plane.event_names), False)
        if not is_input.any():
            continue
        for line in plane.lines:
            if len(line) == 0 or is_producer_line(line):
                continue
            mask = is_input[line.metadata_index]
            if not mask.any():
                continue
            starts, ends = line.start_ns[mask], line.end_ns[mask]
            top = iv.outermost(starts, ends)
            index = np.flatnonzero(mask)[top]
            for meta in unique_codes(line.metadata_index[index]).tolist():
                pick = index[line.metadata_index[index] == meta]
                merged = iv.union(line.start_ns[pick], line.end_ns[pick])
                ms = float(iv.covered(merged, lo, hi).sum()) / 1e6 / lo.size
                if ms > 0:
                    key = (plane.event_names[meta], line.label)
                    found[key] = found.get(key, 0.0) + ms
    ranked = sorted(found.items(), key=lambda kv: -kv[1])
    return [(name, thread, ms) for (name, thread), ms in ranked[:5]]


# ---------------------------------------------------------------------------------------------------
# Claiming step time, one slice of the timeline at a time: inside each slice the categories claim
# time in priority order, so a multi-million-event profile is unioned a slice at a time and memory
# stays bounded whatever the file size.

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


@dataclass
class _Tally:
    """What the slices add up: per window (step) the time of each category, and per device its busy
    time inside the steady windows. `claim` adds one slice of the timeline."""

    lo: np.ndarray  # window starts
    hi: np.ndarray  # window ends
    steady: np.ndarray  # bool per window
    busy_ns: Dict[str, int]
    per_window: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.per_window = np.zeros((self.lo.size, len(CATEGORIES)), dtype=np.int64)

    def claim(self, sources: List[EventSource], a: int, b: int) -> None:
        """Add the slice [a, b)'s share of each window's categories and device busy time. Event
        category codes are priority levels (highest first); level k adds to per_window column
        _PRIORITY_COLUMNS[k]."""
        windows = np.flatnonzero((self.lo < b) & (self.hi > a))
        if windows.size == 0:
            return
        w_lo, w_hi = np.maximum(self.lo[windows], a), np.minimum(self.hi[windows], b)
        levels = len(_PRIORITY_COLUMNS)
        parts: Dict[int, List[iv.Intervals]] = {k: [] for k in range(levels)}
        per_device: Dict[str, List[iv.Intervals]] = {}
        for source in sources:
            per_level, every = source.blocks_in_slice(a, b, levels)
            for k, blocks in enumerate(per_level):
                if blocks[0].size:
                    parts[k].append(blocks)
            if every is not None and every[0].size:
                per_device.setdefault(source.device, []).append(every)
        claimed = iv.EMPTY
        before = np.zeros(windows.size, dtype=np.int64)
        for k, column in enumerate(_PRIORITY_COLUMNS):
            if parts[k]:
                claimed = iv.merge(claimed, iv.merge_all(parts[k]))
                now = iv.covered(claimed, w_lo, w_hi)
                self.per_window[windows, column] += now - before
                before = now
        steady_windows = self.steady[windows]
        for device, pieces in per_device.items():
            merged = iv.merge_all(pieces)
            self.busy_ns[device] += int(iv.covered(merged, w_lo[steady_windows], w_hi[steady_windows]).sum())
