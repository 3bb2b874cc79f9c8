"""Runs whose files lie directly in a directory: the formats of layout RUN_DIRECTORY
(readers/formats/), such as PyTorch's `tensorboard_trace_handler(dir)`, which writes
`dir/<worker>.<timestamp>.pt.trace.json[.gz]` once per worker (host or rank) and per capture.

Such a directory is a run directory; its captures are the sessions the Advisor lists, one per
capture, as the format groups its files (for Kineto by time: readers/kineto/captures.py). The run
name is `<directory relative to the logdir>/<capture>`, or `<capture>` at the logdir's root. Files
of a format written under other names (SNIFFED: `prof.export_chrome_trace` output) are listed as
"loose" sessions for doctor to explain.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from tb_plugin_advisor.readers.formats.descriptor import RUN_DIRECTORY, ProfileFormat
from tb_plugin_advisor.readers.formats.registry import format_named
from tb_plugin_advisor.sources.session import EVENTS_TAG, HostFile, RunDir, Session
from tb_plugin_advisor.sources.walk import is_remote, join


def holds_files_of(fmt: ProfileFormat, names: Sequence[str]) -> bool:
    return any(fmt.names(name) for name in names)


def capture_sessions(fmt: ProfileFormat, parts: Tuple[str, ...], path: str, entries: Sequence[Any]
                     ) -> List[Session]:
    """One Session per capture of a run directory of format `fmt` (`entries`: discovery's listing)."""

    by_name = {e.name: e for e in entries if not e.is_dir}
    rel = "/".join(parts)
    files = tuple(sorted(by_name))
    sessions = []
    for label, workers in fmt.group(files, file_starts(fmt, path, by_name)):
        hosts = tuple(
            HostFile(worker, join(path, name), by_name[name].size, by_name[name].mtime_ns)
            for worker, name in workers
        )
        run = f"{rel}/{label}" if rel else label
        sessions.append(Session(run, path, path, rel, label, fmt.id, hosts, files))
    return sessions


def file_starts(fmt: ProfileFormat, path: str, by_name: Dict[str, Any]) -> Dict[str, Optional[int]]:
    """When each file of a local run directory starts, as the format reads it (once per file version);
    nothing for a remote one, whose files are grouped by name alone (a read per file there is a
    request per file)."""
    if is_remote(path) or fmt.capture_start is None:
        return {}
    return {name: fmt.capture_start(name, join(path, name), entry.size, entry.mtime_ns)
            for name, entry in by_name.items()}


def sniffed_sessions(fmt: ProfileFormat, parts: Tuple[str, ...], path: str, entries: Sequence[Any]
                     ) -> List[Session]:
    """Files that start like the format but are not named as its writer names them (layout "loose"):
    doctor says how to fix them. Only local files are sniffed (a bounded head each); remote logdirs
    are not read for this."""

    outside = fmt.outside_layout
    found = [
        e for e in entries
        if not e.is_dir and not fmt.names(e.name) and outside.host_of(e.name) is not None
        and outside.sniff(join(path, e.name))
    ]
    if not found:
        return []
    rel = "/".join(parts)
    hosts = tuple(
        HostFile(outside.host_of(e.name), join(path, e.name), e.size, e.mtime_ns)
        for e in sorted(found, key=lambda e: e.name)
    )
    files = tuple(sorted(e.name for e in entries if not e.is_dir))
    name = parts[-1] if parts else ""
    return [Session(rel or ".", path, path, rel, name, fmt.id, hosts, files, layout="loose")]


def run_directories(sessions: Sequence[Session], known: Sequence[RunDir], listing: Dict) -> List[RunDir]:
    """A RunDir per run directory of a RUN_DIRECTORY format (it holds its files itself, no
    plugins/profile), so the marker writer can make TensorBoard's run list show it."""

    seen = {r.path for r in known}
    found = []
    for session in sessions:
        fmt = format_named(session.format)
        if fmt is None or fmt.layout != RUN_DIRECTORY or session.run_dir in seen:
            continue
        seen.add(session.run_dir)
        _, entries = listing[tuple(session.run_dir_rel.split("/")) if session.run_dir_rel else ()]
        events = tuple(sorted(e.name for e in entries if not e.is_dir and EVENTS_TAG in e.name))
        runs = tuple(s.run for s in sessions if s.run_dir == session.run_dir)
        found.append(RunDir(session.run_dir_rel, session.run_dir, events, runs))
    return found
