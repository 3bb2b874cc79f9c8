"""Find profile sessions under a logdir, the way the built-in Profile tab (xprof >= 2.20) does.

Every `plugins/profile/<session>/` directory at any depth is a session; its `<host>.xplane.pb` files
are its hosts (or, failing those, the files of the next format of that layout: readers/formats/).
The run name is the path from the logdir to the directory holding `plugins`, then `/<session>` (just
`<session>` at the root), and runs are listed in xprof's order (reverse-sorted names: session names
are timestamps, so newest first). Directories holding a run-directory format's files directly
(PyTorch traces) are runs too; their captures are made in sources/run_directories.py. A run name is
only ever looked up in a scan, never turned back into a path.

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

from tb_plugin_advisor.readers.formats.descriptor import NAMED, RUN_DIRECTORY, SESSION_DIRECTORY, SNIFFED
from tb_plugin_advisor.readers.formats.registry import FORMATS, claiming
from tb_plugin_advisor.sources.run_directories import (
    capture_sessions,
    holds_files_of,
    run_directories,
    sniffed_sessions,
)
from tb_plugin_advisor.sources.session import (
    EVENTS_TAG,
    PLUGINS_DIR,
    PROFILE_DIR,
    UNRECOGNISED,
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


def is_xprof_cache(name: str) -> bool:
    return name in XPROF_CACHE_NAMES or name.endswith(XPROF_CACHE_SUFFIXES)


def looks_like_profile(name: str) -> bool:
    """Names the Advisor would open as a profile (doctor reports them when they are not files)."""
    return claiming(name) is not None


def _classify(entries: List[Entry], directory: str) -> Tuple[str, Tuple[HostFile, ...], Tuple[str, ...]]:
    """A session directory's format (the first SESSION_DIRECTORY format in the registry with a file
    there), its hosts in the order of their files' names (a host's several files counted as one:
    older tools wrote one per tool) and its file names."""
    files = [e for e in entries if not e.is_dir and not is_xprof_cache(e.name)]
    names = tuple(sorted(e.name for e in files))
    for fmt in FORMATS:
        if fmt.layout != SESSION_DIRECTORY:
            continue
        mine = sorted((e for e in files if claiming(e.name) is fmt), key=lambda e: e.name)
        if not mine:
            continue
        hosts: Dict[str, HostFile] = {}
        for e in mine:
            host = fmt.host_of(e.name)
            prev = hosts.get(host)
            if prev is None:
                hosts[host] = HostFile(host, join(directory, e.name), e.size, e.mtime_ns)
                continue
            mtime = max(filter(None, [e.mtime_ns, prev.mtime_ns]), default=None)
            hosts[host] = HostFile(host, prev.path, prev.size_bytes + e.size, mtime)
        return fmt.id, tuple(hosts.values()), names
    return UNRECOGNISED, (), names


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
        else:
            found, strays = _outside_session_directories(parts, path, entries)
            sessions.extend(found)
            loose.extend(strays)
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
    run_dirs.extend(run_directories(sessions, run_dirs, listing))
    run_dirs.sort(key=lambda r: r.rel)
    if walked.truncated:
        logger.warning("advisor: %s: %s", logdir, walked.truncated)
    warnings = (walked.truncated,) if walked.truncated else ()
    return Scan(logdir, tuple(sessions), tuple(loose), tuple(run_dirs), time.time(), tuple(errors),
                tuple(walked.problems), warnings)


def _outside_session_directories(parts: Tuple[str, ...], path: str, entries: List[Entry]
                                 ) -> Tuple[List[Session], List[Session]]:
    """A directory that is no session directory: the captures of the run-directory formats whose files
    it holds, and files of any format lying where no tab lists them (layout "loose")."""
    names = [e.name for e in entries if not e.is_dir]
    sessions: List[Session] = []
    loose: List[Session] = []
    for fmt in FORMATS:
        outside = fmt.outside_layout
        if fmt.layout == RUN_DIRECTORY and holds_files_of(fmt, names):
            sessions.extend(capture_sessions(fmt, parts, path, entries))
        elif outside is not None and outside.found_by == NAMED and holds_files_of(fmt, names):
            found, hosts, files = _classify(entries, path)
            rel = "/".join(parts)
            name = parts[-1] if parts else ""
            loose.append(Session(rel or ".", path, path, rel, name, found, hosts, files, layout="loose"))
        elif outside is not None and outside.found_by == SNIFFED and not is_remote(path):
            loose.extend(sniffed_sessions(fmt, parts, path, entries))
    return sessions, loose


def session_of(entries: List[Entry], path: str, run: str, run_dir: str, run_rel: str, name: str) -> Session:
    """A `plugins/profile/<name>/` directory's Session from its listing."""
    fmt, hosts, files = _classify(entries, path)
    return Session(run, path, run_dir, run_rel, name, fmt, hosts, files)
