"""The `trace?run=R[&host=H]` route: one discovered profile file as it is on disk (a gzip trace stays
gzip), for the tab to hand to a trace viewer (Perfetto) or to download. Only files the discovery
found are served: the run is looked up among discovered runs and the host among that run's files,
never a path from the request. The one size cap of readers/guarded_io.py applies: to the bytes
served, and for gzip to the size its trailer declares once inflated (what a viewer must hold)."""

from __future__ import annotations

import os
import struct
from typing import Any, Optional

from werkzeug import wrappers

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.guarded_io import GZIP_MAGIC, ProfileFile, current, read_remote, too_big
from tb_plugin_advisor.sources.session import HostFile, Session
from tb_plugin_advisor.views.server.http_errors import ApiError


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


def read_served(path: str) -> bytes:
    """The file's bytes under the cap (ProfileReadError when over it or unreadable)."""
    limits = current()
    if "://" in path:
        data = read_remote(path, limits)
    else:
        with ProfileFile(path, limits) as handle:
            data = handle.read(0, handle.size) if handle.size else b""
            if handle.changed():
                raise handle.changed_error()
    if data[:2] == GZIP_MAGIC and len(data) >= 18:
        inflated = struct.unpack("<I", data[-4:])[0]  # ISIZE: the last member's size mod 2^32
        if inflated > limits.max_profile_bytes:
            raise too_big(path, inflated, limits)
    return data


def trace_response(api: Any, request: wrappers.Request, param: Any) -> wrappers.Response:
    """The answer of the route; `api` is the AdvisorApi (its run lookup and its error wording)."""
    run = param(request, "run")
    host = param(request, "host", required=False)
    chosen = trace_file(api._session(run, host), host)
    try:
        data = read_served(chosen.path)
    except ProfileReadError as e:
        status = 413 if "over the limit" in str(e) else 404
        raise ApiError(status, str(e), retry=True) from None
    name = os.path.basename(chosen.path.rstrip("/"))
    gzipped = data[:2] == GZIP_MAGIC
    kind = "application/gzip" if gzipped else (
        "application/json" if name.endswith(".json") else "application/octet-stream")
    response = wrappers.Response(b"" if request.method == "HEAD" else data, status=200, mimetype=kind)
    response.headers["Content-Length"] = str(len(data))
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:200] or "trace"
    response.headers["Content-Disposition"] = f'attachment; filename="{safe}"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response
