"""The `.profile-empty` marker: the one file the Advisor ever writes into a logdir.

TensorBoard's run list only knows directories that directly hold a file with `tfevents` in its
name, and `tf.profiler.experimental`/JAX/the capture button write none, so their runs are invisible
there (and in Profile plugins before ~2.18). TensorFlow's old profiler wrote
`events.out.tfevents.<ts>.<host>.profile-empty`; we write the same thing again: a real TFRecord
holding one `Event{file_version: "brain.Event:2"}`. A 0-byte file is not enough: TensorBoard's
default (fast) loader ignores it. TensorBoard never reads `.profile-empty` files for summaries.

The TFRecord framing is written here (length, masked CRC32C of the length, data, masked CRC32C of
the data) with the masked CRC32C TensorBoard's own record writer uses (its tensorflow_stub, the one
tensorboard.summary.writer.record_writer imports); the Event proto comes from TensorBoard's compat
protos, so TensorFlow is not needed.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import List, Optional, Set, Tuple

from tensorboard.compat.proto import event_pb2
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

from tb_plugin_advisor.sources.session import MARKER_SUFFIX, RunDir, Scan
from tb_plugin_advisor.sources.walk import is_inside, is_remote, join

logger = logging.getLogger(__name__)

FILE_VERSION = "brain.Event:2"

# ---------------------------------------------------------------------------------------------------
# TFRecord framing


def tfrecord(data: bytes) -> bytes:
    """One TFRecord: uint64 length, masked crc of the length, data, masked crc of the data."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


# ---------------------------------------------------------------------------------------------------
# The marker file


def marker_bytes(wall_time: float) -> bytes:
    event = event_pb2.Event(wall_time=wall_time, file_version=FILE_VERSION)
    return tfrecord(event.SerializeToString())


def marker_host() -> str:
    """This machine's name, made safe for a file name (TensorFlow used the hostname too)."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname() or "") or "localhost"
    return name


def marker_name(wall_time: float, host: str) -> str:
    return f"events.out.tfevents.{int(wall_time)}.{host}{MARKER_SUFFIX}"


def missing_markers(scan: Scan) -> List[RunDir]:
    """Run directories holding `plugins/profile/` that TensorBoard's run list cannot see."""
    return [r for r in scan.run_dirs if not r.visible_in_tensorboard]


class MarkerRefused(OSError):
    """The run directory resolves outside the logdir: the Advisor writes nothing there."""


def outside_logdir(run_dir: str, logdir: str) -> Optional[str]:
    """Where `run_dir` really is, when that is outside `logdir`'s real path; None when inside."""
    if is_remote(run_dir) or not logdir:
        return None
    real = os.path.realpath(run_dir)
    return None if is_inside(real, os.path.realpath(logdir)) else real


def refused_marker_writes(scan: Scan) -> Tuple[str, ...]:
    """Doctor's explanation for each run directory whose marker the Advisor will not write."""
    refused = []
    for run_dir in missing_markers(scan):
        real = outside_logdir(run_dir.path, scan.logdir)
        if real is not None:
            refused.append(
                f"{run_dir.rel or '.'}: no .profile-empty marker will be written there: it resolves to "
                f"{real}, outside the logdir (the Advisor only ever writes inside the logdir)"
            )
    return tuple(refused)


def write_marker(
    run_dir: str, wall_time: Optional[float] = None, host: Optional[str] = None, logdir: str = ""
) -> str:
    """Write one marker into `run_dir` and return its path; raises OSError (or gfile's errors).

    With `logdir`, a run directory whose real path is outside the logdir's is refused
    (MarkerRefused); the file itself is created without following a symlink.
    """
    real = outside_logdir(run_dir, logdir)
    if real is not None:
        raise MarkerRefused(f"{run_dir} resolves to {real}, outside the logdir {logdir}: nothing written")
    wall_time = time.time() if wall_time is None else wall_time
    path = join(run_dir, marker_name(wall_time, host or marker_host()))
    data = marker_bytes(wall_time)
    if is_remote(run_dir):
        from tensorboard.compat.tensorflow_stub.io import gfile  # remote only (see sources/walk.py)

        if gfile.exists(path):
            return path
        with gfile.GFile(path, "wb") as f:
            f.write(data)
        return path
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return path


@dataclass
class MarkerResult:
    """The `.profile-empty` markers a fix wrote, and the directories it could not write to."""

    written: List[str]
    failed: List[str]  # "<dir>: <why>"

    def __bool__(self) -> bool:
        """True when something was written (the logdir changed)."""
        return bool(self.written)


class MarkerWriter:
    """Writes missing markers after each scan; remembers failures so a read-only logdir is logged once."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._lock = threading.Lock()
        self._failed: Set[str] = set()
        self._written: Set[str] = set()

    def __call__(self, scan: Scan) -> MarkerResult:
        result = MarkerResult([], [])
        if not self.enabled:
            return result
        with self._lock:
            for run_dir in missing_markers(scan):
                if run_dir.path in self._failed or run_dir.path in self._written:
                    continue
                try:
                    path = write_marker(run_dir.path, logdir=scan.logdir)
                except Exception as e:  # noqa: BLE001 - read-only or remote without write access
                    self._failed.add(run_dir.path)
                    result.failed.append(f"{run_dir.path}: {e}")
                    logger.warning(
                        "advisor: cannot write a .profile-empty marker into %s (%s); TensorBoard's run "
                        "list will not show its profiles, the Advisor tab still does",
                        run_dir.path,
                        e,
                    )
                    continue
                self._written.add(run_dir.path)
                result.written.append(path)
                logger.info("advisor: wrote %s so TensorBoard's run list shows this run", path)
        return result
