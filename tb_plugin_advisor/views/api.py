"""The Advisor tab's HTTP API: routes, errors as JSON, and analyses that never block the server.

Routes (served by TensorBoard under /data/plugin/advisor/, TEAM.md "HTTP API"):
  runs                         the discovered runs (from the in-memory scan)
  report?run=R[&host=H]        the engine's report for one run (or one host of it)
  diff?baseline=R1&candidate=R2[&baseline_host=H&candidate_host=H]
  doctor                       doctor JSON for the whole logdir
  index.js, other static files looked up by exact name in the package's static/ directory

Every answer is JSON with `Content-Type: application/json`; failures are `{"error": "..."}` with
400 (missing/bad parameter), 404 (unknown run, host or file) or 422 (the profile cannot be read or
analysed). A run name is only looked up among discovered runs, never joined into a path.

Analyses run on a small thread pool. Results are kept in a bounded LRU keyed by the files'
(path, size, mtime), concurrent requests for the same key share one future, and a request that
waits longer than `wait_s` gets 202 `{"status": "running"}` and polls again.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import mimetypes
import os
import queue
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Hashable, Optional, Tuple

from werkzeug import wrappers

from tb_plugin_advisor.sources.discovery import LiveDiscovery, Session

logger = logging.getLogger(__name__)

JSON = "application/json"
MAX_PARAM_CHARS = 4096
STATIC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static")
STATIC_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".json": JSON}


class ApiError(Exception):
    """A client-facing failure: becomes `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


# ---------------------------------------------------------------------------------------------------
# Shared, bounded, non-blocking analysis results


class DaemonPool:
    """A fixed set of daemon worker threads returning futures.

    concurrent.futures' pool joins its threads at interpreter exit, so Ctrl+C on TensorBoard would
    wait for a long analysis to finish; nobody needs a half-made report after the server is gone.
    """

    def __init__(self, workers: int, name: str = "advisor"):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()  # (future, fn) items; None stops a worker
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
            for i in range(max(1, workers))
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[[], Any]) -> concurrent.futures.Future:
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((fut, fn))
        return fut

    def shutdown(self) -> None:
        for _ in self._threads:
            self._queue.put(None)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fut, fn = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as e:  # noqa: BLE001 - delivered to every waiter
                fut.set_exception(e)
            else:
                fut.set_result(result)


class AnalysisService:
    """Runs analyses on a worker pool; remembers finished ones in an LRU; shares in-flight ones.

    `result(key, compute)` returns (True, value) when the value is ready within `wait_s`, else
    (False, None): the caller answers 202 and the same future keeps running for the next poll.
    Exceptions from `compute` are re-raised to every waiter; only ApiError outcomes (a corrupt
    file is corrupt until it changes, and then its key changes) are remembered.
    """

    def __init__(
        self, workers: int = 2, cache_size: int = 32, wait_s: float = 2.0, scheduler: Optional[str] = None
    ):
        self.wait_s = wait_s
        self.scheduler = scheduler  # a Dask scheduler address: a run's hosts are analysed there
        self.cache_size = max(1, cache_size)
        self._pool = DaemonPool(workers)
        self._lock = threading.RLock()
        self._done: OrderedDict[Hashable, concurrent.futures.Future] = OrderedDict()
        self._running: Dict[Hashable, concurrent.futures.Future] = {}
        self.computed = 0  # how many computations actually ran (tests check sharing with it)

    def future(self, key: Hashable, compute: Callable[[], Any]) -> concurrent.futures.Future:
        with self._lock:
            fut = self._done.get(key)
            if fut is not None:
                self._done.move_to_end(key)
                return fut
            fut = self._running.get(key)
            if fut is not None:
                return fut
            fut = self._pool.submit(lambda: self._counted(compute))
            self._running[key] = fut
            fut.add_done_callback(lambda f, k=key: self._finished(k, f))
            return fut

    def result(
        self, key: Hashable, compute: Callable[[], Any], wait_s: Optional[float] = None
    ) -> Tuple[bool, Any]:
        return _wait(self.future(key, compute), self.wait_s if wait_s is None else wait_s)

    def cached(self, key: Hashable) -> Optional[concurrent.futures.Future]:
        with self._lock:
            return self._done.get(key)

    def shutdown(self) -> None:
        self._pool.shutdown()

    def _counted(self, compute: Callable[[], Any]) -> Any:
        with self._lock:
            self.computed += 1
        return compute()

    def _finished(self, key: Hashable, fut: concurrent.futures.Future) -> None:
        with self._lock:
            if self._running.get(key) is fut:
                del self._running[key]
            error = fut.exception() if not fut.cancelled() else None
            if fut.cancelled() or (error is not None and not isinstance(error, ApiError)):
                return
            self._done[key] = fut
            self._done.move_to_end(key)
            while len(self._done) > self.cache_size:
                self._done.popitem(last=False)


# ---------------------------------------------------------------------------------------------------
# Analyses behind the routes (files are only ever opened through discovered sessions)


def build_report(session: Session, host: Optional[str], scheduler: Optional[str] = None) -> Dict[str, Any]:
    """The engine's report JSON for a session (all hosts, or one); hosts in parallel (hostpool.py)."""
    from tb_plugin_advisor.errors import ProfileReadError
    from tb_plugin_advisor.hostpool import build_session_report

    try:
        report = build_session_report(session, host, scheduler=scheduler)
    except ProfileReadError as e:
        raise ApiError(422, f"cannot read the profile of run '{session.run}': {e}") from None
    return to_jsonable(report)


def build_diff(baseline: Dict[str, Any], candidate: Dict[str, Any]) -> Dict[str, Any]:
    """The diff of two report JSON dicts (the diff works on what the user saw in the reports)."""
    from tb_plugin_advisor.analysis import diff as differ

    return to_jsonable(differ.diff_reports(baseline, candidate))


def to_jsonable(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        value = to_json()
    if isinstance(value, (bytes, str)):
        return json.loads(value)
    return value


# ---------------------------------------------------------------------------------------------------
# The WSGI side


def _wait(fut: concurrent.futures.Future, timeout: float) -> Tuple[bool, Any]:
    try:
        return True, fut.result(timeout=max(0.0, timeout))
    except concurrent.futures.TimeoutError:
        return False, None


def _respond(request: wrappers.Request, body: Any, status: int = 200) -> wrappers.Response:
    from tensorboard.backend import http_util

    return http_util.Respond(request, body, JSON, code=status)


def _error(request: wrappers.Request, status: int, message: str) -> wrappers.Response:
    return _respond(request, {"error": message}, status)


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

    def __init__(self, discovery: LiveDiscovery, service: AnalysisService, static_dir: str = STATIC_DIR):
        self.discovery = discovery
        self.service = service
        self.static_dir = static_dir
        self.static = static_files(static_dir)
        self._host_checks = BoundedDict(4096)  # doctor's per-file results, by (path, size, mtime)

    def apps(self) -> Dict[str, Callable]:
        routes = {
            "/runs": self._handler(self.runs),
            "/report": self._handler(self.report),
            "/diff": self._handler(self.diff),
            "/doctor": self._handler(self.doctor),
            "/index.js": self._handler(self.static_file),
            "/*": self._handler(self.static_file),  # other static files; anything else: JSON 404
        }
        for rel in self.static:
            routes.setdefault("/" + rel, self._handler(self.static_file))
        return routes

    def _handler(self, method: Callable[[wrappers.Request], wrappers.Response]) -> Callable:
        @wrappers.Request.application
        def app(request: wrappers.Request) -> wrappers.Response:
            try:
                return method(request)
            except ApiError as e:
                return _error(request, e.status, e.message)
            except Exception as e:  # noqa: BLE001 - a request never gets a 500 page or a traceback
                logger.exception("advisor: %s failed", request.path)
                why = f"{type(e).__name__}: {e}"
                return _error(request, 422, f"the Advisor could not handle this request ({why})")

        return app

    # -- lookups -------------------------------------------------------------------------------

    def _session(self, run: str, host: Optional[str]) -> Session:
        session = self.discovery.lookup(run)
        if session is None:
            raise ApiError(404, f"unknown run '{run}' (the runs route lists the profile runs of the logdir)")
        if host is not None and session.host(host) is None:
            known = ", ".join(session.host_names) or "none"
            raise ApiError(404, f"run '{run}' has no host '{host}' (hosts: {known})")
        if session.format == "legacy":
            raise ApiError(
                422,
                f"run '{run}' holds only older-format profiler files ({', '.join(session.files[:4])}); "
                "the Advisor reads <host>.xplane.pb files: capture the profile again with a current "
                "TensorFlow/JAX profiler",
            )
        if not session.hosts:
            raise ApiError(422, f"run '{run}' holds no <host>.xplane.pb file")
        return session

    def _report_future(self, session: Session, host: Optional[str]) -> concurrent.futures.Future:
        key = ("report", session.cache_key, host)
        return self.service.future(key, lambda: build_report(session, host, self.service.scheduler))

    def _answer(self, request: wrappers.Request, ready: bool, value: Any, running: Dict) -> wrappers.Response:
        if not ready:
            return _respond(request, dict(status="running", **running), 202)
        return _respond(request, to_jsonable(value))

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
        ready, value = _wait(self._report_future(session, host), self.service.wait_s)
        return self._answer(request, ready, value, {"run": run})

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
        ready_b, base_report = _wait(base_future, deadline - time.monotonic())
        ready_c, cand_report = _wait(cand_future, deadline - time.monotonic())
        if not (ready_b and ready_c):
            return self._answer(request, False, None, running)
        key = ("diff", base.cache_key, base_host, cand.cache_key, cand_host)
        compute = lambda: build_diff(base_report, cand_report)  # noqa: E731
        ready, value = self.service.result(key, compute, max(0.0, deadline - time.monotonic()))
        return self._answer(request, ready, value, running)

    def doctor(self, request: wrappers.Request) -> wrappers.Response:
        from tb_plugin_advisor.sources import doctor

        scan = self.discovery.scan
        key = (
            "doctor",
            tuple(s.cache_key for s in scan.sessions + scan.loose),
            tuple((r.path, r.event_files) for r in scan.run_dirs),
        )

        def compute():
            return doctor.diagnose_scan(scan, memo=self._host_checks).to_json()

        ready, value = self.service.result(key, compute)
        return self._answer(request, ready, value, {})

    def static_file(self, request: wrappers.Request) -> wrappers.Response:
        from tensorboard.backend import http_util

        # The path below the plugin prefix, e.g. "index.js"; only names in the table are served.
        marker = "/data/plugin/advisor/"
        path = request.path
        rel = path[path.index(marker) + len(marker) :] if marker in path else path.lstrip("/")
        full = self.static.get(rel)
        if full is None:
            raise ApiError(404, f"no such Advisor resource: '{rel[:200]}'")
        try:
            with open(full, "rb") as f:
                data = f.read()
        except OSError:
            raise ApiError(404, f"no such Advisor resource: '{rel[:200]}'") from None
        ext = os.path.splitext(rel)[1].lower()
        content_type = STATIC_TYPES.get(ext) or mimetypes.guess_type(rel)[0] or "application/octet-stream"
        return http_util.Respond(request, data, content_type)
