"""Whether a file is the profile its name says it is, checked on the bytes of one open descriptor and
without decoding it: what the trace route must know before it serves a byte of a file that anyone
able to write into the logdir may have linked to `/etc/passwd` or `~/.ssh/id_rsa`.

`open_checked(path, format)` opens the file through guarded_io (a regular file, checked on the
descriptor; the size cap), then reads its content once, a piece at a time, inflating a gzip file as
it goes (that also sizes it: by inflating, under the cap, never from its trailer):

what the format's descriptor says a real file of it is (readers/formats/: a Kineto trace is a JSON
object whose `traceEvents` array starts within its first MB, kineto/head.py; an XSpace has XSpace's
shape from its first byte to its last, xplane/signature.py). A format with no content check is
never served.

The descriptor stays open and is returned with what was learnt: the caller serves the bytes it
checked from that same descriptor, so a link swapped after the check changes nothing, and a file
rewritten in place shows as changed (guarded_io's size and times). A remote file (gs://, s3://) is
read through TensorBoard's file layer; object stores have no links to swap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.formats.registry import format_named
from tb_plugin_advisor.readers.guarded_io import (
    GZIP_MAGIC,
    SIZING_CHUNK,
    ProfileFile,
    ReadLimits,
    RemoteFile,
    inflate_pieces,
)

Opened = Union[ProfileFile, RemoteFile]


@dataclass
class CheckedProfile:
    """An open profile file whose content was checked; `close()` releases it."""

    file: Opened
    size: int  # bytes on disk: what is served
    gzipped: bool
    inflated: int  # bytes once inflated (the size itself when not gzip)

    def close(self) -> None:
        self.file.close()


class _Counted:
    """The pieces of an iterator, counted as they pass."""

    def __init__(self, pieces: Iterator[bytes]):
        self._pieces = pieces
        self.total = 0

    def __iter__(self) -> Iterator[bytes]:
        for piece in self._pieces:
            self.total += len(piece)
            yield piece


def open_checked(path: str, fmt: str, limits: ReadLimits) -> CheckedProfile:
    """The file at `path`, open, once its bytes are known to be a profile of format `fmt` (a format
    id: Session.format); ProfileReadError (ProfileTooLargeError, ProfileMissingError, ProfileChangedError
    among them) saying why not."""
    opened: Opened = RemoteFile(path, limits) if "://" in path else ProfileFile(path, limits)
    try:
        if opened.size == 0:
            raise ProfileReadError(path, "the file is empty (0 bytes), not a profile")
        raw = opened.pieces(SIZING_CHUNK)
        first = next(raw)
        gzipped = first[:2] == GZIP_MAGIC
        raw = _chain(first, raw)
        content = _Counted(inflate_pieces(raw, path, limits, SIZING_CHUNK) if gzipped else raw)
        pieces = iter(content)
        _check_content(fmt, pieces, path)
        if gzipped:
            for _ in pieces:  # the rest is inflated only to size it (the cap applies as it grows)
                pass
        if opened.changed():
            raise opened.changed_error()
        return CheckedProfile(opened, opened.size, gzipped, content.total if gzipped else opened.size)
    except BaseException:
        opened.close()
        raise


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _check_content(fmt: str, pieces: Iterator[bytes], path: str) -> None:
    known = format_named(fmt)
    if known is None or known.check_content is None:
        raise ProfileReadError(path, f"no check for the format '{fmt}': not served")
    known.check_content(pieces, path)
