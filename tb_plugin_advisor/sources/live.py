"""`LiveDiscovery`: the latest Scan of a logdir, kept in memory for the server.

Request handlers (and `is_active()`) answer from memory and never walk a logdir themselves; the walk
runs on a background thread, and a looked-up session is re-listed on its own when its files may
have changed (so a session empty when first seen is read again once it fills).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import Callable, Dict, Optional

from tb_plugin_advisor.readers.formats.descriptor import RUN_DIRECTORY
from tb_plugin_advisor.readers.formats.registry import format_named
from tb_plugin_advisor.sources.discovery import looks_like_profile, scan_logdir, session_of
from tb_plugin_advisor.sources.run_directories import capture_sessions
from tb_plugin_advisor.sources.session import EMPTY_SCAN, Scan, Session
from tb_plugin_advisor.sources.walk import LocalLister, WalkReport, is_remote

logger = logging.getLogger(__name__)


class LiveDiscovery:
    """The latest Scan of a logdir, refreshed in the background.

    - `scan` is always answered from memory (EMPTY_SCAN until the first walk finishes).
    - `start()` walks once on a daemon thread and then every `interval_s` seconds (0: once only).
    - `lookup(run)` falls back to one synchronous rescan when a run is unknown, at most once per
      `min_rescan_s`, so a session written a moment ago is found without waiting for the timer,
      and a stream of bogus names cannot make the server walk the logdir in a loop.
    - `on_scan(scan)` runs on the scanning thread after every walk (the plugin writes markers there);
      a truthy return value means it changed the logdir, and the walk is repeated once.
    - a known session is re-listed (its one directory, not the logdir) when it is looked up and
      `session_recheck_s` has passed since its last check: a session that was empty when first seen,
      or whose files were rewritten, is served with its current files without waiting for a walk.
    """

    def __init__(
        self,
        logdir: str,
        interval_s: float = 30.0,
        min_rescan_s: float = 5.0,
        on_scan: Optional[Callable[[Scan], None]] = None,
        scan_fn: Callable[[str], Scan] = scan_logdir,
        session_recheck_s: float = 1.0,
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
        self.session_recheck_s = session_recheck_s
        self._session_checked: Dict[str, float] = {}

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
            return self._rechecked(session)
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

    def _rechecked(self, session: Session) -> Session:
        """The session as its directory is now (one listing, rate-limited per run)."""
        now = time.monotonic()
        last = self._session_checked.get(session.run, 0.0)
        if is_remote(session.path) or now - last < self.session_recheck_s:
            return session
        self._session_checked[session.run] = now
        report = WalkReport()
        try:
            entries = LocalLister(self.logdir, report, looks_like_profile)(session.path)
        except OSError:
            return session  # gone: the next walk drops it
        s = session
        fmt = format_named(s.format)
        if fmt is not None and fmt.layout == RUN_DIRECTORY:  # a run directory: its captures are regrouped
            parts = tuple(p for p in s.run_dir_rel.split("/") if p)
            fresh = next((k for k in capture_sessions(fmt, parts, s.path, entries) if k.run == s.run),
                         session)
        else:
            fresh = session_of(entries, s.path, s.run, s.run_dir, s.run_dir_rel, s.name)
        if fresh == session:
            return session
        with self._scan_lock:
            scan = self._scan
            sessions = tuple(fresh if s.run == session.run else s for s in scan.sessions)
            self._scan = dataclasses.replace(scan, sessions=sessions)
        logger.info("advisor: session %s changed on disk; using its current files", session.run)
        return fresh
