"""Find the training steps of a profile: markers first, then a repeating pattern, else none.

Order (ARCHITECTURE.md §5): root markers (`_r=1`: tf.profiler `Trace(..., _r=1)`, JAX
`StepTraceAnnotation`), Keras 3 `Profiled batch`, legacy `TraceContext`. Without markers the steps
are inferred, in this order, from: host launches of a function whose name says it is the step
(`__inference_train_step_…`, `PjitFunction(train_step)`); repeated XLA module executions on a
device (TPU `XLA Modules`); the busiest repeated host launch of any compiled function; xprof's own
`Steps` line when the file was saved after xprof processed it; a repeating kernel sequence on the
busiest device. A step then runs from one occurrence to the next.

Averages leave out leading warm-up steps (≥ WARMUP_FACTOR × the median of the rest), and say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.intervals import outermost
from tb_plugin_advisor.analysis.step_time.device_clock import device_windows
from tb_plugin_advisor.formatting import fixed, plain
from tb_plugin_advisor.lookup import sums_by_code, unique_codes
from tb_plugin_advisor.model import STEP_SOURCES, Device, Line, Plane, Profile, StepMarker

LineRef = Tuple[int, int]  # (index into profile.planes, index into plane.lines)


@dataclass
class Steps:
    """The steps of one profile (host), as columns; times in ns.

    `start_ns`/`end_ns` are the step windows every analysis uses: on the device's clock for GPU runs
    whose device work can be tied to the host steps (device_clock.py), else the host ranges.
    `host_start_ns`/`host_end_ns` are always the host ranges (the markers' own events).
    """

    source: str  # root_marker | keras3_marker | legacy_marker | profiler_step | inferred | none
    method: str  # how they were found, for people ("Trace('train', _r=1) markers on python3")
    start_ns: np.ndarray
    end_ns: np.ndarray
    numbers: List[Optional[int]]
    step_lines: List[LineRef]  # host threads that run the step (where un-categorised work is "other")
    warmup: np.ndarray  # bool per step: left out of averages
    notes: List[str] = field(default_factory=list)
    clock: str = "host"  # host | device: whose clock start_ns/end_ns are on
    host_start_ns: Optional[np.ndarray] = None  # None: the same as start_ns / end_ns
    host_end_ns: Optional[np.ndarray] = None
    host_ahead_ns: Optional[np.ndarray] = None  # float per step: device end − host end (NaN: no work)
    cut_off: Optional[np.ndarray] = None  # bool per step: device work cut off by the capture's end
    # share of the device events during the steps that a launch inside a step names (None: no steps or
    # no device work; 0.0: no launch correlation at all)
    launch_share: Optional[float] = None

    def __post_init__(self) -> None:
        if self.host_start_ns is None:
            self.host_start_ns = self.start_ns
        if self.host_end_ns is None:
            self.host_end_ns = self.end_ns
        if self.cut_off is None:
            self.cut_off = np.zeros(self.start_ns.shape[0], dtype=bool)

    @property
    def count(self) -> int:
        return int(self.start_ns.shape[0])

    @property
    def duration_ns(self) -> np.ndarray:
        return self.end_ns - self.start_ns

    @property
    def host_duration_ns(self) -> np.ndarray:
        return self.host_end_ns - self.host_start_ns

    @property
    def steady(self) -> np.ndarray:
        """Mask of the steps that count in averages: not warm-up, not cut off."""
        return ~self.warmup & ~self.cut_off

    def stats_ms(self) -> Dict[str, float]:
        """mean / median / p90 / min / max of the steady steps, in ms (zeros without steps)."""
        times = self.duration_ns[self.steady] / 1e6
        if times.size == 0:
            return {"mean_ms": 0.0, "median_ms": 0.0, "p90_ms": 0.0, "min_ms": 0.0, "max_ms": 0.0}
        return {
            "mean_ms": float(times.mean()),
            "median_ms": float(np.median(times)),
            "p90_ms": float(np.percentile(times, 90)),
            "min_ms": float(times.min()),
            "max_ms": float(times.max()),
        }

    def cut_off_names(self) -> List[str]:
        """The steps whose device work the end of the capture cut off, as a person names them: "step 5",
        or "step #4" (its index) where the step has no number."""
        return [f"step {self.numbers[i] if self.numbers[i] is not None else f'#{i}'}"
                for i in np.flatnonzero(self.cut_off).tolist()]

    def hold_a_step(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Which host events span a whole step's host range: the step marker itself and outer frames
        (a Python training loop, a `load_and_train` annotation), which are no work of one step."""
        order = np.argsort(self.host_start_ns, kind="stable")
        step_starts, step_ends = self.host_start_ns[order], self.host_end_ns[order]
        first = np.searchsorted(step_starts, starts, side="left")
        valid = first < step_starts.size
        safe = np.where(valid, first, 0)
        return valid & (step_ends[safe] <= ends)

    def host_ahead_ms(self) -> Optional[float]:
        """Median over the steady steps with device work of how long after the host's end of the step
        the device finished it (negative: the device was done first); None on the host clock."""
        if self.host_ahead_ns is None:
            return None
        ahead = self.host_ahead_ns[self.steady]
        ahead = ahead[np.isfinite(ahead)]
        return float(np.median(ahead)) / 1e6 if ahead.size else None


def find_steps(profile: Profile) -> Steps:
    """The steps of `profile`, with notes on warm-up and too few steps."""
    steps = _from_markers(profile) or _inferred(profile)
    if steps is None:
        steps = Steps(
            "none",
            "no step markers and no repeating launch or kernel pattern",
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            [],
            [],
            np.zeros(0, bool),
        )
    if steps.clock == "host" and steps.count:
        _on_device_clock(steps, profile)
    _mark_warmup(steps)
    _add_notes(steps)
    return steps


def _on_device_clock(steps: Steps, profile: Profile) -> None:
    """Move host-timed steps onto the device's clock where the device's work can be tied to them."""
    order = np.argsort(steps.start_ns, kind="stable")
    if not bool(np.all(order == np.arange(steps.count))):
        return  # (markers come sorted; anything else is left on the host clock)
    found, why_not, steps.launch_share = device_windows(profile, steps.start_ns, steps.end_ns,
                                                        repeating=steps.source != "inferred")
    if found is None:
        if why_not:
            steps.notes.append(why_not)
        return
    host_start, host_end = steps.start_ns, steps.end_ns
    steps.start_ns, steps.end_ns = found.start_ns, found.end_ns
    steps.host_start_ns, steps.host_end_ns = host_start, host_end
    steps.clock = "device"
    ahead = (found.device_end_ns - host_end).astype(np.float64)
    ahead[found.events == 0] = np.nan
    steps.host_ahead_ns = ahead
    steps.cut_off = found.cut_off


# ---------------------------------------------------------------------------------------------------
# Markers

# What marked the steps, in words for people (the ids are JSON values; no page shows them).
STEP_SOURCE_WORDS = {
    "root_marker": "root step markers (_r=1: tf.profiler Trace / JAX StepTraceAnnotation)",
    "keras3_marker": "Keras 3 'Profiled batch' markers",
    "legacy_marker": "tf.keras 'TraceContext' markers",
    "profiler_step": "PyTorch profiler steps (prof.step())",
    "inferred": "inferred from the repeating work (no step markers)",
    "none": "no steps found",
}
_MARKER_METHOD = STEP_SOURCE_WORDS


def _from_markers(profile: Profile) -> Optional[Steps]:
    for source in STEP_SOURCES:
        markers = sorted((m for m in profile.step_markers if m.source == source), key=lambda m: m.start_ns)
        if source == "root_marker":
            markers = _real_roots(markers)
        if not markers:
            continue
        starts = np.array([m.start_ns for m in markers], dtype=np.int64)
        ends = np.array([m.end_ns for m in markers], dtype=np.int64)
        keep = outermost(starts, ends) & (ends > starts)  # a marker nested in another is the same step
        kept = [m for m, k in zip(markers, keep.tolist()) if k]
        if not kept:
            continue
        labels = sorted({m.line_name for m in kept})
        marker_names = sorted({m.name for m in kept})
        return Steps(
            source=source,
            method=f"{_MARKER_METHOD[source]}: {', '.join(repr(n) for n in marker_names)} on "
            f"{', '.join(labels)}",
            start_ns=starts[keep],
            end_ns=ends[keep],
            numbers=[m.step_num for m in kept],
            step_lines=_lines_labelled(profile, labels),
            warmup=np.zeros(len(kept), dtype=bool),
        )
    return None


def _real_roots(markers: List[StepMarker]) -> List[StepMarker]:
    """Root events that are steps: those with a step number, else any not known to be something else."""
    numbered = [m for m in markers if m.step_num is not None]
    if numbered:
        return numbered
    return [m for m in markers if names.first_match(names.NOT_STEP_ROOTS, m.name) is None]


def _lines_labelled(profile: Profile, labels: List[str]) -> List[LineRef]:
    wanted = set(labels)
    return [
        (p, i)
        for p, plane in enumerate(profile.planes)
        if plane.kind == "host"
        for i, line in enumerate(plane.lines)
        if line.label in wanted
    ]


# ---------------------------------------------------------------------------------------------------
# Inference


@dataclass
class _Candidate:
    """Occurrences of one repeated thing that could mark steps."""

    label: str
    starts: np.ndarray
    ends: np.ndarray
    line: Optional[LineRef]
    total_ns: int
    hinted: bool
    exact: bool = False  # the occurrences are the steps themselves (xprof's Steps line)


def _inferred(profile: Profile) -> Optional[Steps]:
    launches = _host_launch_candidates(profile)
    hinted = [c for c in launches if c.hinted]
    ordered: List[Tuple[str, Optional[_Candidate]]] = [
        ("host launches of", _best(hinted)),
        ("device executions of XLA module", _best(_xla_module_candidates(profile))),
        ("host launches of", _best(launches)),
        ("xprof's derived 'Steps' line on", _derived_steps_candidate(profile)),
        ("a repeating kernel sequence starting with", _kernel_period_candidate(profile)),
    ]
    for what, candidate in ordered:
        if candidate is None:
            continue
        starts, ends = _periods(candidate, profile)
        if starts.size == 0:
            continue
        return Steps(
            source="inferred",
            method=f"inferred from {what} {candidate.label!r} ({starts.size} occurrences)",
            start_ns=starts,
            end_ns=ends,
            numbers=[None] * int(starts.size),
            step_lines=[candidate.line] if candidate.line is not None else [],
            warmup=np.zeros(starts.size, dtype=bool),
            clock="host" if candidate.line is not None else "device",  # host launches, or device work
        )
    return None


def _best(candidates: List[_Candidate]) -> Optional[_Candidate]:
    usable = [c for c in candidates if c.starts.size >= th.INFER_MIN_REPEATS]
    if not usable:
        return None
    return max(usable, key=lambda c: (c.total_ns, c.starts.size, c.label))


def _per_name_codes(plane: Plane, patterns) -> Tuple[np.ndarray, List[str]]:
    """For each distinct event name of the plane: index of the function it launches (-1: none)."""
    functions: Dict[str, int] = {}
    codes = np.full(len(plane.event_names) + 1, -1, dtype=np.int64)
    for i, event_name in enumerate(plane.event_names):
        for pattern in patterns:
            match = pattern.compiled.search(event_name)
            if match:
                label = event_name
                codes[i] = functions.setdefault(label, len(functions))
                break
    return codes, list(functions)


def _host_launch_candidates(profile: Profile) -> List[_Candidate]:
    out: List[_Candidate] = []
    for p, plane in enumerate(profile.planes):
        if plane.kind != "host":
            continue
        codes, labels = _per_name_codes(plane, names.STEP_LAUNCHES)
        if not labels:
            continue
        for i, line in enumerate(plane.lines):
            if len(line) == 0:
                continue
            line_codes = codes[line.metadata_index]
            for code in unique_codes(line_codes[line_codes >= 0]).tolist():
                mask = line_codes == code
                out.append(_candidate(labels[code], line, mask, (p, i)))
    return out


def _candidate(label: str, line: Line, mask: np.ndarray, ref: Optional[LineRef]) -> _Candidate:
    starts, ends = line.start_ns[mask], line.end_ns[mask]
    top = outermost(starts, ends)
    starts, ends = starts[top], ends[top]
    return _Candidate(
        label=label,
        starts=starts,
        ends=ends,
        line=ref,
        total_ns=int((ends - starts).sum()),
        hinted=bool(names.TRAIN_HINT.compiled.search(label)),
    )


def _busiest(devices: List[Device]) -> List[Device]:
    return sorted(devices, key=lambda d: (-d.kernels.total_ns, d.name))


def _xla_module_candidates(profile: Profile) -> List[_Candidate]:
    for device in _busiest(profile.devices):
        module_lines = [
            line for line in device.plane.lines if line.name in names.XLA_MODULE_LINES and len(line)
        ]
        candidates = []
        for line in module_lines:
            for code in unique_codes(line.metadata_index).tolist():
                mask = line.metadata_index == code
                label = line.plane.event_names[code]
                match = names.XLA_MODULE_NAME.compiled.search(label)
                candidates.append(_candidate(match.group("fn") if match else label, line, mask, None))
        if candidates:
            return candidates
    return []


def _derived_steps_candidate(profile: Profile) -> Optional[_Candidate]:
    for device in _busiest(profile.devices):
        line = device.plane.line_named(names.DERIVED_STEPS_LINE)
        if line is not None and len(line):
            return _Candidate(
                device.name,
                line.start_ns.copy(),
                line.end_ns.copy(),
                None,
                int(line.duration_ns.sum()),
                False,
                exact=True,
            )
    return None


def _kernel_period_candidate(profile: Profile) -> Optional[_Candidate]:
    """A kernel that starts each repetition of the device's kernel sequence.

    The step count c is the count reached by the names that hold 95 % of kernel time (in a run of n
    steps every kernel of the step runs about n times or a multiple); the anchor is the earliest
    kernel with exactly c occurrences spaced regularly.
    """
    devices = [d for d in _busiest(profile.devices) if len(d.kernels)]
    if not devices:
        return None
    kernels = devices[0].kernels
    counts = sums_by_code(kernels.name_index, len(kernels.names))
    if int(counts.max(initial=0)) < max(th.INFER_MIN_REPEATS, 3):
        return None  # no name repeats enough (c below is one of the counts): nothing to rank
    time_per_name = sums_by_code(kernels.name_index, len(kernels.names), kernels.duration_ns)
    present = np.flatnonzero(counts)
    order = present[np.argsort(-counts[present], kind="stable")]
    share = np.cumsum(time_per_name[order]) / max(time_per_name.sum(), 1.0)
    reach = int(np.searchsorted(share, 0.95))
    c = int(counts[order[min(reach, order.size - 1)]])
    if c < max(th.INFER_MIN_REPEATS, 3):
        return None
    names_with_c = np.flatnonzero(counts == c)
    first_start = {
        int(n): int(kernels.start_ns[np.argmax(kernels.name_index == n)]) for n in names_with_c[:64]
    }
    for n in sorted(first_start, key=first_start.get):
        starts = kernels.start_ns[kernels.name_index == n]
        periods = np.diff(starts)
        if periods.size and periods.mean() > 0 and periods.std() / periods.mean() <= th.INFER_MAX_PERIOD_CV:
            ends = starts + kernels.duration_ns[kernels.name_index == n]
            return _Candidate(kernels.names[n], starts, ends, None, int((ends - starts).sum()), False)
    return None


def _periods(candidate: _Candidate, profile: Profile) -> Tuple[np.ndarray, np.ndarray]:
    """Steps from occurrence i to occurrence i+1; the last one ends with its own work.

    The last occurrence has no successor: it ends at the later of its own end and the device work
    that follows it (on a CPU-only profile, the host work: a PyTorch loop's forward and backward after
    its DataLoader call), but no later than 1.5 median periods after its start (the profile may run on).
    """
    starts = candidate.starts
    if starts.size == 0:
        return starts, starts
    if candidate.exact:
        return candidate.starts, candidate.ends
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    last_end = int(candidate.ends[-1])
    if starts.size >= 2:
        limit = int(starts[-1] + 1.5 * float(np.median(np.diff(starts))))
        work_end = _device_activity_end_after(profile, int(starts[-1]))
        if work_end is None:
            work_end = _host_activity_end_between(profile, int(starts[-1]), limit)
        if work_end is not None:
            last_end = max(last_end, min(work_end, limit))
    ends[-1] = last_end
    keep = ends > starts
    return starts[keep], ends[keep]


def _device_activity_end_after(profile: Profile, t: int) -> Optional[int]:
    latest = None
    for device in profile.devices:
        for start, duration in (
            (device.kernels.start_ns, device.kernels.duration_ns),
            (device.memcpys.start_ns, device.memcpys.duration_ns),
        ):
            after = start >= t
            if after.any():
                end = int((start[after] + duration[after]).max())
                latest = end if latest is None else max(latest, end)
    return latest


def _host_activity_end_between(profile: Profile, t: int, limit: int) -> Optional[int]:
    """The latest end of host work that starts in [t, limit): what comes later (profiler teardown,
    an unrelated call) is not the step's."""
    latest = None
    for plane in profile.host_planes:
        for line in plane.lines:
            first, stop = np.searchsorted(line.start_ns, [t, limit]).tolist()  # (events in start order)
            if first < stop:
                end = int((line.start_ns[first:stop] + line.duration_ns[first:stop]).max())
                latest = end if latest is None else max(latest, end)
    return latest


# ---------------------------------------------------------------------------------------------------
# Warm-up and notes


def _mark_warmup(steps: Steps) -> None:
    durations = steps.duration_ns[~steps.cut_off].astype(np.float64)  # (cut-off steps are trailing)
    n = int(durations.size)
    if n < 3:
        return
    # leading steps much slower than the median of the steps after them
    for k in range(min(2, n - 2)):
        rest = np.median(durations[k + 1 :])
        if rest > 0 and durations[k] >= th.WARMUP_FACTOR * rest:
            steps.warmup[k] = True
        else:
            break


def _add_notes(steps: Steps) -> None:
    if steps.source == "none":
        steps.notes.append(
            "No step markers and no repeating pattern were found: the breakdown covers the whole "
            "profiled time as one interval. Wrap each step in tf.profiler.experimental.Trace('train', "
            "step_num=step, _r=1) (JAX: jax.profiler.StepTraceAnnotation('train', step_num=step))."
        )
        return
    if steps.source == "inferred":
        steps.notes.append(f"Steps were {steps.method}; no step markers were recorded.")
    _add_clock_notes(steps)
    early = [s for s in steps.numbers if s is not None and s <= th.WARMUP_STEP_NUM_MAX]
    if early:
        steps.notes.append(
            f"The profiled range includes step {', '.join(str(s) for s in sorted(set(early)))}: early "
            "steps trace and compile functions and grow allocators, so they are not representative."
        )
    if steps.warmup.any():
        slow = [
            f"step {steps.numbers[i] if steps.numbers[i] is not None else f'#{i}'} "
            f"({fixed(steps.duration_ns[i] / 1e6, 1)} ms)"
            for i in np.flatnonzero(steps.warmup).tolist()
        ]
        plural = len(slow) > 1
        steps.notes.append(
            f"{' and '.join(slow)} took at least {plain(th.WARMUP_FACTOR)}× the median of the later steps "
            f"(warm-up) and {'are' if plural else 'is'} left out of the averages."
        )
    if steps.count < th.FEW_STEPS:
        steps.notes.append(
            f"Only {steps.count} step{'s' if steps.count != 1 else ''} profiled; profile at least "
            f"{th.FEW_STEPS} steady steps for stable numbers."
        )


def _add_clock_notes(steps: Steps) -> None:
    """Say when the device's clock moved the steps, and which steps the capture's end cut off."""
    if steps.host_ahead_ns is None:
        return
    moved = np.abs(steps.end_ns - steps.host_end_ns) + np.abs(steps.start_ns - steps.host_start_ns)
    if bool(np.any(moved * 100.0 > th.DEVICE_CLOCK_NOTE_PCT * np.maximum(steps.duration_ns, 1))):
        ahead = steps.host_ahead_ms()
        lead = (f"; the host ran a median {fixed(ahead, 1)} ms ahead of the device"
                if ahead is not None and ahead > 0 else "")
        steps.notes.append(
            "Steps are timed on the device's clock: each ends when the device has finished the work it "
            f"launched, not when the host has queued it{lead}.")
    if steps.cut_off.any():
        cut = steps.cut_off_names()
        plural = len(cut) > 1
        steps.notes.append(
            f"The end of the capture cut off the device work of {' and '.join(cut)}: "
            f"{'they are' if plural else 'it is'} left out of the averages.")
