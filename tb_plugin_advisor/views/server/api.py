"""The Advisor tab's HTTP routes: parameters in, JSON answers out (analysis in analysis_service).

Routes (served by TensorBoard under /data/plugin/advisor/, ARCHITECTURE.md §2 "HTTP API"):
  runs                         the discovered runs (from the in-memory scan)
  report?run=R[&host=H]        the engine's report for one run (or one host of it)
  diff?baseline=R1&candidate=R2[&baseline_host=H&candidate_host=H]
  doctor                       doctor JSON for the whole logdir
  trend?run=PATTERN[&order=time|given]   the captures PATTERN names in order, change points, causes
  trace?run=R[&host=H]         the discovered profile file itself (gzip kept), for a trace viewer
  index.js, other static files looked up by exact name in the package's static/ directory

Only GET and HEAD are answered (405 with `Allow` otherwise). Every answer is JSON; failures are
`{"error": "..."}` with 400 (missing/bad parameter), 404 (unknown run, host or file), 413 (a trace
over the size cap), 422 (the profile cannot be read or analysed, or a trace file is not a profile),
503 (a worker process died, or every trace download slot is taken: Retry-After) or 500 (a bug in
the Advisor: `{"error": ..., "error_id": ...}`, the id logged with the traceback). A run name is
only looked up among discovered runs, never joined into a path; no answer carries an absolute
server path.
"""

from __future__ import annotations

import concurrent.futures
import gzip
import mimetypes
import os
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional

from tensorboard.backend import http_util
from werkzeug import wrappers

from tb_plugin_advisor.readers.formats.registry import file_patterns, format_named, is_analysed
from tb_plugin_advisor.sources.live import LiveDiscovery
from tb_plugin_advisor.sources.session import Session
from tb_plugin_advisor.views.server import worker_tasks
from tb_plugin_advisor.views.server.analysis_service import (
    AnalysisService,
    Answer,
    wait,
)
from tb_plugin_advisor.views.server.http_errors import (
    ApiError,
    PathMapper,
    WorkerCrashed,
    log_internal_error,
)
from tb_plugin_advisor.views.server.progress_board import ProgressBoard
from tb_plugin_advisor.views.server.trace_route import LIMITS as DOWNLOAD_LIMITS
from tb_plugin_advisor.views.server.trace_route import DownloadLimits, DownloadSlots, trace_response
from tb_plugin_advisor.views.server.trend_route import trend_route

JSON = "application/json"
MAX_PARAM_CHARS = 4096
# the built tab: tb_plugin_advisor/static, three levels above this file (views/server/api.py)
STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "static")
STATIC_DIR = os.path.normpath(STATIC_DIR)
STATIC_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".json": JSON}


ALLOWED_METHODS = ("GET", "HEAD")


def _respond(request: wrappers.Request, body: Any, status: int = 200) -> wrappers.Response:
    return http_util.Respond(request, body, JSON, code=status)


def _respond_answer(request: wrappers.Request, answer: Answer, content_type: str = JSON) -> wrappers.Response:
    """A cached answer as stored: its gzip for clients that accept it, else the plain bytes."""
    gzip_ok = "gzip" in request.headers.get("Accept-Encoding", "").lower()
    if gzip_ok:
        response = http_util.Respond(request, answer.gzipped, content_type, content_encoding="gzip")
    else:
        response = http_util.Respond(request, answer.body, content_type)
    response.headers["Vary"] = "Accept-Encoding"
    return response


def _param(request: wrappers.Request, name: str, required: bool = True) -> Optional[str]:
    values = request.args.getlist(name)
    if not values or values[0] == "":
        if required:
            raise ApiError(400, f"missing query parameter '{name}'")
        return None
    if len(values) > 1:
        raise ApiError(400, f"query parameter '{name}' given {len(values)} times; give it once")
    value = values[0]
    if len(value) > MAX_PARAM_CHARS or "\x00" in value:
        raise ApiError(400, f"query parameter '{name}' is not a valid run or host name")
    return value


def static_files(directory: str = STATIC_DIR) -> Dict[str, str]:
    """{"index.js": "/abs/.../static/index.js", "assets/x.css": ...}: the only files ever served."""
    table: Dict[str, str] = {}
    if not os.path.isdir(directory):
        return table
    for root, _dirs, files in os.walk(directory):
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, directory).replace(os.sep, "/")
            table[rel] = full
    return table


class BoundedDict(OrderedDict):
    """A thread-safe mapping that forgets its oldest entries beyond `limit`."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            return super().get(key, default)

    def __setitem__(self, key, value) -> None:
        with self._lock:
            super().__setitem__(key, value)
            while len(self) > self.limit:
                self.popitem(last=False)


class AdvisorApi:
    """The route handlers; `apps()` is what the plugin's get_plugin_apps() returns."""

    def __init__(
        self,
        discovery: LiveDiscovery,
        service: AnalysisService,
        static_dir: str = STATIC_DIR,
        logdir: str = "",
        downloads: DownloadLimits = DOWNLOAD_LIMITS,
    ):
        self.discovery = discovery
        self.service = service
        self.static_dir = static_dir
        self.static = static_files(static_dir)
        self.logdir = logdir or getattr(discovery, "logdir", "") or ""
        self.paths = PathMapper(self.logdir)
        self._host_checks = BoundedDict(4096)  # doctor's per-file results, by (path, size, mtime)
        self._static_answers: Dict[str, Answer] = {}  # only names of the static table, so bounded
        self._progress = ProgressBoard()  # running reports' progress, for 202 answers
        # per trend being gathered, the report bodies already answered (trend_route.py says why)
        self.trend_parts = BoundedDict(4)
        self.downloads = DownloadSlots(downloads)  # trace files being served (trace_route.py)

    def apps(self) -> Dict[str, Callable]:
        routes = {
            "/runs": self._handler(self.runs),
            "/report": self._handler(self.report),
            "/diff": self._handler(self.diff),
            "/trend": self._handler(self.trend),
            "/doctor": self._handler(self.doctor),
            "/trace": self._handler(self.trace),
            "/index.js": self._handler(self.static_file),
            "/*": self._handler(self.static_file),  # other static files; anything else: JSON 404
        }
        for rel in self.static:
            routes.setdefault("/" + rel, self._handler(self.static_file))
        return routes

    def _error(self, request: wrappers.Request, status: int, message: str, **extra: str) -> wrappers.Response:
        return _respond(request, {"error": self.paths.text(message), **extra}, status)

    def _handler(self, method: Callable[[wrappers.Request], wrappers.Response]) -> Callable:
        @wrappers.Request.application
        def app(request: wrappers.Request) -> wrappers.Response:
            if request.method not in ALLOWED_METHODS:
                response = self._error(
                    request, 405, f"method {request.method[:20]} not allowed; the Advisor API answers GET"
                )
                response.headers["Allow"] = ", ".join(ALLOWED_METHODS)
                return response
            try:
                return method(request)
            except ApiError as e:
                response = self._error(request, e.status, e.message)
                response.headers.extend(getattr(e, "headers", None) or {})
                return response
            except WorkerCrashed as e:
                log_internal_error(request.path, e)
                return self._error(request, 503, str(e))
            except Exception as e:  # noqa: BLE001 - a bug of ours: 500 JSON with an id, traceback in the log
                error_id = log_internal_error(request.path, e)
                return self._error(
                    request,
                    500,
                    f"internal error in the Advisor (id {error_id}); the traceback is in TensorBoard's log "
                    "under this id: please report it",
                    error_id=error_id,
                )

        return app

    # -- lookups -------------------------------------------------------------------------------

    def _session(self, run: str, host: Optional[str]) -> Session:
        session = self.discovery.lookup(run)
        if session is None:
            raise ApiError(404, f"unknown run '{run}' (the runs route lists the profile runs of the logdir)")
        if host is not None and session.host(host) is None:
            known = ", ".join(session.host_names) or "none"
            raise ApiError(404, f"run '{run}' has no host '{host}' (hosts: {known})")
        fmt = format_named(session.format)
        if fmt is not None and not fmt.analysed:  # listed, never read: the format says why
            files = ", ".join(session.files[:4])
            raise ApiError(422, f"run '{run}' holds " + fmt.not_read_because.format(files=files))
        if not session.hosts:
            raise ApiError(422, f"run '{run}' holds no profile file the Advisor reads ({file_patterns()})")
        return session

    def _report_future(self, session: Session, host: Optional[str]) -> concurrent.futures.Future:
        key = ("report", session.cache_key, host)

        def compute() -> Answer:
            hit = worker_tasks.cached_answer(session, host, self.logdir)
            if hit is not None:
                return Answer(*hit)
            progress = self._progress.start(key)
            try:
                return Answer(*self.service.in_process(
                    worker_tasks.report_answer, session, host, self.logdir, self.service.scheduler,
                    progress.path))
            finally:
                self._progress.finish(key)

        return self.service.future(key, compute)

    def _progress_of(self, session: Session, host: Optional[str], ready: bool = False) -> Dict[str, Any]:
        """The 202 answer's `progress`: how far reading a run has got (stage, bytes, elapsed)."""
        if ready:  # one side of a diff whose report is already there
            files = [f for f in session.hosts if host is None or f.host == host]
            size = sum(int(f.size_bytes or 0) for f in files)
            return {"stage": "done", "done_bytes": size, "total_bytes": size, "elapsed_s": 0.0}
        return self._progress.to_json(("report", session.cache_key, host))

    def _answer(self, request: wrappers.Request, ready: bool, value: Any, running: Dict) -> wrappers.Response:
        if not ready:
            return _respond(request, dict(status="running", **running), 202)
        return _respond_answer(request, value)

    # -- routes --------------------------------------------------------------------------------

    def runs(self, request: wrappers.Request) -> wrappers.Response:
        scan = self.discovery.scan
        return _respond(
            request,
            {"runs": [s.to_json() for s in scan.sessions], "scanned": self.discovery.ready},
        )

    def report(self, request: wrappers.Request) -> wrappers.Response:
        run = _param(request, "run")
        host = _param(request, "host", required=False)
        session = self._session(run, host)
        ready, value = wait(self._report_future(session, host), self.service.wait_s)
        return self._answer(request, ready, value, {"run": run, "progress": self._progress_of(session, host)})

    def diff(self, request: wrappers.Request) -> wrappers.Response:
        base_run = _param(request, "baseline")
        cand_run = _param(request, "candidate")
        base_host = _param(request, "baseline_host", required=False)
        cand_host = _param(request, "candidate_host", required=False)
        base = self._session(base_run, base_host)
        cand = self._session(cand_run, cand_host)
        running = {"baseline": base_run, "candidate": cand_run}
        # Both reports run side by side on the pool; the diff itself is only submitted once both
        # exist, so no worker ever waits for another (a small pool cannot deadlock on itself).
        deadline = time.monotonic() + self.service.wait_s
        base_future = self._report_future(base, base_host)
        cand_future = self._report_future(cand, cand_host)
        ready_b, base_report = wait(base_future, deadline - time.monotonic())
        ready_c, cand_report = wait(cand_future, deadline - time.monotonic())
        if not (ready_b and ready_c):
            running["progress"] = {"baseline": self._progress_of(base, base_host, ready_b),
                                   "candidate": self._progress_of(cand, cand_host, ready_c)}
            return self._answer(request, False, None, running)
        key = ("diff", base.cache_key, base_host, cand.cache_key, cand_host)

        def compute() -> Answer:
            encoded = self.service.in_process(worker_tasks.diff_answer, base_report.body, cand_report.body)
            return Answer(*encoded)

        ready, value = self.service.result(key, compute, max(0.0, deadline - time.monotonic()))
        return self._answer(request, ready, value, running)

    def trend(self, request: wrappers.Request) -> wrappers.Response:
        pattern = _param(request, "run")
        order = _param(request, "order", required=False) or "time"
        sessions = [s for s in self.discovery.scan.sessions if is_analysed(s.format) and s.hosts]
        ready, value, running = trend_route(  # views/server/trend_route.py
            pattern, order, sessions, self._report_future, self.service, self.trend_parts)
        return self._answer(request, ready, value, running)

    def trace(self, request: wrappers.Request) -> wrappers.Response:
        run = _param(request, "run")
        host = _param(request, "host", required=False)
        return trace_response(request, self._session(run, host), host, self.downloads)  # trace_route.py

    def doctor(self, request: wrappers.Request) -> wrappers.Response:
        scan = self.discovery.scan
        key = (
            "doctor",
            tuple(s.cache_key for s in scan.sessions + scan.loose),
            tuple((r.path, r.event_files) for r in scan.run_dirs),
        )

        def compute() -> Answer:
            hosts = [h.cache_key for s in scan.sessions + scan.loose for h in s.hosts]
            known = {k: check for k in hosts if (check := self._host_checks.get(k)) is not None}
            task = worker_tasks.doctor_answer
            body, gzipped, checks = self.service.in_process(task, scan, known, self.logdir)
            for k, check in checks.items():
                self._host_checks[k] = check
            return Answer(body, gzipped)

        ready, value = self.service.result(key, compute)
        return self._answer(request, ready, value, {})

    def static_file(self, request: wrappers.Request) -> wrappers.Response:
        # The path below the plugin prefix, e.g. "index.js"; only names in the table are served.
        marker = "/data/plugin/advisor/"
        path = request.path
        rel = path[path.index(marker) + len(marker) :] if marker in path else path.lstrip("/")
        full = self.static.get(rel)
        if full is None:
            raise ApiError(404, f"no such Advisor resource: '{rel[:200]}'")
        answer = self._static_answers.get(rel)
        if answer is None:  # read and compressed once: the tab's script is fetched on every page load
            try:
                with open(full, "rb") as f:
                    data = f.read()
            except OSError:
                raise ApiError(404, f"no such Advisor resource: '{rel[:200]}'") from None
            answer = self._static_answers[rel] = Answer(data, gzip.compress(data, 6, mtime=0))
        ext = os.path.splitext(rel)[1].lower()
        content_type = STATIC_TYPES.get(ext) or mimetypes.guess_type(rel)[0] or "application/octet-stream"
        return _respond_answer(request, answer, content_type)
