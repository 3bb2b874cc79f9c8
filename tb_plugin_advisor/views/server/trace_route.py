"""The `trace?run=R[&host=H]` route: one discovered profile file as it is on disk (a gzip trace stays
gzip), for the tab to hand to a trace viewer (Perfetto) or to download.

What is served, and what never is:

- only files the discovery found: the run is looked up among discovered runs and the host among that
  run's files, never a path from the request;
- only profiles: the file is opened once through the readers' guarded I/O (a regular file, checked
  on the descriptor) and its content checked to be the format its name claims, a Kineto JSON object
  with traceEvents or an XSpace (readers/profile_check.py); the bytes served then come from that
  same descriptor. A link in the logdir may point anywhere the TensorBoard user can read, as
  TensorBoard's own symlink trees do: the route serves what it points to only when that is a
  profile, so `/etc/passwd` or a key file behind a link answers 422, like the report of it;
- under the one size cap: the served bytes, and for gzip what they inflate to, measured by inflating
  them (never from the trailer, which its writer sets).

And bounded: the file is streamed from its descriptor a piece at a time (HEAD answered from its size
alone, no body), at most DownloadLimits.downloads at once (503 with Retry-After past that), and a
client that takes no byte for `stall_s`, or is still downloading after `longest_s`, is dropped
(TensorBoard's --advisor_trace_downloads and --advisor_trace_stall set the first two).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

from werkzeug import wrappers

from tb_plugin_advisor.errors import (
    ProfileChangedError,
    ProfileMissingError,
    ProfileReadError,
    ProfileTooLargeError,
)
from tb_plugin_advisor.readers.guarded_io import current
from tb_plugin_advisor.readers.profile_check import CheckedProfile, open_checked
from tb_plugin_advisor.sources.session import HostFile, Session
from tb_plugin_advisor.views.server.http_errors import ApiError

logger = logging.getLogger("tb_plugin_advisor")


@dataclass(frozen=True)
class DownloadLimits:
    """What one TensorBoard spends on trace downloads. Memory is `downloads` x `piece_bytes` (the
    socket buffers are the kernel's), whatever the files' sizes and however slowly clients read."""

    downloads: int = 4  # files served at once; the tab fetches one at a time
    piece_bytes: int = 256 << 10  # read from the file and written to the socket at a time
    stall_s: float = 60.0  # a client that takes no byte for this long is dropped
    # a client still downloading after this long is dropped: 512 MB (the cap) at 200 kB/s
    longest_s: float = 2700.0
    retry_after_s: int = 5  # what a 503 asks the client to wait

    def with_flags(self, downloads: int, stall_s: float) -> DownloadLimits:
        """TensorBoard's --advisor_trace_downloads and --advisor_trace_stall (at least 1 and 1 s)."""
        return dataclasses.replace(self, downloads=max(1, downloads), stall_s=max(1.0, stall_s))


LIMITS = DownloadLimits()


class DownloadSlots:
    """At most `limits.downloads` downloads at once; `take()` answers at once, never waits."""

    def __init__(self, limits: DownloadLimits = LIMITS):
        self.limits = limits
        self._free = threading.BoundedSemaphore(limits.downloads)

    def take(self) -> Optional[_Slot]:
        return _Slot(self._free) if self._free.acquire(blocking=False) else None


class _Slot:
    def __init__(self, semaphore: threading.BoundedSemaphore):
        self._semaphore: Optional[threading.BoundedSemaphore] = semaphore

    def release(self) -> None:
        semaphore, self._semaphore = self._semaphore, None
        if semaphore is not None:
            semaphore.release()


class _Download:
    """The response body: the checked file's bytes from its descriptor, a piece at a time. The
    server calls `close()` when the response ends, the client goes or the socket times out: the
    file and the slot are released there (also when no byte was ever asked for)."""

    def __init__(self, checked: CheckedProfile, slot: _Slot, limits: DownloadLimits):
        self._checked = checked
        self._slot = slot
        self._pieces = checked.file.pieces(limits.piece_bytes)
        self._longest_s = limits.longest_s
        self._deadline = time.monotonic() + limits.longest_s

    def __iter__(self) -> _Download:
        return self

    def __next__(self) -> bytes:
        if time.monotonic() > self._deadline:
            logger.warning("advisor: a trace download ran past %s s; it was cut", self._longest_s)
            raise StopIteration  # the body ends short of its Content-Length: the client sees it cut
        try:
            piece = next(self._pieces)
        except ProfileReadError as exc:  # truncated or rewritten while served: end it short
            logger.warning("advisor: a trace download stopped: %s", exc)
            raise StopIteration from None
        if self._checked.file.changed():
            logger.warning("advisor: %s changed while it was served; the download was cut",
                           self._checked.file.path)
            raise StopIteration
        return piece

    def close(self) -> None:
        self._pieces.close()
        self._checked.close()
        self._slot.release()


def trace_file(session: Session, host: Optional[str]) -> HostFile:
    """The host file of a discovered run: the one named, or the only one (400 when several)."""
    if host is not None:
        found = session.host(host)
        if found is None:  # _session checked it already; kept for a scan that changed meanwhile
            raise ApiError(404, f"run '{session.run}' has no host '{host}'")
        return found
    if len(session.hosts) != 1:
        names = ", ".join(session.host_names)
        raise ApiError(400, f"run '{session.run}' has several hosts ({names}): give host=")
    return session.hosts[0]


def _status(error: ProfileReadError) -> int:
    if isinstance(error, ProfileTooLargeError):
        return 413
    if isinstance(error, ProfileChangedError):
        return 409
    if isinstance(error, ProfileMissingError):
        return 404
    return 422  # not a profile, not a regular file, unreadable: as the report of the same file


def trace_response(request: wrappers.Request, session: Session, host: Optional[str],
                   slots: DownloadSlots) -> wrappers.Response:
    """The answer of the route for a discovered run (and host, checked by the caller's lookup), served
    through one of `slots`."""
    run = session.run
    chosen = trace_file(session, host)
    limits = slots.limits
    slot = slots.take()
    if slot is None:
        raise ApiError(503, f"{limits.downloads} trace downloads are running; try again in "
                       f"{limits.retry_after_s} s", headers={"Retry-After": str(limits.retry_after_s)})
    try:
        checked = open_checked(chosen.path, session.format, current())
    except ProfileReadError as e:
        slot.release()
        raise ApiError(_status(e), f"the trace of run '{run}' is not served: {e}", retry=True) from None
    except BaseException:
        slot.release()
        raise
    if request.method == "HEAD":
        checked.close()
        slot.release()
        body: Any = b""
    else:
        body = _Download(checked, slot, limits)
        _limit_stalls(request, limits.stall_s)
    return _response(body, chosen.path, checked)


def _limit_stalls(request: wrappers.Request, stall_s: float) -> None:
    """A socket timeout on the connection: a write that makes no progress for `stall_s` raises in the
    server thread, which then ends the response and closes the body (werkzeug's server puts the
    connection in the environ)."""
    connection = request.environ.get("werkzeug.socket")
    if connection is not None and hasattr(connection, "settimeout"):
        connection.settimeout(stall_s)


def _response(body: Any, path: str, checked: CheckedProfile) -> wrappers.Response:
    name = os.path.basename(path.rstrip("/"))
    kind = "application/gzip" if checked.gzipped else (
        "application/json" if name.endswith(".json") else "application/octet-stream")
    response = wrappers.Response(body, status=200, mimetype=kind, direct_passthrough=True)
    response.headers["Content-Length"] = str(checked.size)
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:200] or "trace"
    response.headers["Content-Disposition"] = f'attachment; filename="{safe}"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response
