"""Which trace files of a PyTorch run directory are one capture: the files of the ranks of one job,
told apart from separate runs of a script by when their traces ran.

`tensorboard_trace_handler(dir)` writes `dir/<worker>.<stamp>.pt.trace.json[.gz]` once per worker
and capture, where the worker defaults to `<host>_<pid>`: a script run eight times into one
directory writes eight worker names, as eight ranks of one job would. Names cannot tell them apart;
time can: the ranks of one job trace the same steps, so their traces overlap in
time, and a re-run starts after the run before it has written its trace.

The rule:

- a file's span runs from the start of its first events, read from a bounded head of the file
  (readers/kineto/head.py), to its handler stamp, which is taken when the trace is written (the end
  of the capture). A start the stamp makes implausible (after the stamp by more than
  `clock_slack_s`, before it by more than `max_capture_s`: another clock, a relative time) is not
  believed;
- files are taken in stamp order; a file joins the capture before it when it started before that
  capture's last stamp (the spans overlap) and its worker is not in the capture yet (a worker never
  writes two files for one capture); otherwise it starts a new capture;
- a file whose start is unknown (a remote logdir, which discovery does not read; a head with no
  whole event; a file still being written) joins by name alone, the rule before spans were read: a
  worker already in the capture starts a new one;
- files without a stamp (`worker0.pt.trace.json`, hand-named exports) form one capture, `trace`;
- a capture is named after its earliest stamp, as UTC `YYYY_MM_DD_HH_MM_SS.mmm` (xprof names
  sessions the same way, so runs of both kinds sort newest first together).

Discovery runs on every live rescan, so each file's start is read once per (path, size, mtime) and
kept (StartCache).

This is what the handler's names and times mean, so it lives with the Kineto reader; discovery
(sources/) reaches it through the format's descriptor (readers/formats/kineto.py) and decides only
whether a directory may be read at all (a remote one is grouped by name alone).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tb_plugin_advisor.readers.kineto.head import first_event_ns
from tb_plugin_advisor.readers.kineto.tables import is_trace_file, split_trace_name

UNSTAMPED_CAPTURE = "trace"

CAPTURE_SPANS = {
    # A trace's first events lie at most this long before its stamp. The stamp is taken after the
    # capture (2021 corpus samples: 466 s after their first event, a long ResNet-50 capture); a
    # start further back is another clock's (a relative time whose base comes after the events).
    "max_capture_s": 24 * 3600.0,
    # A start this far after the stamp is still believed (stamp and events come from one clock in
    # one process; this only absorbs rounding of the stamp).
    "clock_slack_s": 1.0,
    # Files whose start is remembered (path, size and mtime each): a logdir of many runs.
    "cache_entries": 16384,
}


def capture_label(stamp: str) -> str:
    """A handler timestamp (ms, µs or ns since the epoch) → `YYYY_MM_DD_HH_MM_SS.mmm` (UTC)."""
    if not stamp:
        return UNSTAMPED_CAPTURE
    ms = stamp_ns(stamp) // 1_000_000
    seconds, millis = divmod(ms, 1000)
    try:
        return time.strftime("%Y_%m_%d_%H_%M_%S", time.gmtime(seconds)) + f".{millis:03d}"
    except (OverflowError, OSError, ValueError):
        return stamp


def stamp_ns(stamp: str) -> int:
    """A handler stamp in ns since the epoch: 13 digits are ms (2001–2286), 16 µs, 19 ns."""
    value, digits = int(stamp), len(stamp)
    if digits <= 13:
        return value * 1_000_000
    return value * 10 ** (19 - digits) if digits <= 19 else value // 10 ** (digits - 19)


def believable_start(start: Optional[int], stamp: int) -> Optional[int]:
    """`start` (ns) when it fits a capture written at `stamp` (CAPTURE_SPANS), else None."""
    if start is None:
        return None
    if start > stamp + CAPTURE_SPANS["clock_slack_s"] * 1e9:
        return None
    if start < stamp - CAPTURE_SPANS["max_capture_s"] * 1e9:
        return None
    return start


Capture = Tuple[str, List[Tuple[str, str]]]  # (label, [(worker, file name), …])


def group_captures(
    names: Sequence[str], starts: Optional[Mapping[str, Optional[int]]] = None
) -> List[Capture]:
    """Trace file names → [(capture label, [(worker, file name), …]), …], in time order.

    `starts`: file name → the start of its first events (ns since the epoch, None when unknown), as
    `file_starts` reads them; without it every file joins by name alone (see the module docstring)."""
    starts = starts or {}
    stamped: List[Tuple[int, str, str, str]] = []
    unstamped: List[Tuple[str, str]] = []
    for name in names:
        parts = split_trace_name(name) if is_trace_file(name) else None
        if parts is None:
            continue
        worker, stamp = parts
        if stamp:
            stamped.append((stamp_ns(stamp), worker, name, stamp))
        else:
            unstamped.append((worker, name))
    captures: List[Capture] = []
    current: Dict[str, str] = {}
    first_stamp = ""
    last_end = 0
    for end, worker, name, stamp in sorted(stamped):
        start = believable_start(starts.get(name), end)
        joins = worker not in current and (start is None or start <= last_end)
        if current and not joins:
            captures.append((capture_label(first_stamp), sorted(current.items())))
            current = {}
        if not current:
            first_stamp = stamp
        current[worker] = name
        last_end = end
    if current:
        captures.append((capture_label(first_stamp), sorted(current.items())))
    if unstamped:
        captures.append((UNSTAMPED_CAPTURE, sorted(unique_workers(unstamped))))
    return _unique_labels(captures)


def unique_workers(pairs: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """`w.pt.trace.json` and `w.pt.trace.json.gz` side by side: both kept, told apart by name."""
    seen: Dict[str, int] = {}
    result = []
    for worker, name in sorted(pairs, key=lambda p: p[1]):
        count = seen.get(worker, 0)
        seen[worker] = count + 1
        result.append((worker if count == 0 else f"{worker}~{count + 1}", name))
    return result


def _unique_labels(captures: List[Capture]) -> List[Capture]:
    seen: Dict[str, int] = {}
    result = []
    for label, files in captures:
        count = seen.get(label, 0)
        seen[label] = count + 1
        result.append((label if count == 0 else f"{label}~{count + 1}", files))
    return result


# ---------------------------------------------------------------------------------------------------
# Reading the starts, once per file version


class StartCache:
    """File (path, size, mtime) → the start of its first events: live rescans of a logdir read each
    file's head once, and again only when the file changed (a trace still being written is read
    again once it is done). Bounded (least recently used out first) and safe across threads (the
    server's discovery thread and its request handlers)."""

    def __init__(self, entries: int, read: Callable[[str], Optional[int]] = first_event_ns):
        self._entries = entries
        self._read = read
        self._known: OrderedDict[Tuple[str, int, int], Optional[int]] = OrderedDict()
        self._lock = threading.Lock()
        self.reads = 0

    def start(self, path: str, size: int, mtime_ns: Optional[int]) -> Optional[int]:
        if mtime_ns is None:  # no version to key it by: read, never kept
            self.reads += 1
            return self._read(path)
        key = (path, size, mtime_ns)
        with self._lock:
            if key in self._known:
                self._known.move_to_end(key)
                return self._known[key]
        value = self._read(path)
        with self._lock:
            self.reads += 1
            self._known[key] = value
            while len(self._known) > self._entries:
                self._known.popitem(last=False)
        return value


STARTS = StartCache(int(CAPTURE_SPANS["cache_entries"]))


def capture_start(name: str, path: str, size: int, mtime_ns: Optional[int]) -> Optional[int]:
    """When the events of the trace file `name` (at `path`) start, for group_captures; None without
    reading anything for a name with no handler stamp, which joins its capture by name alone."""
    parts = split_trace_name(name) if is_trace_file(name) else None
    if parts is None or not parts[1]:
        return None
    return STARTS.start(path, size, mtime_ns)
