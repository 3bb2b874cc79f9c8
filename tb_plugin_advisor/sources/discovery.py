"""Find profile sessions under a logdir, the way the built-in Profile tab (xprof >= 2.20) does.

Every `plugins/profile/<session>/` directory at any depth is a session; its `<host>.xplane.pb` files
are its hosts. The run name is the path from the logdir to the directory holding `plugins`, then
`/<session>` (just `<session>` at the root), and runs are listed in xprof's order (reverse-sorted
names: session names are timestamps, so newest first). A run name is only ever looked up in a scan,
never turned back into a path.

Files go through TensorBoard's own file layer (`tensorboard.compat.tensorflow_stub.io.gfile`:
gs://, s3://, any fsspec URL) so remote logdirs work exactly where TensorBoard works; local
directories use `os.scandir` directly because a stat per entry is what makes big logdirs slow.
TensorFlow is never imported.

The walk itself (symlinks, special files, budget) is sources/walk.py; `LiveDiscovery`, which keeps
the latest scan in memory for the server, is sources/live.py.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Dict, List, Optional, Tuple

from tb_plugin_advisor.readers.xplane import XPLANE_SUFFIX
from tb_plugin_advisor.sources.kineto_runs import (
    has_kineto_traces,
    is_trace_file,
    kineto_run_dirs,
    kineto_sessions,
    loose_kineto_traces,
)
from tb_plugin_advisor.sources.session import (
    EVENTS_TAG,
    PLUGINS_DIR,
    PROFILE_DIR,
    HostFile,
    RunDir,
    Scan,
    Session,
)
from tb_plugin_advisor.sources.walk import Budget, Entry, WalkReport, is_remote, join, walk

logger = logging.getLogger(__name__)

# Files xprof writes into session directories as caches; never profiles, never counted.
XPROF_CACHE_NAMES = frozenset({".cached_tools.json", "cache_version.txt"})
XPROF_CACHE_SUFFIXES = (".op_stats_v2.pb", ".op_stats.pb", ".hlo_proto.pb", ".SSTABLE", ".sstable")

# Tool outputs of older profilers (TF <= 2.1 era and the old Cloud TPU tooling): the session is real
# but holds no XSpace, so the Advisor can list it and say why it cannot analyse it.
LEGACY_SUFFIXES = (
    ".trace.json.gz",
    ".trace.json",
    ".trace",
    ".overview_page.pb",
    ".overview_page.json",
    ".input_pipeline.pb",
    ".input_pipeline.json",
    ".tensorflow_stats.pb",
    ".kernel_stats.pb",
    ".memory_profile.json.gz",
    ".memory_viewer.json",
    ".pod_viewer.json",
    ".op_profile.json",
)



def is_xprof_cache(name: str) -> bool:
    return name in XPROF_CACHE_NAMES or name.endswith(XPROF_CACHE_SUFFIXES)


def legacy_host(name: str) -> Optional[str]:
    """`10.0.0.1.overview_page.pb` -> `10.0.0.1`; None when the file is no legacy tool output."""
    if is_trace_file(name):  # `.pt.trace.json` is PyTorch's, not an old TensorFlow trace
        return None
    for suffix in LEGACY_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def looks_like_profile(name: str) -> bool:
    """Names the Advisor would open as a profile (doctor reports them when they are not files)."""
    return name.endswith(XPLANE_SUFFIX) or legacy_host(name) is not None or is_trace_file(name)


def _classify(entries: List[Entry], directory: str) -> Tuple[str, Tuple[HostFile, ...], Tuple[str, ...]]:
    files = [e for e in entries if not e.is_dir and not is_xprof_cache(e.name)]
    xplanes = [e for e in files if e.name.endswith(XPLANE_SUFFIX)]
    if xplanes:
        hosts = tuple(
            HostFile(e.name[: -len(XPLANE_SUFFIX)], join(directory, e.name), e.size, e.mtime_ns)
            for e in sorted(xplanes, key=lambda e: e.name)
        )
        return "xplane", hosts, tuple(sorted(e.name for e in files))
    legacy: Dict[str, HostFile] = {}
    for e in sorted(files, key=lambda e: e.name):
        host = legacy_host(e.name)
        if host is None:
            continue
        prev = legacy.get(host)
        size = e.size + (prev.size_bytes if prev else 0)
        mtime = max(filter(None, [e.mtime_ns, prev.mtime_ns if prev else None]), default=None)
        legacy[host] = HostFile(host, prev.path if prev else join(directory, e.name), size, mtime)
    if legacy:
        return "legacy", tuple(legacy[h] for h in sorted(legacy)), tuple(sorted(e.name for e in files))
    return "unknown", (), tuple(sorted(e.name for e in files))


def scan_logdir(logdir: str, budget: Optional[Budget] = None) -> Scan:
    """Walk `logdir` once and return every session, loose xplane directory and run directory.

    A logdir that does not exist gives an empty scan with the error recorded (TensorBoard itself
    starts fine on a logdir that appears later).
    """
    logdir = logdir.rstrip("/") if is_remote(logdir) else os.path.abspath(os.path.expanduser(logdir))
    walked = WalkReport()
    errors = walked.errors
    sessions: List[Session] = []
    loose: List[Session] = []
    listing: Dict[Tuple[str, ...], Tuple[str, List[Entry]]] = {}
    for parts, path, entries in walk(logdir, walked, looks_like_profile, budget or Budget()):
        listing[parts] = (path, entries)
        is_session_dir = len(parts) >= 3 and parts[-3] == PLUGINS_DIR and parts[-2] == PROFILE_DIR
        if is_session_dir:
            run_parts = parts[:-3]
            run_dir = join(logdir, *run_parts) if run_parts else logdir
            run_rel = "/".join(run_parts)
            run = f"{run_rel}/{parts[-1]}" if run_rel else parts[-1]
            sessions.append(session_of(entries, path, run, run_dir, run_rel, parts[-1]))
        elif any(not e.is_dir and e.name.endswith(XPLANE_SUFFIX) for e in entries):
            fmt, hosts, files = _classify(entries, path)
            rel = "/".join(parts)
            name = parts[-1] if parts else ""
            loose.append(Session(rel or ".", path, path, rel, name, fmt, hosts, files, layout="loose"))
        if not is_session_dir and has_kineto_traces([e.name for e in entries if not e.is_dir]):
            sessions.extend(kineto_sessions(parts, path, entries))
        elif not is_session_dir and not is_remote(path):
            loose.extend(loose_kineto_traces(parts, path, entries))
    sessions.sort(key=lambda s: s.run, reverse=True)
    loose.sort(key=lambda s: s.path)
    run_dirs = []
    for parts in listing:
        if len(parts) >= 2 and parts[-2] == PLUGINS_DIR and parts[-1] == PROFILE_DIR:
            run_parts = parts[:-2]
            run_path, run_entries = listing[run_parts]
            events = tuple(sorted(e.name for e in run_entries if not e.is_dir and EVENTS_TAG in e.name))
            rel = "/".join(run_parts)
            runs = tuple(s.run for s in sessions if s.run_dir_rel == rel)
            run_dirs.append(RunDir(rel, run_path, events, runs))
    if not listing and errors:
        logger.warning("advisor: cannot list logdir %s", errors[0])
    run_dirs.extend(kineto_run_dirs(sessions, run_dirs, listing))
    run_dirs.sort(key=lambda r: r.rel)
    if walked.truncated:
        logger.warning("advisor: %s: %s", logdir, walked.truncated)
    warnings = (walked.truncated,) if walked.truncated else ()
    return Scan(logdir, tuple(sessions), tuple(loose), tuple(run_dirs), time.time(), tuple(errors),
                tuple(walked.problems), warnings)


def session_of(entries: List[Entry], path: str, run: str, run_dir: str, run_rel: str, name: str) -> Session:
    """A `plugins/profile/<name>/` directory's Session from its listing."""
    fmt, hosts, files = _classify(entries, path)
    return Session(run, path, run_dir, run_rel, name, fmt, hosts, files)
