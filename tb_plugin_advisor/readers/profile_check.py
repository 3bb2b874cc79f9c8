"""Whether a file is the profile its name says it is, checked on the bytes of one open descriptor and
without decoding it: what the trace route must know before it serves a byte of a file that anyone
able to write into the logdir may have linked to `/etc/passwd` or `~/.ssh/id_rsa`.

`open_checked(path, format)` opens the file through guarded_io (a regular file, checked on the
descriptor; the size cap), then reads its content once, a piece at a time, inflating a gzip file as
it goes (that also sizes it: by inflating, under the cap, never from its trailer):

- a Kineto trace must be a JSON object whose `traceEvents` array starts within KINETO_HEAD bytes
  (the fields before it decoded as the reader decodes them: kineto/stream.py). The largest head in
  the corpus is 23 KB (TraceLens' MI300 traces); text, keys and other JSON have no such array;
- an XSpace must have XSpace's shape from its first byte to its last (xplane/signature.py).

The descriptor stays open and is returned with what was learnt: the caller serves the bytes it
checked from that same descriptor, so a link swapped after the check changes nothing, and a file
rewritten in place shows as changed (guarded_io's size and times). A remote file (gs://, s3://) is
read through TensorBoard's file layer; object stores have no links to swap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.guarded_io import (
    GZIP_MAGIC,
    SIZING_CHUNK,
    ProfileFile,
    ReadLimits,
    RemoteFile,
    inflate_pieces,
)
from tb_plugin_advisor.readers.kineto.stream import Declined, EventStream
from tb_plugin_advisor.readers.xplane.signature import XSpaceShape

KINETO_HEAD = 1 << 20  # bytes of text within which a trace's traceEvents array must start

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
    """The file at `path`, open, once its bytes are known to be a profile of format `fmt` ("kineto"
    or "xplane"); ProfileReadError (ProfileTooLargeError, ProfileMissingError, ProfileChangedError
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
    if fmt == "kineto":
        try:
            EventStream(pieces).head(within=KINETO_HEAD)
        except Declined as exc:
            problem = (f"not a PyTorch profiler trace: no JSON object with a traceEvents array in its "
                       f"first {KINETO_HEAD >> 20} MB ({exc})")
            raise ProfileReadError(path, problem) from None
        return
    if fmt == "xplane":
        shape = XSpaceShape(path)
        for piece in pieces:
            shape.feed(piece)
        shape.finish()
        return
    raise ProfileReadError(path, f"no check for the format '{fmt}': not served")
