"""Opening and reading a profile file so that nothing on disk can hang, crash or bloat the process.

- only regular files: the file is opened with O_NONBLOCK (a FIFO's open returns at once) and
  checked with fstat on the open descriptor, so a FIFO, socket, device or directory named like a
  profile is refused without a single blocking read;
- no mmap: a file truncated under a mapping kills the process with SIGBUS, so bytes are copied with
  pread, one piece at a time;
- a file rewritten while it is read is detected (size, mtime, inode compared before and after;
  short reads) and reported as `ProfileChangedError`, which callers must not cache;
- sizes are checked against `ReadLimits` before anything is read, and gzip is inflated with a cap.
"""

from __future__ import annotations

import os
import stat
import zlib
from typing import Optional, Tuple

from tb_plugin_advisor.errors import ProfileChangedError, ProfileReadError
from tb_plugin_advisor.readers.limits import ReadLimits, describe_bytes

GZIP_MAGIC = b"\x1f\x8b"
RAISE_HINT = " (raise it with --advisor_max_profile_mb in TensorBoard or --max-profile-mb in tb-advisor)"

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def file_kind(mode: int) -> Optional[str]:
    """None for a regular file, else what it is in words."""
    if stat.S_ISREG(mode):
        return None
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def too_big(source: str, size: int, limits: ReadLimits) -> ProfileReadError:
    cap = describe_bytes(limits.max_profile_bytes)
    return ProfileReadError(
        source,
        f"the profile is {describe_bytes(size)}, over the limit of {cap}"
        + RAISE_HINT,
    )


class ProfileFile:
    """A regular file opened for positioned reads; `close()` (or `with`) releases it."""

    def __init__(self, path: str, limits: ReadLimits):
        self.path = path
        try:
            self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise ProfileReadError(path, f"cannot open file ({exc.strerror or exc})") from exc
        try:
            self._stat = os.fstat(self._fd)
            kind = file_kind(self._stat.st_mode)
            if kind is not None:
                raise ProfileReadError(path, f"is {kind}, not a regular file; only regular files are read")
            self.size = self._stat.st_size
            if self.size > limits.max_profile_bytes:
                raise too_big(path, self.size, limits)
        except BaseException:
            os.close(self._fd)
            raise

    def __enter__(self) -> ProfileFile:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def identity(self) -> Tuple[int, int, int]:
        st = os.fstat(self._fd)
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def changed(self) -> bool:
        """Whether the file's size or times moved since it was opened (it is being rewritten)."""
        first = (self._stat.st_size, self._stat.st_mtime_ns, self._stat.st_ctime_ns)
        try:
            return self.identity() != first
        except OSError:
            return True

    def changed_error(self) -> ProfileChangedError:
        return ProfileChangedError(
            self.path, "the file changed while it was read (it is being written?); it is read again next time"
        )

    def read(self, start: int, end: int) -> bytes:
        """Bytes [start, end) of the file; a short read means the file shrank under us."""
        wanted = end - start
        data = os.pread(self._fd, wanted, start)
        if len(data) == wanted:
            return data
        parts = [data]
        got = len(data)
        while got < wanted:
            more = os.pread(self._fd, wanted - got, start + got)
            if not more:
                raise self.changed_error() if self.changed() else ProfileReadError(
                    self.path, f"the file is truncated (ends at byte {start + got}, {end} expected)"
                )
            parts.append(more)
            got += len(more)
        return b"".join(parts)


def inflate(data: bytes, source: str, limits: ReadLimits) -> bytes:
    """gunzip with the size cap applied while inflating (a few KB of gzip can expand to GBs)."""
    out = []
    total = 0
    while data:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(data, limits.max_profile_bytes + 1 - total)
        except zlib.error as exc:
            raise ProfileReadError(source, f"gzip data is truncated or corrupt ({exc})") from exc
        total += len(chunk)
        out.append(chunk)
        if inflater.unconsumed_tail or total > limits.max_profile_bytes:
            cap = describe_bytes(limits.max_profile_bytes)
            problem = f"the gzip data inflates to more than {cap}, the profile size limit"
            raise ProfileReadError(source, problem + RAISE_HINT)
        if not inflater.eof:
            raise ProfileReadError(source, "gzip data is truncated or corrupt (incomplete stream)")
        data = inflater.unused_data  # concatenated gzip members, as gzip.decompress accepts
        if data[:2] != GZIP_MAGIC:
            break
    return b"".join(out)
