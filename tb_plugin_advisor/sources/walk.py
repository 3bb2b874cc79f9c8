"""Walking a logdir safely: listing directories, never leaving the logdir, never blocking.

- Symlinks are followed, files and directories alike, as TensorBoard follows them: its help
  recommends a symlink tree to compose a logdir (`logs/exp1 -> /scratch/exp1`). A directory already
  visited, by (device, inode), is skipped whatever path reached it, and a link to a directory that
  holds the logdir itself (`/`, `$HOME`, `..`) is reported and not followed: it would walk the disk
  back into the logdir. Reading the files found this way is guarded at open (readers/guarded_io.py);
  writing is the opposite: a marker is written only inside the logdir's real path
  (sources/markers.py).
- Only directories and regular files are listed: a FIFO, socket or device named like a profile (and
  a directory named like a profile file) is reported as a problem and skipped, so nothing downstream
  can open it and block.
- The walk has an entry and a time budget; running out ends it with a warning (the scan is partial).

Remote logdirs go through TensorBoard's file layer (`gfile`); they have no symlinks or special files.
"""

from __future__ import annotations

import os
import posixpath
import stat
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Set, Tuple

from tb_plugin_advisor.formatting import format_number, plain

# A walk this large is almost surely a mistake (a logdir at / or $HOME); the budget keeps the
# server's scanning thread from running for minutes.
MAX_ENTRIES = 500_000
MAX_SECONDS = 30.0

_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


@dataclass
class Entry:
    """One directory entry as a walk saw it."""

    name: str
    is_dir: bool
    size: int = 0
    mtime_ns: Optional[int] = None


@dataclass
class WalkReport:
    """What a walk could not use, in words a user can act on (paths relative to the logdir)."""

    errors: List[str] = field(default_factory=list)  # directories that could not be listed
    problems: List[str] = field(default_factory=list)  # special files, links leaving the logdir
    truncated: Optional[str] = None  # why the walk stopped early, if it did


@dataclass(frozen=True)
class Budget:
    """How much one walk may read before it stops (entries, seconds)."""

    max_entries: int = MAX_ENTRIES
    max_seconds: float = MAX_SECONDS


def is_remote(path: str) -> bool:
    return "://" in path


def join(base: str, *parts: str) -> str:
    if is_remote(base):
        return posixpath.join(base, *parts)
    return os.path.join(base, *parts)


def is_inside(real_path: str, real_root: str) -> bool:
    """Whether a resolved path is the root or below it."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def special_kind(mode: int) -> Optional[str]:
    for test, words in _SPECIAL_KINDS:
        if test(mode):
            return words
    return None


class LocalLister:
    """Lists local directories, following symlinks except to a directory that holds `root`, and
    reports what it skips."""

    def __init__(self, root: str, report: WalkReport, looks_like_profile: Callable[[str], bool]):
        self.root = root
        self.real_root = os.path.realpath(root)
        self.report = report
        self.looks_like_profile = looks_like_profile

    def _rel(self, path: str) -> str:
        return os.path.relpath(path, self.root)

    def __call__(self, path: str) -> List[Entry]:
        entries = []
        with os.scandir(path) as it:
            for item in it:
                try:
                    entry = self._entry(item)
                except OSError:
                    continue  # vanished or dangling link
                if entry is not None:
                    entries.append(entry)
        return entries

    def _entry(self, item: os.DirEntry) -> Optional[Entry]:
        if item.is_symlink():
            target = os.path.realpath(item.path)
            if target != self.real_root and is_inside(self.real_root, target):
                self.report.problems.append(
                    f"{self._rel(item.path)} is a symlink to {target}, which holds the logdir itself: "
                    "not followed (it would walk the whole tree above the logdir and back into it)"
                )
                return None
        st = item.stat()  # follows the link
        if stat.S_ISDIR(st.st_mode):
            if self.looks_like_profile(item.name):
                self.report.problems.append(
                    f"{self._rel(item.path)} is a directory named like a profile file: skipped"
                )
            return Entry(item.name, True)
        if stat.S_ISREG(st.st_mode):
            return Entry(item.name, False, st.st_size, st.st_mtime_ns)
        kind = special_kind(st.st_mode) or "not a regular file"
        if self.looks_like_profile(item.name):
            self.report.problems.append(f"{self._rel(item.path)} is {kind}, not a regular file: skipped")
        return None


def list_remote(path: str, wants_size: Callable[[str], bool]) -> List[Entry]:
    # imported here, for remote logdirs only: the file layer imports boto3 (where installed) for its
    # S3 filesystem, ~20 MB and 0.2 s that a local report would otherwise pay on every run
    from tensorboard.compat.tensorflow_stub.io import gfile

    entries = []
    for name in gfile.listdir(path):
        name = name.rstrip("/")
        if not name:
            continue
        full = posixpath.join(path, name)
        if gfile.isdir(full):
            entries.append(Entry(name, True))
        else:
            # Sizes only for files we report; other files keep 0 (saves a request per events file).
            size = int(gfile.stat(full).length) if wants_size(name) else 0
            entries.append(Entry(name, False, size, None))
    return entries


def walk(
    logdir: str,
    report: WalkReport,
    looks_like_profile: Callable[[str], bool],
    budget: Optional[Budget] = None,
) -> Iterator[Tuple[Tuple[str, ...], str, List[Entry]]]:
    """Yield (parts relative to logdir, absolute dir, entries) for every directory, top-down."""
    budget = budget or Budget()
    remote = is_remote(logdir)
    if remote:
        def lister(path: str) -> List[Entry]:
            return list_remote(path, looks_like_profile)
    else:
        lister = LocalLister(logdir, report, looks_like_profile)
    seen: Set[Tuple[int, int]] = set()  # (device, inode) of every directory listed
    stack: List[Tuple[Tuple[str, ...], str]] = [((), logdir)]
    deadline = time.monotonic() + budget.max_seconds
    listed = 0
    while stack:
        if listed > budget.max_entries or time.monotonic() > deadline:
            limit = (f"{format_number(budget.max_entries)} entries" if listed > budget.max_entries
                     else f"{plain(budget.max_seconds)} s")
            report.truncated = (
                f"the walk of the logdir stopped after {limit} (the scan budget) with {len(stack)} "
                "directories left unread; point --logdir at the directory that holds your runs"
            )
            return
        parts, path = stack.pop()
        if not remote:
            try:
                st = os.stat(path)
            except OSError as e:
                report.errors.append(f"{path}: {e}")
                continue
            if (st.st_dev, st.st_ino) in seen:  # reached again through a link: a loop or a duplicate
                continue
            seen.add((st.st_dev, st.st_ino))
        try:
            entries = lister(path)
        except Exception as e:  # noqa: BLE001 - one unreadable directory must not hide the rest
            report.errors.append(f"{path}: {e}")
            continue
        listed += len(entries) + 1
        yield parts, path, entries
        for entry in sorted((e for e in entries if e.is_dir), key=lambda e: e.name, reverse=True):
            stack.append((parts + (entry.name,), join(path, entry.name)))
