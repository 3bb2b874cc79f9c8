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
from typing import Dict, List, Optional, Set, Tuple

import numpy as np

from tb_plugin_advisor.analysis import event_names as names
from tb_plugin_advisor.analysis import intervals as iv
from tb_plugin_advisor.analysis.patterns import classify_kernel
from tb_plugin_advisor.analysis.steps import Steps
from tb_plugin_advisor.model import MEMCPY_DIRECTIONS, Device, Line, Plane, Profile

# JSON order (DESIGN.md §2) and claim priority (module docstring).
CATEGORIES = (
    "input",
    "device_compute",
    "host_compute",
    "kernel_launch",
    "memcpy",
    "communication",
    "idle",
    "other",
)
PRIORITY = ("device_compute", "communication", "memcpy", "input", "kernel_launch", "host_compute", "other")

_H2D = MEMCPY_DIRECTIONS.index("H2D")

# Host name codes (per distinct name of a plane)
_NONE, _INPUT, _LAUNCH, _COPY_H2D, _COPY, _COMM, _HOST = range(7)
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
    sets = category_intervals(profile, steps)
    per_window = np.zeros((lo.size, len(CATEGORIES)), dtype=np.int64)
    claimed = iv.EMPTY
    claimed_before = np.zeros(lo.size, dtype=np.int64)
    for category in PRIORITY:
        claimed = iv.union_all([claimed, sets.get(category, iv.EMPTY)])
        now = iv.covered(claimed, lo, hi)
        per_window[:, CATEGORIES.index(category)] = now - claimed_before
        claimed_before = now
    per_window[:, CATEGORIES.index("idle")] = (hi - lo) - claimed_before
    result = Breakdown(lo, hi, per_window, steady)
    result.has_device_activity = any(d.has_activity for d in profile.devices)
    result.device_busy_pct = _device_busy(profile, lo[steady], hi[steady])
    result.input_evidence = _input_evidence(profile, lo[steady], hi[steady])
    return result


# ---------------------------------------------------------------------------------------------------
# Events → category intervals


def category_intervals(profile: Profile, steps: Steps) -> Dict[str, iv.Intervals]:
    """Merged intervals per category (before priority), from devices and host threads."""
    parts: Dict[str, List[iv.Intervals]] = {c: [] for c in PRIORITY}
    h2d_correlations = _host_h2d_correlations(profile)
    kernel_names: Set[str] = set()
    kernel_correlations: List[np.ndarray] = []
    for device in profile.devices:
        _device_parts(device, parts, h2d_correlations)
        if len(device.kernels):
            used = np.unique(device.kernels.name_index)
            kernel_names.update(device.kernels.names[i] for i in used.tolist())
            kernel_correlations.append(device.kernels.correlation_id[device.kernels.correlation_id >= 0])
    launched = (
        np.unique(np.concatenate(kernel_correlations)) if kernel_correlations else np.zeros(0, dtype=np.int64)
    )
    step_lines = set(steps.step_lines)
    for p, plane in enumerate(profile.planes):
        if plane.kind != "host":
            continue
        codes = host_name_codes(plane, kernel_names)
        for i, line in enumerate(plane.lines):
            if len(line) == 0 or is_producer_line(line):
                continue
            _host_line_parts(line, codes, launched, parts, steps if (p, i) in step_lines else None)
    return {c: iv.union_all(p) for c, p in parts.items()}


def is_producer_line(line: Line) -> bool:
    return names.first_match(names.INPUT_PRODUCER_LINES, line.name) is not None


def device_kernel_category(kernel_name: str) -> str:
    """device_compute | communication | memcpy for one kernel / device op name."""
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


def _device_parts(device: Device, parts: Dict[str, List[iv.Intervals]], h2d_correlations: np.ndarray) -> None:
    kernels = device.kernels
    if len(kernels):
        used = np.unique(kernels.name_index)
        category_of = np.zeros(len(kernels.names), dtype=np.int8)  # 0 compute, 1 comm, 2 copy
        for n in used.tolist():
            category_of[n] = ("device_compute", "communication", "memcpy").index(
                device_kernel_category(kernels.names[n])
            )
        per_kernel = category_of[kernels.name_index]
        ends = kernels.start_ns + kernels.duration_ns
        copies = per_kernel == 2
        input_copies = copies & (kernels.correlation_id >= 0)
        input_copies &= np.isin(kernels.correlation_id, h2d_correlations)
        for mask, category in (
            (per_kernel == 0, "device_compute"),
            (per_kernel == 1, "communication"),
            (copies & ~input_copies, "memcpy"),
            (input_copies, "input"),
        ):
            if mask.any():
                parts[category].append((kernels.start_ns[mask], ends[mask]))
    copies = device.memcpys
    if len(copies):
        ends = copies.start_ns + copies.duration_ns
        h2d = copies.direction == _H2D
        parts["input"].append((copies.start_ns[h2d], ends[h2d]))
        parts["memcpy"].append((copies.start_ns[~h2d], ends[~h2d]))


def host_name_codes(plane: Plane, kernel_names: Set[str]) -> np.ndarray:
    """Category code per distinct event name of a host plane (plus a trailing _NONE)."""
    codes = np.full(len(plane.event_names) + 1, _NONE, dtype=np.int8)
    for i, event_name in enumerate(plane.event_names):
        for code, table in _HOST_TABLES:
            if names.first_match(table, event_name):
                codes[i] = code
                break
        else:
            if event_name in kernel_names:  # older TF names the launch after the kernel it launches
                codes[i] = _LAUNCH
    return codes


def _host_line_parts(
    line: Line,
    codes: np.ndarray,
    launched: np.ndarray,
    parts: Dict[str, List[iv.Intervals]],
    steps: Optional[Steps],
) -> None:
    per_event = codes[line.metadata_index]
    correlation = line.stats.get("correlation_id")
    if correlation is not None and correlation.kind == "int" and launched.size:
        # a CUPTI/roctracer API call whose correlation id names a kernel is that kernel's launch
        api = correlation.present & np.isin(correlation.values, launched)
        per_event = np.where(api & ((per_event == _NONE) | (per_event == _HOST)), _LAUNCH, per_event)
    starts, ends = line.start_ns, line.end_ns
    for code, category in _CODE_CATEGORY.items():
        mask = per_event == code
        if mask.any():
            parts[category].append((starts[mask], ends[mask]))
    if steps is not None and steps.count:
        rest = per_event == _NONE
        rest &= ~_contains_a_step(starts, ends, steps)
        if rest.any():
            parts["other"].append((starts[rest], ends[rest]))


def _contains_a_step(starts: np.ndarray, ends: np.ndarray, steps: Steps) -> np.ndarray:
    """Events that span a whole step: the step marker itself and outer frames (a Python loop)."""
    order = np.argsort(steps.start_ns, kind="stable")
    step_starts, step_ends = steps.start_ns[order], steps.end_ns[order]
    first = np.searchsorted(step_starts, starts, side="left")
    valid = first < step_starts.size
    safe = np.where(valid, first, 0)
    return valid & (step_ends[safe] <= ends)


def _host_h2d_correlations(profile: Profile) -> np.ndarray:
    """Correlation ids of host H2D copy API calls (their device side may be a blit kernel)."""
    found: List[np.ndarray] = []
    for plane in profile.host_planes:
        is_h2d = np.array(
            [names.first_match(names.HOST_MEMCPY_H2D, n) is not None for n in plane.event_names] + [False]
        )
        if not is_h2d.any():
            continue
        for line in plane.lines:
            column = line.stats.get("correlation_id")
            if column is None or column.kind != "int" or len(line) == 0:
                continue
            mask = is_h2d[line.metadata_index] & column.present
            found.append(column.values[mask])
    return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)


# ---------------------------------------------------------------------------------------------------
# Per-device busy time and input evidence


def _device_busy(profile: Profile, lo: np.ndarray, hi: np.ndarray) -> Dict[str, float]:
    total = float((hi - lo).sum())
    busy: Dict[str, float] = {}
    for device in profile.devices:
        merged = iv.union_all(
            [
                (device.kernels.start_ns, device.kernels.start_ns + device.kernels.duration_ns),
                (device.memcpys.start_ns, device.memcpys.start_ns + device.memcpys.duration_ns),
            ]
        )
        busy[device.name] = float(iv.covered(merged, lo, hi).sum()) * 100.0 / total if total > 0 else 0.0
    return busy


def _input_evidence(profile: Profile, lo: np.ndarray, hi: np.ndarray) -> List[Tuple[str, str, float]]:
    """The outermost input-wait events per (name, thread), in ms per steady step, largest first."""
    if lo.size == 0:
        return []
    found: Dict[Tuple[str, str], float] = {}
    for plane in profile.host_planes:
        is_input = np.array(
            [names.first_match(names.HOST_INPUT, n) is not None for n in plane.event_names] + [False]
        )
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
            for meta in np.unique(line.metadata_index[index]).tolist():
                pick = index[line.metadata_index[index] == meta]
                merged = iv.union(line.start_ns[pick], line.end_ns[pick])
                ms = float(iv.covered(merged, lo, hi).sum()) / 1e6 / lo.size
                if ms > 0:
                    key = (plane.event_names[meta], line.label)
                    found[key] = found.get(key, 0.0) + ms
    ranked = sorted(found.items(), key=lambda kv: -kv[1])
    return [(name, thread, ms) for (name, thread), ms in ranked[:5]]
