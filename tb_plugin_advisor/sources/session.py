"""What a scan of a logdir finds, as plain types: the runs (sessions) with their hosts' files and the
directories TensorBoard's run list must see. Discovery (discovery.py, run_directories.py) makes them;
everything after it reads them. A session's format is a format id (readers/formats/), asked of the
registry, never compared by name.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from tb_plugin_advisor.readers.formats.registry import format_named

PLUGINS_DIR = "plugins"
PROFILE_DIR = "profile"
# TensorBoard's run list: directories that directly hold a file with this in its name.
EVENTS_TAG = "tfevents"
MARKER_SUFFIX = ".profile-empty"

# Session.format of a session directory holding no file of any format (doctor says what it holds).
UNRECOGNISED = "unknown"


@dataclass(frozen=True)
class HostFile:
    """One host's file of a session: `<host>.xplane.pb`, a worker's trace, a legacy tool file."""

    host: str
    path: str
    size_bytes: int
    mtime_ns: Optional[int]  # None on filesystems whose gfile layer reports no mtime

    @property
    def cache_key(self) -> Tuple[str, int, Optional[int]]:
        """Identity of the file's content for analysis caches: a rewritten file gets a new key."""
        return (self.path, self.size_bytes, self.mtime_ns)


@dataclass(frozen=True)
class Session:
    """One profile capture: a `plugins/profile/<session>/` directory, or one capture of a run
    directory's traces (layout "session"); one file named on the command line (layout "file").

    Doctor also reports files lying outside their format's layout (layout "loose": `*.xplane.pb`
    outside a session directory, traces saved under other names): no tab lists them, and saying so
    is the fix people need.
    """

    run: str
    path: str  # the session directory (the loose file's directory for layout "loose")
    run_dir: str  # the directory holding `plugins/` (TensorBoard's run directory)
    run_dir_rel: str  # run_dir relative to the logdir, "" at the root
    name: str
    format: str  # a format id (readers/formats/registry.py), or UNRECOGNISED
    hosts: Tuple[HostFile, ...]
    files: Tuple[str, ...]  # every non-cache file name in the session directory
    layout: str = "session"

    @property
    def framework(self) -> Optional[str]:
        """The framework every file of the session's format comes from; None where it varies (XSpace:
        TensorFlow or JAX) or the format is unknown."""
        fmt = format_named(self.format)
        return fmt.framework if fmt is not None else None

    @property
    def size_bytes(self) -> int:
        return sum(h.size_bytes for h in self.hosts)

    @property
    def host_names(self) -> List[str]:
        return [h.host for h in self.hosts]

    def host(self, name: str) -> Optional[HostFile]:
        for h in self.hosts:
            if h.host == name:
                return h
        return None

    @property
    def cache_key(self) -> Tuple:
        return (self.run, tuple(h.cache_key for h in self.hosts))

    def to_json(self) -> Dict:
        """The `runs` route's entry (ARCHITECTURE.md §2 HTTP API)."""
        return {
            "run": self.run,
            "hosts": self.host_names,
            "format": self.format,
            "size_bytes": self.size_bytes,
            "framework": self.framework,
        }


@dataclass(frozen=True)
class RunDir:
    """A directory holding `plugins/profile/`: what TensorBoard's own run list needs to see it."""

    rel: str  # relative to the logdir, "" at the root
    path: str
    event_files: Tuple[str, ...]  # names of files with "tfevents" in them, directly in `path`
    runs: Tuple[str, ...]  # the sessions below it

    @property
    def visible_in_tensorboard(self) -> bool:
        return bool(self.event_files)

    @property
    def has_marker(self) -> bool:
        return any(n.endswith(MARKER_SUFFIX) for n in self.event_files)


@dataclass(frozen=True)
class Scan:
    """The result of walking one logdir once."""

    logdir: str
    sessions: Tuple[Session, ...]  # layout "session", in xprof's order
    loose: Tuple[Session, ...]  # layout "loose", sorted by path
    run_dirs: Tuple[RunDir, ...]
    scanned_at: float = field(default_factory=time.time)
    errors: Tuple[str, ...] = ()  # directories that could not be listed
    problems: Tuple[str, ...] = ()  # entries skipped on purpose: special files, links leaving the logdir
    warnings: Tuple[str, ...] = ()  # the walk ran out of its budget: the scan is partial

    def run(self, name: str) -> Optional[Session]:
        for session in self.sessions:
            if session.run == name:
                return session
        return None

    def run_dir_of(self, session: Session) -> Optional[RunDir]:
        for run_dir in self.run_dirs:
            if run_dir.path == session.run_dir:
                return run_dir
        return None


EMPTY_SCAN = Scan(logdir="", sessions=(), loose=(), run_dirs=(), scanned_at=0.0)
