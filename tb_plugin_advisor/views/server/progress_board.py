"""How far a running analysis has got, across the server / worker-process boundary.

Reports are built in spawned worker processes (analysis_service.py), so a reader's progress callback
cannot update an object in the server. Each running report gets a small file in a private temporary
directory (never in the user's logdir): the worker overwrites it with "done total" a few times a
second (os.replace, so the server never reads half a line) and the server reads it when it answers
a poll with 202. The directory goes when the server does.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import threading
import time
import weakref
from typing import Any, Callable, Dict, Hashable, Optional

WRITE_INTERVAL_S = 0.2  # a 300 MB file calls back thousands of times; the tab polls every ~0.5-2 s


class ProgressWriter:
    """The worker's on_progress(done_bytes, total_bytes): picklable (only a path travels)."""

    def __init__(self, path: str):
        self.path = path
        self._last = -1.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < WRITE_INTERVAL_S:
            return
        self._last = now
        partial = f"{self.path}.tmp"
        try:
            with open(partial, "w", encoding="ascii") as handle:
                handle.write(f"{int(done)} {int(total)}")
            os.replace(partial, self.path)
        except OSError:
            pass  # progress is a courtesy: never fail an analysis over it


class AnalysisProgress:
    """One analysis: when it started and where its worker writes; `to_json` is the 202's `progress`."""

    def __init__(self, path: Optional[str], clock: Callable[[], float] = time.monotonic):
        self.path = path
        self.clock = clock
        self.started = clock()

    def read(self) -> tuple:
        """(done, total) bytes as last written; (0, 0) before the worker has read anything."""
        if self.path is None:
            return 0, 0
        try:
            with open(self.path, encoding="ascii") as handle:
                done, total = (int(v) for v in handle.read(64).split())
        except (OSError, ValueError):
            return 0, 0
        return max(0, done), max(0, total)

    def to_json(self) -> Dict[str, Any]:
        done, total = self.read()
        stage = "reading" if total else "starting"
        if total and done >= total:
            stage = "analysing"
        return {
            "stage": stage,
            "done_bytes": min(done, total),
            "total_bytes": total,
            "elapsed_s": round(self.clock() - self.started, 1),
        }


QUEUED = {"stage": "queued", "done_bytes": 0, "total_bytes": 0, "elapsed_s": 0.0}


class ProgressBoard:
    """The running analyses' progress, by analysis key; at most one entry per running analysis."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: Dict[Hashable, AnalysisProgress] = {}
        self._names = itertools.count()
        self._dir: Optional[str] = None

    def start(self, key: Hashable) -> AnalysisProgress:
        """A new entry for `key` (call when its computation starts); its worker writes to `.path`."""
        with self._lock:
            entry = AnalysisProgress(self._new_path())
            self._entries[key] = entry
            return entry

    def finish(self, key: Hashable) -> None:
        with self._lock:
            entry = self._entries.pop(key, None)
        if entry is not None and entry.path is not None:
            for path in (entry.path, f"{entry.path}.tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def to_json(self, key: Hashable) -> Dict[str, Any]:
        """The `progress` of a 202 answer: queued until the computation has started."""
        with self._lock:
            entry = self._entries.get(key)
        return entry.to_json() if entry is not None else dict(QUEUED)

    def _new_path(self) -> Optional[str]:
        if self._dir is None:
            try:
                self._dir = tempfile.mkdtemp(prefix="tb-advisor-progress-")
            except OSError:
                return None  # no temporary directory: progress shows bytes as 0, nothing else changes
            weakref.finalize(self, shutil.rmtree, self._dir, True)
        return os.path.join(self._dir, f"{next(self._names)}.progress")
