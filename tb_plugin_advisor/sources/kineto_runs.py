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
import zlib
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tb_plugin_advisor.readers.kineto.tables import (
    JSON_SUFFIXES,
    is_trace_file,
    split_trace_name,
    worker_from_filename,
)
from tb_plugin_advisor.sources.session import EVENTS_TAG, KINETO_FORMAT, HostFile, RunDir, Session
from tb_plugin_advisor.sources.walk import join

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


# ---------------------------------------------------------------------------------------------------
# Traces outside the handler's naming (prof.export_chrome_trace writes any name)

SNIFF_BYTES = 4096  # Kineto writes `"schemaVersion"` first; 4 KiB of head is plenty


def is_json_name(name: str) -> bool:
    return name.endswith(JSON_SUFFIXES) and not is_trace_file(name)


def looks_like_kineto(path: str) -> bool:
    """Whether a local `.json[.gz]` file starts like a Kineto trace (reads at most 4 KiB of it)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
        if head[:2] == b"\x1f\x8b":
            head = zlib.decompressobj(wbits=31).decompress(head, SNIFF_BYTES)
    except (OSError, zlib.error):
        return False
    return head.lstrip()[:1] == b"{" and b'"schemaVersion"' in head


def handler_name(name: str, mtime_ns: Optional[int]) -> str:
    """The name tensorboard_trace_handler would have given a file: `<stem>.<ms>.pt.trace.json[.gz]`."""
    gz = name.endswith(".gz")
    stem = name[: -len(".json.gz")] if gz else name[: -len(".json")] if name.endswith(".json") else name
    stamp = (mtime_ns or int(time.time() * 1e9)) // 1_000_000
    return f"{stem}.{stamp}.pt.trace.json{'.gz' if gz else ''}"


# ---------------------------------------------------------------------------------------------------
# Discovery's hooks: the sessions and run directories of PyTorch runs, in session.py's types.


def kineto_sessions(parts: Tuple[str, ...], path: str, entries: Sequence[Any]) -> List[Session]:
    """One Session per capture of a PyTorch run directory (`entries`: discovery's listing of it)."""

    by_name = {e.name: e for e in entries if not e.is_dir}
    rel = "/".join(parts)
    files = tuple(sorted(by_name))
    sessions = []
    for label, workers in group_captures(files):
        hosts = tuple(
            HostFile(worker, join(path, name), by_name[name].size, by_name[name].mtime_ns)
            for worker, name in workers
        )
        run = f"{rel}/{label}" if rel else label
        session = Session(run, path, path, rel, label, KINETO_FORMAT, hosts, files, framework="pytorch")
        sessions.append(session)
    return sessions


def loose_kineto_traces(parts: Tuple[str, ...], path: str, entries: Sequence[Any]) -> List[Session]:
    """`prof.export_chrome_trace` output under another name (layout "loose"): doctor says how to fix it.
    Only local files are sniffed (4 KiB each); remote logdirs are not read for this."""

    found = [
        e for e in entries
        if not e.is_dir and is_json_name(e.name) and looks_like_kineto(join(path, e.name))
    ]
    if not found:
        return []
    rel = "/".join(parts)
    hosts = tuple(
        HostFile(worker_from_filename(e.name), join(path, e.name), e.size, e.mtime_ns)
        for e in sorted(found, key=lambda e: e.name)
    )
    files = tuple(sorted(e.name for e in entries if not e.is_dir))
    name = parts[-1] if parts else ""
    return [Session(rel or ".", path, path, rel, name, KINETO_FORMAT, hosts, files, layout="loose",
                    framework="pytorch")]


def kineto_run_dirs(sessions: Sequence[Session], known: Sequence[RunDir], listing: Dict) -> List[RunDir]:
    """A RunDir per PyTorch run directory (it holds its traces itself, no plugins/profile), so the
    marker writer can make TensorBoard's run list show it."""

    seen = {r.path for r in known}
    found = []
    for session in sessions:
        if session.format != KINETO_FORMAT or session.run_dir in seen:
            continue
        seen.add(session.run_dir)
        _, entries = listing[tuple(session.run_dir_rel.split("/")) if session.run_dir_rel else ()]
        events = tuple(sorted(e.name for e in entries if not e.is_dir and EVENTS_TAG in e.name))
        runs = tuple(s.run for s in sessions if s.run_dir == session.run_dir)
        found.append(RunDir(session.run_dir_rel, session.run_dir, events, runs))
    return found
