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

`LiveDiscovery` keeps the latest scan in memory and refreshes it on a background thread, so
request handlers (and `is_active()`) answer from memory and never walk a logdir themselves.
"""

from __future__ import annotations

import logging
import os
import posixpath
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from tensorboard.compat.tensorflow_stub.io import gfile

from tb_plugin_advisor.sources.kineto_runs import (
    KINETO_FORMAT,
    has_kineto_traces,
    is_trace_file,
    kineto_run_dirs,
    kineto_sessions,
    loose_kineto_traces,
)

logger = logging.getLogger(__name__)

PLUGINS_DIR = "plugins"
PROFILE_DIR = "profile"
XPLANE_SUFFIX = ".xplane.pb"
# TensorBoard's run list: directories that directly hold a file with this in its name.
EVENTS_TAG = "tfevents"
MARKER_SUFFIX = ".profile-empty"

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

FORMATS = ("xplane", "legacy", KINETO_FORMAT, "unknown")
FRAMEWORK_OF_FORMAT = {"legacy": "tensorflow", KINETO_FORMAT: "pytorch"}  # xplane: TF or JAX, unknown


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


# ---------------------------------------------------------------------------------------------------
# What a scan finds


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
        """The `runs` route's entry (TEAM.md HTTP API)."""
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


# ---------------------------------------------------------------------------------------------------
# The file layer


def is_remote(path: str) -> bool:
    return "://" in path


def join(base: str, *parts: str) -> str:
    if is_remote(base):
        return posixpath.join(base, *parts)
    return os.path.join(base, *parts)


@dataclass
class _Entry:
    name: str
    is_dir: bool
    size: int = 0
    mtime_ns: Optional[int] = None


def _list_local(path: str) -> List[_Entry]:
    entries = []
    with os.scandir(path) as it:
        for item in it:
            try:
                if item.is_dir():  # follows symlinks, like TensorBoard's walk
                    entries.append(_Entry(item.name, True))
                else:
                    st = item.stat()
                    entries.append(_Entry(item.name, False, st.st_size, st.st_mtime_ns))
            except OSError:
                continue  # vanished or dangling link
    return entries


def _list_remote(path: str) -> List[_Entry]:
    entries = []
    for name in gfile.listdir(path):
        name = name.rstrip("/")
        if not name:
            continue
        full = posixpath.join(path, name)
        if gfile.isdir(full):
            entries.append(_Entry(name, True))
        else:
            # Sizes only for files we report; other files keep 0 (saves a request per events file).
            size = 0
            if name.endswith(XPLANE_SUFFIX) or legacy_host(name) or is_trace_file(name):
                size = int(gfile.stat(full).length)
            entries.append(_Entry(name, False, size, None))
    return entries


def _walk(logdir: str, errors: List[str]) -> Iterator[Tuple[Tuple[str, ...], str, List[_Entry]]]:
    """Yield (parts relative to logdir, absolute dir, entries) for every directory, top-down."""
    lister = _list_remote if is_remote(logdir) else _list_local
    seen_real = set()
    stack: List[Tuple[Tuple[str, ...], str]] = [((), logdir)]
    while stack:
        parts, path = stack.pop()
        if not is_remote(path):
            real = os.path.realpath(path)
            if real in seen_real:  # symlink loop
                continue
            seen_real.add(real)
        try:
            entries = lister(path)
        except Exception as e:  # noqa: BLE001 - one unreadable directory must not hide the rest
            errors.append(f"{path}: {e}")
            continue
        yield parts, path, entries
        for entry in sorted((e for e in entries if e.is_dir), key=lambda e: e.name, reverse=True):
            stack.append((parts + (entry.name,), join(path, entry.name)))


def _classify(entries: List[_Entry], directory: str) -> Tuple[str, Tuple[HostFile, ...], Tuple[str, ...]]:
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


def scan_logdir(logdir: str) -> Scan:
    """Walk `logdir` once and return every session, loose xplane directory and run directory.

    A logdir that does not exist gives an empty scan with the error recorded (TensorBoard itself
    starts fine on a logdir that appears later).
    """
    logdir = logdir.rstrip("/") if is_remote(logdir) else os.path.abspath(os.path.expanduser(logdir))
    errors: List[str] = []
    sessions: List[Session] = []
    loose: List[Session] = []
    listing: Dict[Tuple[str, ...], Tuple[str, List[_Entry]]] = {}
    for parts, path, entries in _walk(logdir, errors):
        listing[parts] = (path, entries)
        is_session_dir = len(parts) >= 3 and parts[-3] == PLUGINS_DIR and parts[-2] == PROFILE_DIR
        if is_session_dir:
            run_parts = parts[:-3]
            run_dir = join(logdir, *run_parts) if run_parts else logdir
            run_rel = "/".join(run_parts)
            fmt, hosts, files = _classify(entries, path)
            run = f"{run_rel}/{parts[-1]}" if run_rel else parts[-1]
            sessions.append(Session(run, path, run_dir, run_rel, parts[-1], fmt, hosts, files))
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
    return Scan(logdir, tuple(sessions), tuple(loose), tuple(run_dirs), time.time(), tuple(errors))


# ---------------------------------------------------------------------------------------------------
# Live, cached discovery for the plugin


class LiveDiscovery:
    """The latest Scan of a logdir, refreshed in the background.

    - `scan` is always answered from memory (EMPTY_SCAN until the first walk finishes).
    - `start()` walks once on a daemon thread and then every `interval_s` seconds (0: once only).
    - `lookup(run)` falls back to one synchronous rescan when a run is unknown, at most once per
      `min_rescan_s`, so a session written a moment ago is found without waiting for the timer,
      and a stream of bogus names cannot make the server walk the logdir in a loop.
    - `on_scan(scan)` runs on the scanning thread after every walk (the plugin writes markers there);
      a truthy return value means it changed the logdir, and the walk is repeated once.
    """

    def __init__(
        self,
        logdir: str,
        interval_s: float = 30.0,
        min_rescan_s: float = 5.0,
        on_scan: Optional[Callable[[Scan], None]] = None,
        scan_fn: Callable[[str], Scan] = scan_logdir,
    ):
        self.logdir = logdir
        self.interval_s = interval_s
        self.min_rescan_s = min_rescan_s
        self._on_scan = on_scan
        self._scan_fn = scan_fn
        self._scan: Scan = EMPTY_SCAN
        self._scan_lock = threading.Lock()  # one walk at a time
        self._first = threading.Event()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._last_walk_started = 0.0

    @property
    def scan(self) -> Scan:
        return self._scan

    @property
    def ready(self) -> bool:
        return self._first.is_set()

    def wait_ready(self, timeout: float) -> bool:
        return self._first.wait(timeout)

    def refresh(self, _again: bool = True) -> Scan:
        """Walk the logdir now (callers on other threads wait for a walk already under way)."""
        started = time.monotonic()
        with self._scan_lock:
            if self._last_walk_started > started:  # somebody walked while we waited: use theirs
                return self._scan
            self._last_walk_started = time.monotonic()
            try:
                scan = self._scan_fn(self.logdir) if self.logdir else EMPTY_SCAN
            except Exception:  # noqa: BLE001 - keep the previous scan; the next cycle retries
                logger.exception("advisor: scanning %s failed", self.logdir)
                self._first.set()
                return self._scan
            self._scan = scan
        if self._on_scan is not None:
            try:
                changed = self._on_scan(scan)
            except Exception:  # noqa: BLE001
                logger.exception("advisor: post-scan hook failed")
                changed = False
            if changed and _again:  # the hook wrote into the logdir (markers): show it at once
                return self.refresh(_again=False)
        self._first.set()
        return scan

    def lookup(self, run: str) -> Optional[Session]:
        session = self._scan.run(run)
        if session is not None:
            return session
        if time.monotonic() - self._last_walk_started < self.min_rescan_s:
            return None
        return self.refresh().run(run)

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="advisor-discovery", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.refresh()
            if self.interval_s <= 0:
                return
            self._stop.wait(self.interval_s)
