"""PyTorch profiler runs in a logdir: directories that directly hold `*.pt.trace.json[.gz]` files.

`torch.profiler.tensorboard_trace_handler(dir)` writes `dir/<worker>.<timestamp>.pt.trace.json[.gz]`
once per worker (host or rank) and per capture. A directory is a run directory; its captures are
the sessions the Advisor lists, one per capture (which files are one capture:
readers/kineto/captures.py). The run name is `<directory relative to the logdir>/<capture>`, or
`<capture>` at the logdir's root.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from tb_plugin_advisor.readers.kineto.captures import capture_start, group_captures
from tb_plugin_advisor.readers.kineto.head import looks_like_trace
from tb_plugin_advisor.readers.kineto.tables import is_json_name, is_trace_file, worker_from_filename
from tb_plugin_advisor.sources.session import EVENTS_TAG, KINETO_FORMAT, HostFile, RunDir, Session
from tb_plugin_advisor.sources.walk import is_remote, join


def has_kineto_traces(names: Sequence[str]) -> bool:
    return any(is_trace_file(name) for name in names)


# ---------------------------------------------------------------------------------------------------
# Discovery's hooks: the sessions and run directories of PyTorch runs, in session.py's types.


def kineto_sessions(parts: Tuple[str, ...], path: str, entries: Sequence[Any]) -> List[Session]:
    """One Session per capture of a PyTorch run directory (`entries`: discovery's listing of it)."""

    by_name = {e.name: e for e in entries if not e.is_dir}
    rel = "/".join(parts)
    files = tuple(sorted(by_name))
    sessions = []
    for label, workers in group_captures(files, file_starts(path, by_name)):
        hosts = tuple(
            HostFile(worker, join(path, name), by_name[name].size, by_name[name].mtime_ns)
            for worker, name in workers
        )
        run = f"{rel}/{label}" if rel else label
        session = Session(run, path, path, rel, label, KINETO_FORMAT, hosts, files, framework="pytorch")
        sessions.append(session)
    return sessions


def file_starts(path: str, by_name: Dict[str, Any]) -> Dict[str, Optional[int]]:
    """When each stamped trace of a local run directory starts (read from its head, once per file
    version); nothing for a remote one, whose files are grouped by name alone (a read per file
    there is a request per file)."""
    if is_remote(path):
        return {}
    return {name: capture_start(name, join(path, name), entry.size, entry.mtime_ns)
            for name, entry in by_name.items()}


def loose_kineto_traces(parts: Tuple[str, ...], path: str, entries: Sequence[Any]) -> List[Session]:
    """`prof.export_chrome_trace` output under another name (layout "loose"): doctor says how to fix it.
    Only local files are sniffed (4 KiB each); remote logdirs are not read for this."""

    found = [
        e for e in entries
        if not e.is_dir and is_json_name(e.name) and looks_like_trace(join(path, e.name))
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
