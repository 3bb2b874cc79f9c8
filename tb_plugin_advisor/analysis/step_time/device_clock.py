"""Host step ranges put on the device's clock: a GPU step ends when the device has done its work.

A host step range (PyTorch's `ProfilerStep#N`, a `_r=1` TraceMe, Keras' `Profiled batch`) ends when
the host has *queued* the step. In a GPU-bound loop the host runs ahead of the device until the
launch queue fills, so the first profiled host ranges are short and the spread between steps looks
like noise (docs/ARCHITECTURE.md §5: an H200 transformer's host ranges were 38.8, 91.4, 98.9 and
98.9 ms for a 98.85 ms step). torch-tb-profiler, xprof and HolisticTraceAnalysis all time a GPU step
by its device work; this module does the same, for both formats:

- every device event (kernel, copy, memset) whose correlation id names a host call that lies inside
  a host step range belongs to that step — the call may be on any host thread (autograd's backward
  thread launches half a training step);
- step i runs from max(end of step i-1, its host start) to max(its host end, the end of its device
  work): in steady state, from one step's last device event to the next one's;
- when the device was still busy at the first step's host start with work no recorded step launched
  (the warm-up's backlog), the first step starts where that earlier work ends, and never after its
  own first device event;
- trailing steps without device work while earlier steps had some, and a last step with fewer
  device events than `CUT_OFF_SHARE` of the others' median, were cut off by the end of the capture
  (for steps marked by the loop itself, which repeat the same work; inferred steps need not).

Device events that no correlation ties to a host call (a trace without launch correlation, kernels
of a CUDA graph replayed from outside the capture) cannot be attributed; where fewer than
`DEVICE_CLOCK_MIN_SHARE` of the device events during the steps are, the steps stay on the host's
clock and the reason is given. GPU-side step annotations are not used: they miss the kernels
launched from the backward thread and often the last step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import format_pct
from tb_plugin_advisor.model import KernelTable, MemcpyTable, Profile

# Device events matched to their launches per block: each block's lookups and masks are temporaries
# of this many events, not of every device event of the profile at once (a million kernels made the
# step finder's a dozen event-long arrays the report's peak).
BLOCK_EVENTS = 1 << 16

_EventTable = Union[KernelTable, MemcpyTable]


@dataclass
class DeviceWindows:
    """Per host step (in the order given), its device-clock window and what the device did in it."""

    start_ns: np.ndarray  # int64
    end_ns: np.ndarray  # int64
    events: np.ndarray  # int64: device events the step launched
    device_end_ns: np.ndarray  # int64: end of the step's last device event (-1 without any)
    cut_off: np.ndarray  # bool: device work cut off by the end of the capture
    unattributed: int  # device events with no launch inside a host step


NO_CORRELATION = (
    "No device work could be tied to the steps (no launch correlation between the host and the device): "
    "steps are timed on the host's clock, which ends a step when the host has queued it, not when the "
    "device has run it.")


def device_windows(profile: Profile, host_start_ns: np.ndarray, host_end_ns: np.ndarray,
                   repeating: bool = True) -> Tuple[Optional[DeviceWindows], str, Optional[float]]:
    """The device-clock windows of the host steps `[host_start_ns, host_end_ns)` (sorted, disjoint),
    or None and why not ("" when the profile has no device work); and the share of the device events
    during the steps that a launch inside a step names (None without steps or device work), which
    the validity matrix reports (analysis/validity/). `repeating`: the steps are the loop's own
    (markers), so a last step with fewer device events was cut off."""
    tables = _device_tables(profile)
    if host_start_ns.size == 0 or not tables:
        return None, "", None
    launch_ids, launch_times = _launch_calls(profile)
    if launch_ids.size == 0:
        return None, NO_CORRELATION, 0.0
    tally = _Attribution(host_start_ns, host_end_ns, launch_ids, launch_times)
    for table in tables:
        tally.add(table)
    if not tally.attributed_count:
        return None, NO_CORRELATION, 0.0
    share = tally.attributed_count / max(tally.during_count, 1)
    if share < th.DEVICE_CLOCK_MIN_SHARE:
        why = (f"Only {format_pct(100.0 * share)} of the device work during the steps could be tied to a "
               "launch inside a step (the rest has no launch in the trace): steps are timed on the host's "
               "clock.")
        return None, why, share
    n = host_start_ns.size
    events, device_end, first_own = tally.events, tally.device_end, tally.first_own
    window_start = np.empty(n, dtype=np.int64)
    window_end = np.empty(n, dtype=np.int64)
    previous_end: Optional[int] = None
    for i in range(n):
        start = int(host_start_ns[i])
        if previous_end is not None:
            start = max(start, previous_end)
        elif events[0] > 0:
            backlog_end = tally.backlog_end(tables, int(first_own[0]))
            if backlog_end is not None:
                start = max(start, min(backlog_end, int(first_own[0])))
        end = max(int(host_end_ns[i]), int(device_end[i]), start)
        window_start[i], window_end[i] = start, end
        previous_end = end
    cut = _cut_off(events) if repeating else np.zeros(n, dtype=bool)
    unattributed = tally.total - tally.attributed_count
    return DeviceWindows(window_start, window_end, events, device_end, cut, unattributed), "", share


def _device_tables(profile: Profile) -> List[_EventTable]:
    """Every device's kernels and copies (tables with events), read in place."""
    return [table for device in profile.devices for table in (device.kernels, device.memcpys) if len(table)]


def _joined(parts: List[np.ndarray]) -> np.ndarray:
    """The parts end to end; a single part is itself, read only (no copy of a profile's column)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _launch_calls(profile: Profile) -> Tuple[np.ndarray, np.ndarray]:
    """Correlation ids of the host calls that carry one (launches, copies, memsets on any host
    thread), sorted, with each call's start."""
    ids: List[np.ndarray] = []
    times: List[np.ndarray] = []
    for plane in profile.host_planes:
        for line in plane.lines:
            column = line.stats.get("correlation_id")
            if column is None or column.kind != "int" or not len(line):
                continue
            ids.append(column.data.astype(np.int64, copy=False))
            times.append(line.start_ns[column.indices])
    if not ids:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    all_ids, all_times = _joined(ids), _joined(times)
    del ids, times
    if all_ids.size < 2 or bool((all_ids[1:] >= all_ids[:-1]).all()):
        return all_ids, all_times  # launched in id order, as tracers number them: already sorted
    order = np.argsort(all_ids, kind="stable")
    return all_ids[order], all_times[order]


def _unique_ids(launch_ids: np.ndarray) -> np.ndarray:
    """Per sorted launch id, whether no other host call carries it: an id that several carry
    (hand-made or merged traces) names no launch."""
    unique = np.ones(launch_ids.size, dtype=bool)
    repeated = launch_ids[1:] == launch_ids[:-1]
    unique[1:] &= ~repeated
    unique[:-1] &= ~repeated
    return unique


# A table from launch id to its position is used when it has at most this many slots per launch (ids
# are numbered from 0 by the tracers, so it is about one): a gather per device event instead of a
# binary search among a million launches, for 4 bytes a slot.
ID_SLOTS_PER_LAUNCH = 4


def _id_positions(launch_ids: np.ndarray) -> Optional[np.ndarray]:
    """For sorted launch ids, a table indexed by id of a position that id has among them (-1: none);
    None where ids are negative or too sparse for a table (ID_SLOTS_PER_LAUNCH)."""
    if launch_ids.size == 0 or int(launch_ids[0]) < 0:
        return None
    slots = int(launch_ids[-1]) + 1
    if slots > ID_SLOTS_PER_LAUNCH * launch_ids.size or slots >= 1 << 31:
        return None
    table = np.full(slots, -1, dtype=np.int32)
    table[launch_ids] = np.arange(launch_ids.size, dtype=np.int32)  # (a repeated id: any of its positions)
    return table


class _Attribution:
    """The device events put in the host steps that launched them, a table and a block of events
    (BLOCK_EVENTS) at a time: per step its events, the end of its last and the start of its first;
    how many events a step launched, and how many ran during the steps."""

    def __init__(self, host_start_ns: np.ndarray, host_end_ns: np.ndarray, launch_ids: np.ndarray,
                 launch_times: np.ndarray) -> None:
        n = host_start_ns.size
        self.host_start_ns, self.host_end_ns = host_start_ns, host_end_ns
        self.launch_ids, self.launch_times = launch_ids, launch_times  # sorted by id (_launch_calls)
        self.unique = _unique_ids(launch_ids)
        self.positions = _id_positions(launch_ids)  # launch id -> a position among the sorted ids, or None
        self.events = np.zeros(n, dtype=np.int64)
        self.device_end = np.full(n, -1, dtype=np.int64)
        self.first_own = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        self.attributed: List[np.ndarray] = []  # per table, a mask of its events a step launched
        self.attributed_count = 0
        self.during_count = 0  # events during the steps or launched in one
        self.total = 0

    def add(self, table: _EventTable) -> None:
        count = len(table)
        ids = table.correlation_id
        if ids.shape[0] != count:  # a table built without them
            ids = np.full(count, -1, dtype=np.int64)
        mask = np.empty(count, dtype=bool)
        first_step, last_step = self.host_start_ns[0], self.host_end_ns[-1]
        for begin in range(0, count, BLOCK_EVENTS):
            block = slice(begin, begin + BLOCK_EVENTS)
            starts = table.start_ns[block]
            ends = starts + table.duration_ns[block]
            step = self._step_of_block(ids[block].astype(np.int64, copy=False))
            attributed = step >= 0
            mask[block] = attributed
            self.during_count += int(((ends > first_step) & (starts < last_step) | attributed).sum())
            own = step[attributed]
            if own.size:
                self.events += np.bincount(own, minlength=self.events.size)
                np.maximum.at(self.device_end, own, ends[attributed])
                np.minimum.at(self.first_own, own, starts[attributed])
        self.attributed.append(mask)
        self.attributed_count += int(mask.sum())
        self.total += count

    def _step_of_block(self, correlations: np.ndarray) -> np.ndarray:
        """Per device event, the index of the host step whose range holds its launch (-1: none)."""
        if self.positions is not None:
            listed = (correlations >= 0) & (correlations < self.positions.size)
            at = self.positions[np.where(listed, correlations, 0)]
            found = listed & (at >= 0)
            np.maximum(at, 0, out=at)
            found &= self.unique[at]
        else:
            launch_ids = self.launch_ids
            at = np.clip(np.searchsorted(launch_ids, correlations), 0, launch_ids.size - 1)
            found = (launch_ids[at] == correlations) & (correlations >= 0) & self.unique[at]
        launched_at = self.launch_times[at]
        step = np.searchsorted(self.host_start_ns, launched_at, side="right") - 1
        inside = found & (step >= 0)
        inside[inside] = launched_at[inside] < self.host_end_ns[step[inside]]
        return np.where(inside, step, -1)

    def backlog_end(self, tables: List[_EventTable], first_own_ns: int) -> Optional[int]:
        """Where the device finished the work it was doing before the first step's own first event
        (work no recorded step launched), or None when it did none."""
        found: Optional[int] = None
        for table, attributed in zip(tables, self.attributed):
            earlier = np.flatnonzero(~attributed & (table.start_ns < first_own_ns))
            if earlier.size:
                end = int((table.start_ns[earlier] + table.duration_ns[earlier]).max())
                found = end if found is None else max(found, end)
        return found


def _cut_off(events: np.ndarray) -> np.ndarray:
    """Trailing steps whose device work the end of the capture cut off (module docstring)."""
    cut = np.zeros(events.size, dtype=bool)
    with_work = np.flatnonzero(events > 0)
    if with_work.size == 0:
        return cut
    last = int(with_work[-1])
    cut[last + 1:] = True  # no device work after steps that had some
    others = events[with_work[:-1]]
    if others.size and events[last] < th.CUT_OFF_SHARE * float(np.median(others)):
        cut[last] = True
    return cut
