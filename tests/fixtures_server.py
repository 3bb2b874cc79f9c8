"""A real TensorBoard in a subprocess, on 127.0.0.1, for tests that talk HTTP to it (pytest plugin).

Listed in tests/conftest.py's `pytest_plugins`. The installed package (`pip install -e .`) provides
the `advisor` entry point, so the server has the Advisor plugin exactly as a user's would.

API
---
`start_tensorboard(logdir, *flags, timeout_s=120, path_prefix="", env=None, python_args=...)`
    Starts `python -m tensorboard.main --logdir LOGDIR --host 127.0.0.1 --port 0 [--path_prefix P]
    *FLAGS`, reads the port TensorBoard picked from its own startup line, and returns once
    `/data/plugins_listing` answers 200. Raises `TensorBoardStartError` (with the server's log tail)
    when it exits early or is not answering within `timeout_s`. FLAGS are plain strings, e.g.
    "--reload_interval=1", "--advisor_write_markers=false".

`TensorBoardServer` (also a context manager that stops the server on exit):
    .url            "http://127.0.0.1:PORT" + path_prefix (no trailing slash)
    .base           "http://127.0.0.1:PORT" (without the prefix)
    .port, .logdir, .path_prefix, .log_path (the server's stdout+stderr), .process
    .get(path, timeout=60) -> Reply(status, headers, body: bytes)   path is relative to .url,
                     e.g. "/data/plugin/advisor/runs?run=x"; never raises on 4xx/5xx
    .get_json(path, timeout=60) -> (status, parsed JSON)
    .plugin(route, **params) -> (status, parsed JSON)   GET /data/plugin/advisor/<route>?params
                     (params are URL-encoded; use this for odd run names)
    .wait_for(predicate, timeout_s=30, interval_s=0.25) -> the first truthy predicate() result, or
                     raises AssertionError naming the timeout (for "appears after a reload cycle")
    .log_text() -> str   the server's log so far
    .stop()          terminate, then kill after 10 s, and delete the log; idempotent

Fixtures
--------
`tensorboard_factory` (function scope): `tensorboard_factory(logdir, *flags, **kw)` starts servers
    that are all stopped when the test ends.
For one server per test module, write a module-scoped fixture around `start_tensorboard`:

    @pytest.fixture(scope="module")
    def server(tmp_path_factory):
        logdir = tmp_path_factory.mktemp("logdir")
        ...
        with start_tensorboard(logdir, "--reload_interval=1") as tb:
            yield tb
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import pytest

_ADDRESS_RE = re.compile(r"http://127\.0\.0\.1:(\d+)/")


class TensorBoardStartError(RuntimeError):
    pass


@dataclass
class Reply:
    status: int
    headers: Dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


class TensorBoardServer:
    def __init__(self, process: subprocess.Popen, port: int, logdir: str, path_prefix: str, log_path: Path):
        self.process = process
        self.port = port
        self.logdir = logdir
        self.path_prefix = path_prefix.rstrip("/")
        self.log_path = log_path
        self.base = f"http://127.0.0.1:{port}"
        self.url = self.base + self.path_prefix

    def __enter__(self) -> TensorBoardServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def get(self, path: str, timeout: float = 60.0) -> Reply:
        request = urllib.request.Request(self.url + path, headers={"Accept-Encoding": "identity"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:
                return Reply(resp.status, dict(resp.headers.items()), resp.read())
        except urllib.error.HTTPError as e:
            return Reply(e.code, dict(e.headers.items()), e.read())

    def get_json(self, path: str, timeout: float = 60.0) -> Tuple[int, Any]:
        reply = self.get(path, timeout)
        return reply.status, reply.json()

    def plugin(self, route: str, timeout: float = 60.0, **params: str) -> Tuple[int, Any]:
        query = ("?" + urllib.parse.urlencode(params)) if params else ""
        return self.get_json(f"/data/plugin/advisor/{route}{query}", timeout)

    def wait_for(self, predicate: Callable[[], Any], timeout_s: float = 30.0, interval_s: float = 0.25):
        deadline = time.monotonic() + timeout_s
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met within {timeout_s} s; server log:\n{self._tail()}")
            time.sleep(interval_s)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def _tail(self, n: int = 3000) -> str:
        return self.log_text()[-n:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        with contextlib.suppress(OSError):
            self.log_path.unlink()


def start_tensorboard(
    logdir,
    *flags: str,
    timeout_s: float = 120.0,
    path_prefix: str = "",
    env: Optional[Dict[str, str]] = None,
    python_args: Sequence[str] = ("-m", "tensorboard.main"),
) -> TensorBoardServer:
    log_fd, log_name = tempfile.mkstemp(prefix="tensorboard-", suffix=".log")
    log_path = Path(log_name)
    args: List[str] = [
        sys.executable, *python_args,
        "--logdir", str(logdir), "--host", "127.0.0.1", "--port", "0",
    ]  # fmt: skip
    if path_prefix:
        args += ["--path_prefix", path_prefix]
    args += list(flags)
    child_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONUNBUFFERED="1")
    child_env.update(env or {})
    process = subprocess.Popen(
        args, stdout=log_fd, stderr=subprocess.STDOUT, env=child_env, cwd=tempfile.gettempdir()
    )
    os.close(log_fd)
    deadline = time.monotonic() + timeout_s
    port = None
    server = None
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                log = log_path.read_text(errors="replace")[-3000:]
                raise TensorBoardStartError(f"TensorBoard exited with {process.returncode}:\n{log}")
            if port is None:
                match = _ADDRESS_RE.search(log_path.read_text(errors="replace"))
                if match:
                    port = int(match.group(1))
                    server = TensorBoardServer(process, port, str(logdir), path_prefix, log_path)
            if server is not None:
                try:
                    if server.get("/data/plugins_listing", timeout=5).status == 200:
                        return server
                except OSError:
                    pass
            time.sleep(0.2)
        log = log_path.read_text(errors="replace")[-3000:]
        raise TensorBoardStartError(f"TensorBoard not answering after {timeout_s} s:\n{log}")
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        raise


@pytest.fixture
def tensorboard_factory():
    servers: List[TensorBoardServer] = []

    def start(logdir, *flags: str, **kwargs) -> TensorBoardServer:
        server = start_tensorboard(logdir, *flags, **kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
