"""Honest HTTP answers from a real TensorBoard: 405 for other methods, 400/404/422 for bad input,
500 with a logged error id for a bug of ours, 503 for a dead worker (and recovery), no absolute
server path in any answer, analyses outside the server's process, gzip for cached answers.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from fixtures_server import start_tensorboard
from paths import TESTS
from synth import XSpaceBuilder

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000
ROUTES = ["runs", "report?run=good/s1", "diff?baseline=good/s1&candidate=other/s1", "doctor", "index.js"]
TESTS_DIR = str(TESTS)


def write_profile(path: Path, steps: int = 6) -> None:
    b = XSpaceBuilder(hostnames=[path.name.split(".")[0]])
    python = b.plane("/host:CPU").line("python", id=1)
    gpu = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    for i in range(steps):
        start = T0 + i * 50 * MS
        python.event("train", start, 45 * MS, stats={"step_num": i, "_r": 1})
        gpu.kernel("ampere_sgemm_128x64_tn", start + 5 * MS, 30 * MS, tf_op="model/dense/MatMul:MatMul")
    b.write(path)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("http") / "logs"
    for run in ("good", "other", "bug", "crash", "pid"):
        write_profile(root / run / "plugins/profile/s1/host0.xplane.pb")
    corrupt = root / "corrupt/plugins/profile/s1/host0.xplane.pb"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_bytes(b"\xff\xfe\xfd this is not an XSpace")
    return root


@pytest.fixture(scope="module")
def tb(logdir: Path):
    env = {"PYTHONPATH": os.pathsep.join([TESTS_DIR, os.environ.get("PYTHONPATH", "")])}
    with start_tensorboard(
        logdir,
        "--advisor_wait=30",
        env=env,
        python_args=["-c", "import advisor_faults; advisor_faults.main()"],
    ) as server:
        yield server


def request(tb, method: str, route: str, headers=None):
    url = f"{tb.url}/data/plugin/advisor/{route}"
    req = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, dict(resp.headers.items()), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()


def poll(tb, route: str, timeout_s: float = 120):
    deadline = time.monotonic() + timeout_s
    while True:
        reply = tb.get(f"/data/plugin/advisor/{route}", timeout=timeout_s)
        if reply.status != 202:
            return reply
        assert time.monotonic() < deadline, f"{route} still running after {timeout_s} s"
        time.sleep(0.25)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
@pytest.mark.parametrize("route", ROUTES)
def test_other_methods_are_405_with_allow(tb, method, route):
    status, headers, body = request(tb, method, route)
    assert status == 405, (method, route, body[:200])
    assert headers.get("Allow") == "GET, HEAD"
    assert "not allowed" in json.loads(body)["error"]


@pytest.mark.parametrize("route", ROUTES)
def test_head_is_answered_like_get_without_a_body(tb, route):
    poll(tb, route)
    status, _headers, body = request(tb, "HEAD", route)
    assert status == 200 and body == b""


@pytest.mark.parametrize(
    "route, status",
    [
        ("report", 400),
        ("report?run=a&run=b", 400),
        ("report?run=no/such", 404),
        ("report?run=good/s1&host=nohost", 404),
        ("diff?baseline=good/s1", 400),
        ("no-such-file.js", 404),
        ("report?run=corrupt/s1", 422),
    ],
)
def test_bad_requests_have_their_status_and_no_server_path(tb, logdir, route, status):
    reply = poll(tb, route)
    assert reply.status == status, reply.body[:300]
    assert "error" in reply.json()
    assert_no_server_path(reply.body, logdir)


def assert_no_server_path(body: bytes, logdir: Path) -> None:
    text = body.decode("utf-8")
    for root in {str(logdir), os.path.realpath(logdir), str(logdir.parent)}:
        assert root not in text, f"{root} in {text[:300]}"
    assert "/tmp/" not in text and "site-packages" not in text


@pytest.mark.parametrize("route", ROUTES[:4])
def test_successful_answers_carry_no_server_path(tb, logdir, route):
    reply = poll(tb, route)
    assert reply.status == 200, reply.body[:300]
    assert_no_server_path(reply.body, logdir)


def test_doctor_paths_are_relative_to_the_logdir(tb):
    body = poll(tb, "doctor").json()
    paths = re.findall(r'"path": "([^"]*)"', json.dumps(body))
    assert paths and "good/plugins/profile/s1" in paths, paths
    assert not any(p.startswith("/") for p in paths)


def test_a_bug_is_500_with_an_id_that_is_in_the_log_with_its_traceback(tb):
    reply = poll(tb, "report?run=bug/s1")
    assert reply.status == 500, reply.body[:300]
    body = reply.json()
    error_id = body["error_id"]
    assert re.fullmatch(r"[0-9a-f]{8}", error_id) and error_id in body["error"]
    assert "forced bug" not in body["error"]  # details stay in the log

    def logged():
        log = tb.log_text()
        at = log.find(f"internal error {error_id}")
        return at >= 0 and "Traceback" in log[at:] and "forced bug for the 500 test" in log[at:]

    tb.wait_for(logged, timeout_s=10)


def test_the_analysis_runs_in_another_process(tb):
    reply = poll(tb, "report?run=pid/s1")
    assert reply.status == 200
    worker_pid = reply.json()["pid"]
    assert worker_pid != tb.process.pid


def test_doctor_reads_the_profiles_in_another_process(tb):
    reply = poll(tb, "doctor")
    assert reply.status == 200
    assert reply.json()["worker_pid"] != tb.process.pid


def test_a_killed_worker_is_503_and_the_pool_recovers(tb):
    reply = poll(tb, "report?run=crash/s1")
    assert reply.status == 503, reply.body[:300]
    assert "worker" in reply.json()["error"]
    after = poll(tb, "report?run=other/s1")
    assert after.status == 200 and after.json()["run"] == "other/s1"


def test_cached_answers_are_gzipped_for_clients_that_accept_it(tb):
    plain = poll(tb, "report?run=good/s1")
    assert plain.status == 200
    status, headers, body = request(tb, "GET", "report?run=good/s1", {"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("Content-Encoding") == "gzip"
    assert json.loads(gzip.decompress(body)) == plain.json()
