"""Gathering evidence spans while the Profile is alive: the longest input waits, the longest host
synchronisations, the worst and the first steps, the slowest kernels, copies and collectives, each a
real event of the trace file in its own coordinates (span.py). A handful per kind, found by whole-array
work on the lines (no object per event), so it costs next to nothing beside the analyses.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify.kernel_view import used_kernel_names
from tb_plugin_advisor.analysis.classify.torch_names import copy_source
from tb_plugin_advisor.analysis.evidence.span import EvidenceSpan
from tb_plugin_advisor.analysis.intervals import in_windows, outermost
from tb_plugin_advisor.analysis.step_time.breakdown import is_producer_line
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.lookup import largest_first
from tb_plugin_advisor.model import Line, Plane, Profile
from tb_plugin_advisor.readers.formats.registry import spans_of

# Spans kept per kind: enough to compare a few instances, few enough to read.
PER_KIND = 3
# (plane, line, event index, duration): a candidate before it becomes a span
_Candidate = Tuple[Plane, Line, int, int]


class TraceCoordinates:
    """Where a Profile's line and time are in the file it was read from, as its format's descriptor
    says (readers/formats/: SpanCoordinates). Written ids (Kineto): the (pid, tid) the line's events
    were written with and the file's base time (the reader's `trace_ids`, `base_ns` properties);
    otherwise (XSpace) the plane and line ids, times on the profile's own (epoch) base."""

    def __init__(self, profile: Profile):
        self.spans = spans_of(profile.format)
        written = self.spans.as_written
        self.ids: Dict[Tuple[int, int], Tuple[Any, Any]] = profile.properties.get("trace_ids") or {}
        self.base_ns = int(profile.properties.get("base_ns") or 0) if written else 0

    def ids_of(self, plane: Plane, line: Line) -> Optional[Tuple[Any, Any]]:
        if not self.spans.as_written:
            return plane.id, line.id
        return self.ids.get((plane.id, line.id))

    def micros(self, ns: int) -> float:
        """A time in the trace's µs: Kineto writes µs relative to its base time. Divided as ints
        (correctly rounded): an epoch in µs with ns decimals has more digits than a float holds."""
        return (ns - self.base_ns) / 1000


def gather_spans(profile: Profile, steps: Steps, input_annotations: Collection[str] = (),
                 kernels: Optional[Mapping[str, Collection[str]]] = None) -> Dict[str, List[EvidenceSpan]]:
    """Every kind's spans (span.KINDS), longest first; a kind with nothing to show is left out.
    `input_annotations`: the names of the user's input annotations the input analysis found;
    `kernels`: kind → the kernel names the analyses named for it (the transposes, the fp32 matmuls)."""
    where = TraceCoordinates(profile)
    trace_start = profile.first_start_ns()
    # host events belong to the step the host was running, device events to the device's steps
    host_lo, host_hi = _steady_windows(steps, host=True)
    lo, hi = _steady_windows(steps, host=False)
    wanted = set(input_annotations)
    found: Dict[str, List[_Candidate]] = {
        "input_annotation": _host_events(profile, lambda texts: _named(texts, wanted), host_lo, host_hi),
        "input_wait": _host_events(profile, lambda texts: names.matching(names.HOST_INPUT, texts), host_lo,
                                   host_hi),
        "host_sync": _host_events(profile, lambda texts: names.matching(names.HOST_SYNC, texts), host_lo,
                                  host_hi),
        "worst_step": _step_events(profile, steps, worst=True),
        "early_step": _step_events(profile, steps, worst=False),
        "slowest_kernel": _device_events(profile, lo, hi, lambda texts: np.ones(len(texts), dtype=bool)),
        "longest_copy": _copy_events(profile, lo, hi),
        "pageable_copy": _copy_events(profile, lo, hi, source="pageable"),
        "collective": _device_events(
            profile, lo, hi, lambda texts: names.matching(names.DEVICE_COMMUNICATION, texts)),
    }
    for kind, kernel_names in (kernels or {}).items():
        chosen = set(kernel_names)
        found[kind] = _device_events(profile, lo, hi, lambda texts, chosen=chosen: _named(texts, chosen))
    out: Dict[str, List[EvidenceSpan]] = {}
    for kind, candidates in found.items():
        spans = [s for s in (_span(kind, c, profile, steps, where, trace_start) for c in candidates)
                 if s is not None]
        if spans:
            out[kind] = spans
    return out


def _steady_windows(steps: Steps, host: bool) -> Tuple[np.ndarray, np.ndarray]:
    """The steady steps' windows in time order: the host's ranges, or the steps' own (device) clock."""
    steady = steps.steady if steps.count else np.zeros(0, dtype=bool)
    starts, ends = (steps.host_start_ns, steps.host_end_ns) if host else (steps.start_ns, steps.end_ns)
    lo, hi = starts[steady], ends[steady]
    order = np.argsort(lo, kind="stable")
    return lo[order], hi[order]


def _in_steps(lo: np.ndarray, hi: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Events starting inside the steady steps; every event where the profile has no steps."""
    return in_windows(lo, hi, starts) if lo.size else np.ones(starts.shape[0], dtype=bool)


def _longest(candidates: List[_Candidate]) -> List[_Candidate]:
    candidates.sort(key=lambda c: (-c[3], int(c[1].start_ns[c[2]])))
    return candidates[:PER_KIND]


def _top_rows(line: Line, rows: np.ndarray) -> np.ndarray:
    """The PER_KIND longest of `rows` on one line."""
    if rows.size > PER_KIND:
        rows = rows[largest_first(line.duration_ns[rows], PER_KIND)]
    return rows


def _named(texts: Sequence[str], wanted: Collection[str]) -> np.ndarray:
    if not wanted:
        return np.zeros(len(texts), dtype=bool)
    return np.fromiter((t in wanted for t in texts), dtype=bool, count=len(texts))


def _host_events(profile: Profile, matching: Callable[[Sequence[str]], np.ndarray], lo: np.ndarray,
                 hi: np.ndarray) -> List[_Candidate]:
    """The longest outermost host events whose names `matching` picks (input waits, syncs) in the
    steps; `matching` maps a plane's names to a mask, once per plane, never per event."""
    out: List[_Candidate] = []
    for plane in profile.host_planes:
        wanted = np.append(matching(plane.event_names), False)
        if not wanted.any():
            continue
        for line in plane.lines:
            if len(line) == 0 or is_producer_line(line):
                continue
            mask = wanted[line.metadata_index]
            if not mask.any():
                continue
            rows = np.flatnonzero(mask)
            rows = rows[outermost(line.start_ns[rows], line.end_ns[rows])]
            rows = rows[_in_steps(lo, hi, line.start_ns[rows])]
            out += [(plane, line, r, int(line.duration_ns[r])) for r in _top_rows(line, rows).tolist()]
    return _longest(out)


def _step_events(profile: Profile, steps: Steps, worst: bool) -> List[_Candidate]:
    """The step markers' own events: the longest steady steps, or the first (warm-up) steps."""
    if not steps.count or steps.source in ("inferred", "none"):
        return []
    if worst:
        order = [i for i in np.argsort(-steps.duration_ns, kind="stable").tolist() if not steps.warmup[i]]
    else:  # the warm-up steps, else the low-numbered ones the warm-up rule names
        low = [n is not None and n <= th.WARMUP_STEP_NUM_MAX for n in steps.numbers]
        early = steps.warmup | np.array(low, dtype=bool)
        order = [i for i in np.argsort(steps.start_ns, kind="stable").tolist() if early[i]]
    out: List[_Candidate] = []
    for i in order:
        found = _event_at(profile, int(steps.host_start_ns[i]), int(steps.host_end_ns[i]))
        if found is not None:
            out.append(found)
        if len(out) == PER_KIND:
            break
    return out


def _event_at(profile: Profile, start: int, end: int) -> Optional[_Candidate]:
    """The outermost host event that starts at `start` and ends at `end` (a step marker's event)."""
    for marker in profile.step_markers:
        if marker.start_ns != start or marker.end_ns != end:
            continue
        for plane in profile.host_planes:
            for line in plane.lines:
                if line.label != marker.line_name and line.name != marker.line_name:
                    continue
                rows = np.flatnonzero(line.start_ns == start)
                rows = rows[line.end_ns[rows] == end]
                if rows.size:
                    return plane, line, int(rows[0]), end - start
    return None


def _device_events(profile: Profile, lo: np.ndarray, hi: np.ndarray,
                   matching: Callable[[Sequence[str]], np.ndarray]) -> List[_Candidate]:
    """The longest kernels of every device whose names `matching` picks (once per device), in the steps.
    `matching` reads the names the kernels use, the list (and name batch) the kernel view read."""
    out: List[_Candidate] = []
    for device in profile.devices:
        table = device.kernels
        if len(table) == 0:
            continue
        used, listed = used_kernel_names(device)
        picked_used = matching(listed)
        if not picked_used.any():
            continue
        picked = np.zeros(len(table.names), dtype=bool)
        picked[used[picked_used]] = True
        rows = np.flatnonzero(picked[table.name_index] & _in_steps(lo, hi, table.start_ns))
        out += _longest_rows(device, table, rows)
    return _longest(out)


def _copy_events(profile: Profile, lo: np.ndarray, hi: np.ndarray,
                 source: Optional[str] = None) -> List[_Candidate]:
    """The longest copies of every device in the steps; with `source`, only host-to-device copies
    from that host memory ("pageable": what pin_memory is about), read off each copy's event name."""
    out: List[_Candidate] = []
    for device in profile.devices:
        table = device.memcpys
        if len(table) == 0:
            continue
        picked = _in_steps(lo, hi, table.start_ns)
        if source is not None:
            picked &= _copies_from(device, table, source)
        out += _longest_rows(device, table, np.flatnonzero(picked))
    return _longest(out)


def _copies_from(device, table, source: str) -> np.ndarray:
    """Which copies of a device's table are host-to-device copies from `source` memory: the name of
    each copy's event, judged once per distinct name of each line."""
    picked = np.zeros(len(table), dtype=bool)
    for line_index in np.unique(table.line_index).tolist():
        line = device.plane.lines[int(line_index)]
        rows = np.flatnonzero(table.line_index == line_index)
        on_line = line.name_mask(lambda name: copy_source(name) == source)
        if not on_line.any():
            continue
        at = np.searchsorted(line.start_ns, table.start_ns[rows])  # each copy's event on its line
        at = np.minimum(at, len(line) - 1)
        picked[rows] = on_line[at] & (line.start_ns[at] == table.start_ns[rows])
    return picked


def _longest_rows(device, table, rows: np.ndarray) -> List[_Candidate]:
    """The PER_KIND longest of `rows` of a device table (kernels or copies; ties: the first in time),
    each found back as an event on its line."""
    if rows.size > PER_KIND:
        rows = rows[largest_first(table.duration_ns[rows], PER_KIND)]
    out: List[_Candidate] = []
    for r in rows.tolist():
        line = device.plane.lines[int(table.line_index[r])]
        index = _row_on_line(line, int(table.start_ns[r]), int(table.duration_ns[r]))
        if index is not None:
            out.append((device.plane, line, index, int(table.duration_ns[r])))
    return out


def _row_on_line(line: Line, start: int, duration: int) -> Optional[int]:
    """The line's event with this start and duration (a device table's row back on its line)."""
    first = int(np.searchsorted(line.start_ns, start, side="left"))
    last = int(np.searchsorted(line.start_ns, start, side="right"))
    for i in range(first, last):
        if int(line.duration_ns[i]) == duration:
            return i
    return None


def _span(kind: str, candidate: _Candidate, profile: Profile, steps: Steps,
          where: TraceCoordinates, trace_start: int) -> Optional[EvidenceSpan]:
    plane, line, index, duration = candidate
    ids = where.ids_of(plane, line)
    if ids is None:  # a line the reader did not say the file's ids of
        return None
    if _was_clipped(line, index):  # its duration is no longer the file's: it can be no span
        return None
    start = int(line.start_ns[index])
    host = plane.kind == "host"
    step_index = _step_index(steps, start, host)
    step_starts = steps.host_start_ns if host else steps.start_ns
    return EvidenceSpan(
        kind=kind,
        host=profile.host,
        pid=ids[0],
        tid=ids[1],
        ts_us=where.micros(start),
        dur_us=duration / 1000,
        start_ns=start - where.base_ns,
        duration_ns=duration,
        name=line.name_of(index),
        step=None if step_index is None else _step_number(steps, step_index),
        thread=line.label,
        format=where.spans.label,
        step_offset_ms=None if step_index is None else (start - int(step_starts[step_index])) / 1e6,
        trace_offset_ms=(start - trace_start) / 1e6,
    )


def _was_clipped(line: Line, index: int) -> bool:
    """Did the reader move this event's end to make its line nest (Line.clipped)?"""
    at = int(np.searchsorted(line.clipped, index))
    return at < line.clipped.size and int(line.clipped[at]) == index


def _step_index(steps: Steps, start: int, host: bool) -> Optional[int]:
    """The index of the step a span starts in: the host's range for a host event, else the step's own."""
    starts, ends = (steps.host_start_ns, steps.host_end_ns) if host else (steps.start_ns, steps.end_ns)
    inside = np.flatnonzero((starts <= start) & (start < ends))
    return int(inside[0]) if inside.size else None


def _step_number(steps: Steps, index: int) -> int:
    """The step's own number (the marker's), else its index."""
    number = steps.numbers[index]
    return int(number) if number is not None else index
