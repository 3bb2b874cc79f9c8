"""What the HTTP API answers when something goes wrong, and the one place paths are made relative.

4xx: the request or the profile is at fault (`ApiError`, a message that says what and where).
500: the Advisor is at fault; the answer carries only a short error id, and the same id is logged
with the traceback, so a user can quote it and a maintainer can find it.
503: a worker process died (killed, out of memory); the pool is rebuilt and a retry may work. Also
all trace downloads busy, with Retry-After.
504: an analysis ran past its time budget (a hung file system); its worker was replaced.
No answer names an absolute server path: `PathMapper` rewrites the logdir prefix to relative paths
in every JSON body, including messages that readers raise with the file's full path.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
from typing import Any, Dict, Optional

logger = logging.getLogger("tb_plugin_advisor")


class ApiError(Exception):
    """A client-facing failure: becomes `{"error": message}` with `status`.

    `retry` marks an answer that must not be cached (a file changed while it was read); `headers` go
    on the answer (a 503's Retry-After).
    """

    def __init__(self, status: int, message: str, retry: bool = False,
                 headers: Optional[Dict[str, str]] = None):
        super().__init__(status, message, retry)  # args survive pickling from a worker process
        self.status = status
        self.message = message
        self.retry = retry
        self.headers = dict(headers or {})

    def __str__(self) -> str:
        return self.message


class WorkerCrashed(Exception):
    """An analysis worker process ended without an answer (killed, out of memory)."""


class AnalysisTimedOut(ApiError):
    """An analysis ran past its time budget; its worker was killed and replaced. Not cached: the
    file system may answer next time."""

    def __init__(self, message: str, status: int = 504, retry: bool = True):
        super().__init__(status, message, retry)


def new_error_id() -> str:
    return secrets.token_hex(4)


def log_internal_error(path: str, error: BaseException) -> str:
    """Log `error` with its traceback under a fresh id; return the id for the 500 answer."""
    error_id = new_error_id()
    logger.error(
        "advisor: internal error %s while answering %s",
        error_id,
        path,
        exc_info=(type(error), error, error.__traceback__),
    )
    return error_id


class PathMapper:
    """Rewrites `<logdir>/x/y` to `x/y` and a bare `<logdir>` to `.` in strings and JSON values."""

    def __init__(self, logdir: str):
        roots = {r.rstrip("/") for r in (logdir, os.path.abspath(logdir), os.path.realpath(logdir)) if r}
        roots.discard("")
        # Longest first, so a realpath that extends the given path is matched whole.
        alternatives = "|".join(re.escape(r) for r in sorted(roots, key=len, reverse=True))
        self._pattern = re.compile(f"(?:{alternatives})(?=/|[^\\w.-]|$)(/?)") if alternatives else None

    def text(self, value: str) -> str:
        if self._pattern is None:
            return value
        return self._pattern.sub(lambda m: "" if m.group(1) else ".", value)

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v) for v in value]
        return value
