"""Reading a profile so that nothing on disk can hang, crash or bloat the process: the one guarded
I/O layer both readers (xplane/, kineto/) use, and the one size cap they share.

- only regular files: the file is opened with O_NONBLOCK (a FIFO's open returns at once) and
  checked with fstat on the open descriptor, so a FIFO, socket, device or directory named like a
  profile is refused without a single blocking read, whatever the scan saw at that path before;
- no mmap: a file truncated under a mapping kills the process with SIGBUS, so bytes are copied with
  pread, one piece at a time;
- a file rewritten while it is read is detected (size, mtime, inode compared before and after;
  short reads) and reported as `ProfileChangedError`, which callers must not cache;
- one cap, `ReadLimits.max_profile_bytes` (bytes of profile data after decompression), checked
  before anything is read and while gzip is inflated; remote files are read through TensorBoard's
  file layer under the same cap.

The caps are one table of defaults; `configure()` changes them for the process (TensorBoard's
`--advisor_max_profile_mb`, the CLI's `--max-profile-mb`), a `ReadLimits` passed to a reader
overrides them for one read.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import zlib
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, Tuple, Union

from tb_plugin_advisor.errors import (
    ProfileChangedError,
    ProfileMissingError,
    ProfileReadError,
    ProfileTooLargeError,
)
from tb_plugin_advisor.formatting import fixed

MB = 1 << 20


@dataclass(frozen=True)
class ReadLimits:
    """Largest accepted sizes and counts; each is checked before the memory it costs is taken."""

    # Bytes of profile data (after gzip): reader + report peak near 3x this today (bench_report.py),
    # so 512 MB keeps the process under ~2 GB; larger captures raise the cap explicitly.
    max_profile_bytes: int = 512 * MB
    # Planes in one XSpace: real captures have one per device plus a few host planes.
    max_planes: int = 4096
    # Lines (threads, streams) in one plane.
    max_lines_per_plane: int = 200_000
    # Event and stat metadata entries in one plane (each becomes a Python object).
    max_metadata_per_plane: int = 2_000_000
    # Events in one file: decoding costs up to ~64 bytes per event while it runs, and an event can be
    # two bytes of file, so this (not the file size) bounds a hostile file to ~2 GB. Real profiles
    # hold ~30,000 events per MB (a 300 MB GPU profile: 9.5 M).
    max_events: int = 30_000_000

    def with_profile_mb(self, megabytes: float) -> ReadLimits:
        return dataclasses.replace(self, max_profile_bytes=int(megabytes * MB))


# The cap also travels in the environment: TensorBoard's analyses run in spawned worker processes
# (views/server/analysis_service.py), which inherit the variable but not this module's state.
CAP_ENV = "TB_ADVISOR_MAX_PROFILE_MB"


def _from_environment() -> ReadLimits:
    try:
        megabytes = float(os.environ.get(CAP_ENV, ""))
    except ValueError:
        return ReadLimits()
    return ReadLimits().with_profile_mb(megabytes) if megabytes > 0 else ReadLimits()


_current = _from_environment()


def current() -> ReadLimits:
    return _current


def configure(max_profile_mb: float, export: bool = False) -> ReadLimits:
    """Set the process-wide profile size cap (megabytes of profile data, after decompression);
    `export` also hands it to the worker processes started later (TensorBoard's analysis pool)."""
    global _current
    if not max_profile_mb > 0:
        raise ValueError(f"the profile size cap must be positive, not {max_profile_mb!r}")
    _current = _current.with_profile_mb(max_profile_mb)
    if export:
        os.environ[CAP_ENV] = repr(float(max_profile_mb))
    return _current


def describe_bytes(count: int) -> str:
    return f"{fixed(count / MB, 0)} MB" if count >= MB else f"{count} bytes"


GZIP_MAGIC = b"\x1f\x8b"
Compressed = Union[bytes, bytearray, memoryview, Iterable[bytes]]  # gzip data, whole or in pieces
INFLATE_CHUNK = 16 * MB  # inflated a piece at a time, so the cap is checked as the data grows
SIZING_CHUNK = 1 * MB  # pieces read and inflated while a gzip file is only sized (nothing is kept)
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


def too_big(source: str, size: int, limits: ReadLimits) -> ProfileTooLargeError:
    cap = describe_bytes(limits.max_profile_bytes)
    return ProfileTooLargeError(
        source,
        f"the profile is {describe_bytes(size)}, over the limit of {cap}"
        + RAISE_HINT,
    )


class ProfileFile:
    """A regular file opened for positioned reads; `close()` (or `with`) releases it."""

    def __init__(self, path: str, limits: ReadLimits, follow_links: bool = True):
        """`follow_links=False` refuses a symbolic link at `path` itself (O_NOFOLLOW): for files the
        Advisor wrote and names, where a link can only have been put there by someone else."""
        self.path = path
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        if not follow_links:
            flags |= getattr(os, "O_NOFOLLOW", 0)
        try:
            self._fd = os.open(path, flags)
        except FileNotFoundError as exc:
            raise ProfileMissingError(path, "cannot open file (No such file or directory)") from exc
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

    def pieces(self, size: int = INFLATE_CHUNK) -> Iterator[bytes]:
        """The file's bytes from the start, `size` at a time (short reads: ProfileReadError or
        ProfileChangedError, as `read`)."""
        for start in range(0, self.size, size):
            yield self.read(start, min(self.size, start + size))

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
    """Gunzip (every member, as `gzip -c a b` writes them, and the zero padding some tools add) with
    the size cap applied while inflating: a few KB of gzip can expand to GBs, and that never reaches
    memory. The size is found by inflating once without keeping anything (`inflated_size`), then the
    data is inflated into a buffer of exactly that size: a bomb is refused holding one piece, and a
    profile under the cap costs its own size, not the twice its size a growing buffer's copies took.
    Data that is not gzip passes as it is, within the same cap."""
    if data[:2] != GZIP_MAGIC:
        if len(data) > limits.max_profile_bytes:
            raise too_big(source, len(data), limits)
        return data
    out = bytearray(inflated_size(data, source, limits))
    at = 0
    with memoryview(out) as view:
        for chunk in inflate_pieces(data, source, limits):
            view[at:at + len(chunk)] = chunk
            at += len(chunk)
    return out


def inflated_size(compressed: Compressed, source: str, limits: ReadLimits) -> int:
    """How many bytes the gzip `compressed` inflates to, found by inflating it (a piece at a time,
    nothing kept), never from its trailer: ISIZE is the last member's size mod 2^32, which a writer
    can set to anything and which says nothing of the members before it. ProfileReadError past the
    cap, as soon as the cap is passed."""
    return sum(len(chunk) for chunk in inflate_pieces(compressed, source, limits, SIZING_CHUNK))


def inflate_pieces(compressed: Compressed, source: str, limits: ReadLimits, size: int = INFLATE_CHUNK
                   ) -> Iterator[bytes]:
    """The gzip `compressed` (bytes, or its pieces in order) inflated a piece of at most `size` bytes
    at a time, with `inflate`'s checks and errors: a reader that consumes the pieces as they come
    never holds the inflated whole, and never more than one byte past the cap is inflated."""
    cap = limits.max_profile_bytes
    total = 0
    inflater = None  # None between members, where zero padding may stand
    pieces = (compressed,) if isinstance(compressed, (bytes, bytearray, memoryview)) else compressed
    try:
        for piece in pieces:
            rest = bytes(piece)
            while rest:
                if inflater is None:
                    rest = rest.lstrip(b"\x00")  # zero padding between or after members
                    if not rest:
                        break
                    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                while True:
                    most = min(size, cap - total + 1)
                    chunk = inflater.decompress(rest, most)
                    rest = inflater.unconsumed_tail
                    if total + len(chunk) > cap:
                        limit = describe_bytes(cap)
                        problem = f"the gzip data inflates to more than {limit}, the profile size limit"
                        raise ProfileTooLargeError(source, problem + RAISE_HINT)
                    total += len(chunk)
                    if chunk:
                        yield chunk
                    # a full piece may leave output inside zlib: ask again until a piece comes short
                    if inflater.eof or (not rest and len(chunk) < most):
                        break
                if inflater.eof:
                    rest = inflater.unused_data  # the next member (or padding)
                    inflater = None
        if inflater is not None:
            raise ProfileReadError(source, "gzip data is truncated or corrupt (incomplete stream)")
    except zlib.error as exc:
        raise ProfileReadError(source, f"gzip data is truncated or corrupt ({exc})") from exc


def read_remote(source: str, limits: ReadLimits) -> bytes:
    """A whole file through TensorBoard's own file layer (gs://, s3://, any fsspec scheme), its size
    checked first and the read bounded all the same. The layer's stub, never `compat.tf`, which would
    import TensorFlow when it happens to be installed."""
    from tensorboard.compat.tensorflow_stub.io import gfile

    try:
        size = int(gfile.stat(source).length)
        if size > limits.max_profile_bytes:
            raise too_big(source, size, limits)
        with gfile.GFile(source, "rb") as handle:
            data = handle.read(limits.max_profile_bytes + 1)
    except ProfileReadError:
        raise
    except Exception as exc:  # the stub raises its own NotFoundError / UnimplementedError types
        raise ProfileReadError(source, f"cannot open file ({exc})") from exc
    if len(data) > limits.max_profile_bytes and data[:2] != GZIP_MAGIC:
        raise too_big(source, len(data), limits)
    return data


class RemoteFile:
    """A remote file (gs://, s3://, any fsspec scheme) read in pieces through TensorBoard's file layer,
    under the cap: what a caller that streams a file needs when there is no descriptor. Each
    `pieces()` call opens it anew (object stores have no links to swap; a changed object is caught
    by its size)."""

    def __init__(self, source: str, limits: ReadLimits):
        from tensorboard.compat.tensorflow_stub.io import gfile

        self.path = source
        self._gfile = gfile
        self._limits = limits
        try:
            self.size = int(gfile.stat(source).length)
        except Exception as exc:  # the stub raises its own NotFoundError / UnimplementedError types
            raise ProfileReadError(source, f"cannot open file ({exc})") from exc
        if self.size > limits.max_profile_bytes:
            raise too_big(source, self.size, limits)

    def __enter__(self) -> RemoteFile:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        """Nothing stays open between `pieces()` calls."""

    def changed(self) -> bool:
        return False

    def changed_error(self) -> ProfileChangedError:
        return ProfileChangedError(self.path, "the file changed while it was read; read again next time")

    def pieces(self, size: int = INFLATE_CHUNK) -> Iterator[bytes]:
        """The file's bytes from the start, `size` at a time; ProfileChangedError when it holds more
        or fewer bytes than its size said."""
        got = 0
        try:
            with self._gfile.GFile(self.path, "rb") as handle:
                while got <= self.size:
                    piece = handle.read(min(size, self.size + 1 - got))
                    if not piece:
                        break
                    got += len(piece)
                    yield piece
        except ProfileReadError:
            raise
        except Exception as exc:  # noqa: BLE001 - the file layer's own error types, as in read_remote
            raise ProfileReadError(self.path, f"cannot read file ({exc})") from exc
        if got != self.size:
            raise self.changed_error()


def read_whole(source: str, limits: ReadLimits) -> bytes:
    """A profile's bytes, inflated when gzip: a regular local file read with pread (and checked for
    a rewrite under the read), or a remote one; the one size cap applies to both, before and while
    inflating."""
    if "://" in source:
        return inflate(read_remote(source, limits), source, limits)
    with ProfileFile(source, limits) as handle:
        data = handle.read(0, handle.size) if handle.size else b""
        if handle.changed():
            raise handle.changed_error()
    return inflate(data, source, limits)


def read_head(source: str, size: int, limits: Optional[ReadLimits] = None) -> bytes:
    """At most `size` bytes of a local profile's text from its start, inflated when gzip, reading at
    most `size` bytes of the file: what a look at many files needs (discovery reads where a trace's
    events start) without the cost of a whole read. Under `read_whole`'s checks: only a regular
    file, within the size cap. A gzip stream cut off by the head is expected here, not an error; a
    corrupt one is. Remote sources are not read in part (ProfileReadError)."""
    if "://" in source:
        raise ProfileReadError(source, "only local files are read in part")
    with ProfileFile(source, limits or current()) as handle:
        data = handle.read(0, min(handle.size, size))
    if data[:2] != GZIP_MAGIC:
        return data
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, size)
    except zlib.error as exc:
        raise ProfileReadError(source, f"gzip data is corrupt ({exc})") from exc


def read_pieces(source: str, limits: ReadLimits, size: int = INFLATE_CHUNK) -> Iterator[bytes]:
    """A profile's bytes (inflated when gzip) a piece of at most `size` bytes at a time, under
    `read_whole`'s checks and errors: a reader that decodes the pieces as they come never holds the
    whole text. A local file is read with pread a piece at a time (and checked for a rewrite after
    its last piece); a gzip one is first sized by inflating it (nothing kept), so a bomb is refused
    before a reader decodes anything. A remote file is read whole (under the cap) first."""
    if "://" in source:
        yield from pieces_of(read_remote(source, limits), source, limits, size)
        return
    with ProfileFile(source, limits) as handle:
        if handle.size >= 2 and handle.read(0, 2) == GZIP_MAGIC:
            inflated_size(handle.pieces(SIZING_CHUNK), source, limits)
            yield from inflate_pieces(handle.pieces(), source, limits, size)
        else:
            yield from handle.pieces(size)
        if handle.changed():
            raise handle.changed_error()


def pieces_of(data: bytes, source: str, limits: ReadLimits, size: int = INFLATE_CHUNK) -> Iterator[bytes]:
    """Profile bytes held in memory, inflated when gzip, a piece of at most `size` bytes at a time
    under `inflate`'s cap and errors."""
    if data[:2] == GZIP_MAGIC:
        inflated_size(data, source, limits)  # a bomb is refused before a reader decodes a piece
        yield from inflate_pieces(data, source, limits, size)
        return
    if len(data) > limits.max_profile_bytes:
        raise too_big(source, len(data), limits)
    with memoryview(data) as view:
        for start in range(0, len(data), size):
            yield bytes(view[start:start + size])
