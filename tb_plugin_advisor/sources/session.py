"""What a scan of a logdir finds, as plain types: the runs (sessions) with their hosts' files, the
directories TensorBoard's run list must see, and the names of the formats. Discovery (discovery.py,
kineto_runs.py) makes them; everything after it reads them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

PLUGINS_DIR = "plugins"
PROFILE_DIR = "profile"
# TensorBoard's run list: directories that directly hold a file with this in its name.
EVENTS_TAG = "tfevents"
MARKER_SUFFIX = ".profile-empty"

KINETO_FORMAT = "kineto"
FORMATS = ("xplane", "legacy", KINETO_FORMAT, "unknown")
FRAMEWORK_OF_FORMAT = {"legacy": "tensorflow", KINETO_FORMAT: "pytorch"}  # xplane: TF or JAX, unknown


@dataclass(frozen=True)
class HostFile:
    """One host's file of a session: `<host>.xplane.pb` (or a legacy tool file)."""

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
    """One profile capture: a `plugins/profile/<session>/` directory (layout "session").

    Doctor also reports `*.xplane.pb` files lying outside that layout (layout "loose"): no tab lists
    them, and saying so is the fix people need.
    """

    run: str
    path: str  # the session directory (the loose file's directory for layout "loose")
    run_dir: str  # the directory holding `plugins/` (TensorBoard's run directory)
    run_dir_rel: str  # run_dir relative to the logdir, "" at the root
    name: str
    format: str  # one of FORMATS
    hosts: Tuple[HostFile, ...]
    files: Tuple[str, ...]  # every non-cache file name in the session directory
    layout: str = "session"
    framework: str = ""  # "pytorch" / "tensorflow" where the format says; "" when unknown

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
            "framework": self.framework or FRAMEWORK_OF_FORMAT.get(self.format),
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
