"""How a PyTorch DataLoader feeds the step: which iterator (num_workers 0 or worker processes), how
long the loop waits in next() and what runs inside it in the training process (collate, dataset
ops, Python no op covers), and how each batch reaches the GPU (pinned or pageable memory, copies
that block the host or overlap the step).

Kineto records what is needed without extra profiler options, from 2021 to today (checked on the
corpus ResNet-50 num_workers 0/4 traces and the H200 captures): `enumerate(DataLoader)#<iterator
class>.__next__` ranges on the loop's thread; device copies named `Memcpy HtoD (<source> ->
Device)`, where the source says Pinned or Pageable; the runtime call that issued each copy (same
correlation id) and the `aten::copy_` around it, whose `Concrete Inputs` (record_shapes=True,
torch ≥ 2.1) hold `non_blocking`. PyTorch's copy_ with non_blocking=False is cudaMemcpyAsync
followed by cudaStreamSynchronize, so older traces still show whether the host waited. A pageable
source makes even a non_blocking copy wait on the host while the driver stages it: requested and
effective behaviour are reported apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify.torch_names import (
    ITERATOR_WORKERS,
    TORCH_NAMES,
    copy_source,
    dataloader_iterator,
)
from tb_plugin_advisor.analysis.intervals import intersect, outermost, total, union, union_all
from tb_plugin_advisor.analysis.step_time.windows import StepWindows
from tb_plugin_advisor.formatting import fixed, format_bytes, format_ms, format_pct
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.model import Line, Profile

# Host calls after which the host has waited for the copy (HOST_SYNC entries of event_names.py).
_SYNC_IDS = ("cuda_sync", "hip_sync")
_SYNC_COPY_ID = "sync_memcpy"  # cudaMemcpy / hipMemcpy without Async: the call itself waits
LONGEST_WAITS = 3
TOP_OPS = 5
MIN_SHOWN_NS = 1_000  # ops inside next() under a microsecond in all are left out of the list


@dataclass
class CopyStats:
    """Host-to-device copies in the steady steps, and how the host waited for them."""

    copies: int = 0
    pinned: int = 0
    pageable: int = 0
    bytes: int = 0
    device_ns: int = 0
    host_blocked_ns: int = 0  # in the copy calls and the synchronisations right after them
    asked_non_blocking: int = 0  # copy_ ops whose non_blocking input is True
    asked_blocking: int = 0  # … is False
    waited: int = 0  # a synchronous copy call, or a sync right after the call
    staged: int = 0  # asynchronous call from pageable memory: the call returns once staged
    overlapped: int = 0  # asynchronous call from pinned memory, no sync: the copy overlaps the step
    without_call: int = 0  # no host call with the copy's correlation id in the trace

    @property
    def non_blocking(self) -> Optional[bool]:
        """What the code asked for: from copy_'s inputs where recorded, else from the runtime calls
        (a sync right after every copy is non_blocking=False)."""
        if self.asked_non_blocking or self.asked_blocking:
            if self.asked_non_blocking and self.asked_blocking:
                return None
            return bool(self.asked_non_blocking)
        issued = self.waited + self.staged + self.overlapped
        if not issued:
            return None
        if self.waited == issued:
            return False
        return True if not self.waited else None

    @property
    def non_blocking_source(self) -> str:
        if self.asked_non_blocking or self.asked_blocking:
            return "concrete_inputs"
        return "runtime_calls" if self.waited + self.staged + self.overlapped else ""

    @property
    def pinned_memory(self) -> Optional[bool]:
        if self.pinned and not self.pageable:
            return True
        if self.pageable and not self.pinned:
            return False
        return None  # none seen, or both kinds


@dataclass
class DataLoaderInput:
    """The DataLoader panel of one host's report (per steady step unless named otherwise)."""

    iterator: str  # the iterator class the loop waits in longest
    workers: str  # none | processes | unknown
    steps: int
    step_ns: float  # mean steady step
    wait_ns: int  # in next() on the host, summed over the host ranges of the steady steps
    calls: int
    exposed_ns: Optional[int] = None  # of wait_ns, while no device ran anything (None: no device)
    longest: List[Tuple[Optional[int], int]] = field(default_factory=list)  # (step number, ns)
    inside_ns: Dict[str, int] = field(default_factory=dict)  # collate | dataset | python → summed ns
    top_ops: List[Tuple[str, int]] = field(default_factory=list)  # outermost ops inside next()
    copies: CopyStats = field(default_factory=CopyStats)
    pin_ops: int = 0
    host_allocs: int = 0
    host_alloc_ns: int = 0

    def per_step_ms(self, ns: float) -> float:
        return ns / 1e6 / max(self.steps, 1)

    @property
    def wait_pct(self) -> float:
        return 100.0 * self.wait_ns / (self.step_ns * self.steps) if self.step_ns > 0 else 0.0

    @property
    def exposed_pct(self) -> float:
        exposed = self.exposed_ns or 0
        return 100.0 * exposed / (self.step_ns * self.steps) if self.step_ns > 0 else 0.0

    def to_json(self) -> Dict[str, Any]:
        c = self.copies
        ms = self.per_step_ms
        return {
            "iterator": self.iterator,
            "workers": self.workers,
            "num_workers": 0 if self.workers == "none" else None,
            "wait_ms_per_step": _r(ms(self.wait_ns)),
            "wait_pct": _r(self.wait_pct, 2),
            # the part of the host's wait in next() during which the devices were idle: what the
            # step actually lost (the rest overlapped device work queued earlier)
            "exposed_wait_ms_per_step": _r(ms(self.exposed_ns)) if self.exposed_ns is not None else None,
            "exposed_wait_pct": _r(self.exposed_pct, 2) if self.exposed_ns is not None else None,
            "calls_per_step": _r(self.calls / max(self.steps, 1), 3),
            "longest_waits": [{"step": step, "ms": _r(ns / 1e6)} for step, ns in self.longest],
            "main_process_ms_per_step": {k: _r(ms(v)) for k, v in self.inside_ns.items()},
            "main_process_ops": [{"name": n, "ms_per_step": _r(ms(v))} for n, v in self.top_ops],
            "pinned_memory": c.pinned_memory,
            "non_blocking": c.non_blocking,
            "non_blocking_source": c.non_blocking_source,
            "h2d_copies": {
                "per_step": _r(c.copies / max(self.steps, 1), 3),
                "pinned": c.pinned,
                "pageable": c.pageable,
                "bytes_per_step": _r(c.bytes / max(self.steps, 1), 1),
                "device_ms_per_step": _r(ms(c.device_ns)),
                "host_blocked_ms_per_step": _r(ms(c.host_blocked_ns)),
                "asked_non_blocking": c.asked_non_blocking,
                "asked_blocking": c.asked_blocking,
                "waited": c.waited,
                "staged": c.staged,
                "overlapped": c.overlapped,
            },
            "pin_memory_ops_per_step": _r(self.pin_ops / max(self.steps, 1), 3),
            "host_alloc": {"calls": self.host_allocs, "ms": _r(self.host_alloc_ns / 1e6)},
        }

    def evidence(self) -> List[str]:
        """The panel in sentences (the text, Markdown and HTML exports print these)."""
        ms = self.per_step_ms
        out = [_iterator_sentence(self.iterator, self.workers)]
        waits = ", ".join(
            f"{'step ' + str(step) if step is not None else 'a step'} {format_ms(ns / 1e6)}"
            for step, ns in self.longest
        )
        out.append(
            f"The loop waits {format_ms(ms(self.wait_ns))} per step in next() on the host "
            f"({format_pct(self.wait_pct)} of the step, {fixed(self.calls / max(self.steps, 1), 1)} calls "
            "per step)" + (f"; longest waits: {waits}." if waits else ".")
        )
        if self.exposed_ns is not None and self.exposed_ns < self.wait_ns:
            out.append(
                f"Of that wait, {format_ms(ms(self.exposed_ns))} per step ({format_pct(self.exposed_pct)} of "
                "the step) left the device idle; the rest overlapped device work queued before it.")
        inside = self.inside_ns
        if self.workers == "none" and sum(inside.values()) > 0:
            ops = ", ".join(f"{name} {format_ms(ms(ns))}" for name, ns in self.top_ops[:3])
            collate, dataset, python = (format_ms(ms(inside[k])) for k in ("collate", "dataset", "python"))
            out.append(
                f"Inside next(), in the training process, per step: collate {collate}, dataset ops (fetch "
                f"and transforms) {dataset}, the dataset's own Python code (no op recorded: numpy, PIL, "
                f"file reads) {python}" + (f"; largest ops: {ops}." if ops else ".")
            )
        out += _copy_sentences(self)
        return out


def analyze_dataloader(profile: Profile, windows: StepWindows, device_windows: Optional[StepWindows] = None
                       ) -> Optional[DataLoaderInput]:
    """None when no DataLoader next() runs in the steady steps (or the profile is not a PyTorch one).
    `windows`: the host's ranges of the steady steps (next() is a host call); `device_windows`: the
    steps' own windows, where the device copies are counted (default: `windows`)."""
    device_windows = device_windows if device_windows is not None else windows
    if profile.framework != "pytorch" or not windows.count:
        return None
    waits: Dict[str, int] = {}
    found: List[Tuple[Line, np.ndarray]] = []
    for plane in profile.host_planes:
        iterators = [dataloader_iterator(n) for n in plane.event_names]
        if not any(iterators):
            continue
        is_next = np.array([bool(i) for i in iterators] + [False])
        for line in plane.lines:
            rows = windows.rows_inside(line, np.flatnonzero(is_next[line.metadata_index]))
            if not rows.size:
                continue
            rows = rows[outermost(line.start_ns[rows], line.end_ns[rows])]
            found.append((line, rows))
            for meta, ns in zip(line.metadata_index[rows].tolist(), line.duration_ns[rows].tolist()):
                waits[iterators[meta]] = waits.get(iterators[meta], 0) + int(ns)
    if not found:
        return None
    iterator = max(sorted(waits), key=lambda k: waits[k])
    result = DataLoaderInput(
        iterator=iterator,
        workers=ITERATOR_WORKERS.get(iterator, "unknown"),
        steps=windows.count,
        step_ns=windows.mean_ns,
        wait_ns=sum(waits.values()),
        calls=sum(int(rows.size) for _, rows in found),
    )
    result.longest = _longest(found, windows)
    result.inside_ns, result.top_ops = _inside_next(found)
    result.exposed_ns = _exposed(profile, found)
    result.copies = _copies(profile, device_windows)
    result.pin_ops, result.host_allocs, result.host_alloc_ns = _pinning(profile, windows)
    return result


def _exposed(profile: Profile, found: List[Tuple[Line, np.ndarray]]) -> Optional[int]:
    """How much of the next() calls ran while no device did anything (None: no device activity)."""
    busy = union_all(
        (table.start_ns, table.start_ns + table.duration_ns)
        for device in profile.devices for table in (device.kernels, device.memcpys) if len(table))
    if busy[0].size == 0:
        return None
    waits = union(np.concatenate([line.start_ns[rows] for line, rows in found]),
                  np.concatenate([line.end_ns[rows] for line, rows in found]))
    return total(waits) - total(intersect(waits, busy))


def _longest(found: List[Tuple[Line, np.ndarray]], windows: StepWindows) -> List[Tuple[Optional[int], int]]:
    calls = [(int(line.duration_ns[i]), int(line.start_ns[i])) for line, rows in found for i in rows.tolist()]
    calls.sort(key=lambda c: (-c[0], c[1]))
    return [(windows.step_number_at(start), ns) for ns, start in calls[:LONGEST_WAITS]]


def _inside_next(found: List[Tuple[Line, np.ndarray]]) -> Tuple[Dict[str, int], List[Tuple[str, int]]]:
    """The outermost events inside each next() on its own thread: collate ops, other ops (the
    dataset's fetch and transforms), and the time no op covers (Python: the dataset's own code)."""
    inside = {"collate": 0, "dataset": 0, "python": 0}
    ops: Dict[str, int] = {}
    for line, rows in found:
        table = line.plane.event_names
        for i in rows.tolist():
            start, end = int(line.start_ns[i]), int(line.end_ns[i])
            first = int(np.searchsorted(line.start_ns, start, side="left"))
            last = int(np.searchsorted(line.start_ns, end, side="left"))
            kids = np.arange(first, last)
            kids = kids[(kids != i) & (line.end_ns[kids] <= end)]
            kids = kids[outermost(line.start_ns[kids], line.end_ns[kids])]
            covered = 0
            for meta, ns in zip(line.metadata_index[kids].tolist(), line.duration_ns[kids].tolist()):
                name = table[meta]
                inside["collate" if TORCH_NAMES["collate"].match(name) else "dataset"] += int(ns)
                ops[name] = ops.get(name, 0) + int(ns)
                covered += int(ns)
            inside["python"] += max(end - start - covered, 0)
    shown = {name: ns for name, ns in ops.items() if ns >= MIN_SHOWN_NS}
    ranked = sorted(shown.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_OPS]
    return inside, ranked


def _copies(profile: Profile, windows: StepWindows) -> CopyStats:
    stats = CopyStats()
    wanted: Dict[int, Tuple[str, int]] = {}  # correlation id → (source, device ns)
    for device in profile.devices:
        table = device.plane.event_names
        sources = [copy_source(n) for n in table]
        if not any(sources):
            continue
        is_copy = np.array([bool(s) for s in sources] + [False])
        for line in device.plane.lines:
            rows = windows.rows_inside(line, np.flatnonzero(is_copy[line.metadata_index]))
            if not rows.size:
                continue
            sizes = line.stats.get("bytes")
            correlation = line.stats.get("correlation_id")
            for i in rows.tolist():
                source = sources[int(line.metadata_index[i])]
                stats.copies += 1
                stats.pinned += source == "pinned"
                stats.pageable += source == "pageable"
                size = sizes.get(i) if sizes is not None and sizes.kind == "int" else None
                stats.bytes += max(int(size), 0) if size is not None else 0
                stats.device_ns += int(line.duration_ns[i])
                corr = correlation.get(i) if correlation is not None and correlation.kind == "int" else None
                if corr is not None:
                    wanted[int(corr)] = (source, int(line.duration_ns[i]))
    issued = _issue_calls(profile, wanted, stats)
    stats.without_call = stats.copies - issued
    return stats


def _issue_calls(profile: Profile, wanted: Dict[int, Tuple[str, int]], stats: CopyStats) -> int:
    """Find the host call of each copy (same correlation id) and how the host waited for it."""
    if not wanted:
        return 0
    keys = np.array(sorted(wanted), dtype=np.int64)
    issued = 0
    for plane in profile.host_planes:
        sync = _pattern_mask(names.HOST_SYNC, _SYNC_IDS, plane.event_names)
        sync_copy = _pattern_mask(names.HOST_SYNC, (_SYNC_COPY_ID,), plane.event_names)
        copy_op = np.array([bool(TORCH_NAMES["copy_op"].match(n)) for n in plane.event_names] + [False])
        for line in plane.lines:
            column = line.stats.get("correlation_id")
            if column is None or column.kind != "int" or not len(line):
                continue
            hit = np.isin(column.data, keys)
            if not hit.any():
                continue
            rows = column.indices[hit]
            syncs = np.flatnonzero(sync[line.metadata_index])
            ops = np.flatnonzero(copy_op[line.metadata_index])
            for i, corr in zip(rows.tolist(), column.data[hit].tolist()):
                source, _ = wanted[int(corr)]
                issued += 1
                _one_call(line, int(i), source, bool(sync_copy[line.metadata_index[i]]), syncs, ops, stats)
    return issued


def _one_call(line: Line, i: int, source: str, synchronous_api: bool, syncs: np.ndarray, ops: np.ndarray,
              stats: CopyStats) -> None:
    start, end = int(line.start_ns[i]), int(line.end_ns[i])
    op = _enclosing(line, ops, start, end)
    asked = _non_blocking_input(line, op) if op is not None else None
    if asked is True:
        stats.asked_non_blocking += 1
    elif asked is False:
        stats.asked_blocking += 1
    limit = int(line.end_ns[op]) if op is not None else end + th.COPY_SYNC_GAP_NS
    blocked = end - start
    at = int(np.searchsorted(line.start_ns[syncs], end, side="left")) if syncs.size else 0
    synced = syncs.size > at and int(line.start_ns[syncs[at]]) <= limit
    if synced:
        blocked += int(line.duration_ns[syncs[at]])
    stats.host_blocked_ns += blocked
    if synchronous_api or synced:
        stats.waited += 1
    elif source == "pageable":
        stats.staged += 1
    else:
        stats.overlapped += 1


def _enclosing(line: Line, ops: np.ndarray, start: int, end: int) -> Optional[int]:
    """The innermost copy_ op on the line that holds [start, end], if any (the latest-starting ones
    are looked at: ops on one thread nest, so the innermost holder starts last)."""
    k = int(np.searchsorted(line.start_ns[ops], start, side="right")) - 1 if ops.size else -1
    for op in ops[max(k - 3, 0): k + 1][::-1].tolist():
        if int(line.end_ns[op]) >= end:
            return int(op)
    return None


def _non_blocking_input(line: Line, op: int) -> Optional[bool]:
    """copy_'s third input as recorded in `Concrete Inputs` ("True"/"False"), None when absent."""
    text = line.stat_value("concrete_inputs", op)
    if not isinstance(text, str):
        return None
    try:
        values = json.loads(text)
    except ValueError:
        return None
    if not isinstance(values, list) or len(values) < 3:
        return None
    flag = str(values[2]).strip().lower()
    return {"true": True, "1": True, "false": False, "0": False}.get(flag)


def _pattern_mask(table: Sequence[names.NamePattern], ids: Sequence[str], texts: List[str]) -> np.ndarray:
    chosen = tuple(p for p in table if p.id in ids)
    return np.append(names.matching(chosen, texts), False)


def _pinning(profile: Profile, windows: StepWindows) -> Tuple[int, int, int]:
    """Pin-memory ops and page-locked allocations in the steady steps (any thread)."""
    pins = allocs = alloc_ns = 0
    for plane in profile.host_planes:
        pin = np.array([bool(TORCH_NAMES["pin_op"].match(n)) for n in plane.event_names] + [False])
        alloc = np.array([bool(TORCH_NAMES["host_alloc"].match(n)) for n in plane.event_names] + [False])
        if not (pin.any() or alloc.any()):
            continue
        for line in plane.lines:
            pins += int(windows.rows_inside(line, np.flatnonzero(pin[line.metadata_index])).size)
            rows = windows.rows_inside(line, np.flatnonzero(alloc[line.metadata_index]))
            allocs += int(rows.size)
            alloc_ns += int(line.duration_ns[rows].sum())
    return pins, allocs, alloc_ns


def _iterator_sentence(iterator: str, workers: str) -> str:
    if workers == "none":
        return (f"DataLoader iterator: {iterator} (num_workers=0): every batch is loaded, transformed and "
                "collated in the training process, while the step waits.")
    if workers == "processes":
        return (f"DataLoader iterator: {iterator} (num_workers > 0): worker processes prepare the batches; "
                "the trace does not record how many.")
    return f"DataLoader iterator: {iterator} (not a torch.utils.data iterator this report knows)."


def _copy_sentences(d: DataLoaderInput) -> List[str]:
    c = d.copies
    if not c.copies:
        return ["No host-to-device copies in the steady steps (a CPU-only run, or batches already on the "
                "device)."]
    per_step = c.copies / max(d.steps, 1)
    memory = {
        True: "all from pinned (page-locked) memory",
        False: "all from pageable memory: pin_memory is off, each copy is staged through a bounce buffer",
        None: f"{c.pinned} from pinned and {c.pageable} from pageable memory",
    }[c.pinned_memory]
    size = format_bytes(c.bytes / max(d.steps, 1))
    out = [
        f"Host-to-device copies: {fixed(per_step, 1)} per step, {size} per step, "
        f"{format_ms(d.per_step_ms(c.device_ns))} of GPU time per step, {memory}."
    ]
    seen = [text for count, text in (
        (d.pin_ops, f"{d.pin_ops} pin_memory op{'s' if d.pin_ops != 1 else ''}"),
        (d.host_allocs, f"{d.host_allocs} page-locked allocation{'s' if d.host_allocs != 1 else ''} "
                        f"({format_ms(d.host_alloc_ns / 1e6)} in all)"),
    ) if count]
    if seen:
        out.append(f"Pinning in the steady steps: {' and '.join(seen)}.")
    blocked = format_ms(d.per_step_ms(c.host_blocked_ns))
    asked = c.non_blocking
    if c.non_blocking_source == "concrete_inputs":
        value = {True: "non_blocking=True", False: "non_blocking=False", None: "a mix of non_blocking values"}
        said = f"The copies ask for {value[asked]} (aten::copy_ inputs)"
    elif asked is False:
        said = "Each copy is followed by a stream synchronisation (non_blocking=False)"
    elif asked is True:
        said = "No synchronisation follows the copies (non_blocking=True)"
    else:
        said = "Some copies are followed by a synchronisation and some are not"
    if c.waited:
        how = (f": the host waits for {c.waited} of {c.copies} copies to finish ({blocked} per step in the "
               "copy calls and syncs).")
    elif c.staged:
        how = (", but from pageable memory the host still waits while the driver stages each copy, so "
               f"non_blocking has no effect ({blocked} per step in the copy calls).")
    else:
        how = f" and, from pinned memory, the copies overlap the step ({blocked} per step in the copy calls)."
    out.append(said + how)
    return out
