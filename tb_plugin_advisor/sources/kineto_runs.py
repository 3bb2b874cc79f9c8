"""PyTorch profiler runs in a logdir: directories that directly hold `*.pt.trace.json[.gz]` files.

`torch.profiler.tensorboard_trace_handler(dir)` writes `dir/<worker>.<timestamp>.pt.trace.json[.gz]`
once per worker (host or rank) and per capture. A directory is a run directory; its captures are
the sessions the Advisor lists, one per capture:

- files are taken in timestamp order and a capture collects one file per worker; the next file of a
  worker already in the capture starts a new capture (ranks of one capture write their files within
  moments of each other, and a worker never writes two files for one capture);
- the capture is named after its first file's timestamp, as UTC `YYYY_MM_DD_HH_MM_SS.mmm` (xprof
  names sessions the same way, so runs of both kinds sort newest first together); the run name is
  `<directory relative to the logdir>/<capture>`, or `<capture>` at the logdir's root;
- files without a timestamp (`worker0.pt.trace.json`, hand-named exports) form one capture, `trace`.
"""

from __future__ import annotations

import time
from typing import Dict, List, Optional, Sequence, Tuple

from tb_plugin_advisor.readers.kineto_tables import is_trace_file, split_trace_name

KINETO_FORMAT = "kineto"
UNSTAMPED_CAPTURE = "trace"


def has_kineto_traces(names: Sequence[str]) -> bool:
    return any(is_trace_file(name) for name in names)


def capture_label(stamp: str) -> str:
    """A handler timestamp (ms, µs or ns since the epoch) → `YYYY_MM_DD_HH_MM_SS.mmm` (UTC)."""
    if not stamp:
        return UNSTAMPED_CAPTURE
    value = int(stamp)
    digits = len(stamp)
    ms = value // 10 ** max(0, digits - 13)  # 13 digits = ms since the epoch (2001–2286)
    seconds, millis = divmod(ms, 1000)
    try:
        return time.strftime("%Y_%m_%d_%H_%M_%S", time.gmtime(seconds)) + f".{millis:03d}"
    except (OverflowError, OSError, ValueError):
        return stamp


def group_captures(names: Sequence[str]) -> List[Tuple[str, List[Tuple[str, str]]]]:
    """Trace file names → [(capture label, [(worker, file name), …]), …], in time order."""
    stamped: List[Tuple[int, str, str]] = []
    unstamped: List[Tuple[str, str]] = []
    for name in names:
        parts = split_trace_name(name) if is_trace_file(name) else None
        if parts is None:
            continue
        worker, stamp = parts
        if stamp:
            stamped.append((_as_ms(stamp), worker, name))
        else:
            unstamped.append((worker, name))
    captures: List[Tuple[str, List[Tuple[str, str]]]] = []
    current: Dict[str, str] = {}
    first_stamp: Optional[str] = None
    for _, worker, name in sorted(stamped):
        if worker in current:
            captures.append((capture_label(first_stamp or ""), sorted(current.items())))
            current = {}
        if not current:
            first_stamp = split_trace_name(name)[1]
        current[worker] = name
    if current:
        captures.append((capture_label(first_stamp or ""), sorted(current.items())))
    if unstamped:
        captures.append((UNSTAMPED_CAPTURE, sorted(_unique_workers(unstamped))))
    return _unique_labels(captures)


def _as_ms(stamp: str) -> int:
    return int(stamp) // 10 ** max(0, len(stamp) - 13)


def _unique_workers(pairs: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """`w.pt.trace.json` and `w.pt.trace.json.gz` side by side: both kept, told apart by name."""
    seen: Dict[str, int] = {}
    result = []
    for worker, name in sorted(pairs, key=lambda p: p[1]):
        count = seen.get(worker, 0)
        seen[worker] = count + 1
        result.append((worker if count == 0 else f"{worker}~{count + 1}", name))
    return result


def _unique_labels(captures):
    seen: Dict[str, int] = {}
    result = []
    for label, files in captures:
        count = seen.get(label, 0)
        seen[label] = count + 1
        result.append((label if count == 0 else f"{label}~{count + 1}", files))
    return result
