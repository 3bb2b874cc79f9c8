"""The `trace?run=R[&host=H]` route through a real TensorBoard: it serves the file the discovery found,
byte for byte (gzip kept), and nothing else — an unknown run, a traversal in the run or host, a file
over the size cap (plain, or a gzip whose inflated size is over it) all answer JSON errors."""

from __future__ import annotations

import gzip
import json
import urllib.parse
from pathlib import Path

import pytest
from fixtures_server import start_tensorboard
from synth_kineto import training_trace

CAP_MB = 0.5  # --advisor_max_profile_mb: the small trace is under it, the big ones over


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("trace_route") / "logs"
    trace = training_trace(steps=3)
    trace.write(root / "torch" / "small" / "worker0.1700000001000.pt.trace.json.gz")
    for worker in ("host_1", "host_2"):
        trace.write(root / "torch" / "pair" / f"{worker}.1700000001000.pt.trace.json.gz")
    padding = {"traceEvents": [], "pad": "x" * int(CAP_MB * 2 * 2**20)}
    big = root / "torch" / "big" / "worker0.1700000001000.pt.trace.json"
    big.parent.mkdir(parents=True)
    big.write_text(json.dumps(padding))
    bomb = root / "torch" / "bomb" / "worker0.1700000001000.pt.trace.json.gz"
    bomb.parent.mkdir(parents=True)
    bomb.write_bytes(gzip.compress(json.dumps(padding).encode()))  # small on disk, big inflated
    return root


@pytest.fixture(scope="module")
def tb(logdir: Path):
    flags = (f"--advisor_max_profile_mb={CAP_MB}", "--advisor_reload_interval=1")
    with start_tensorboard(logdir, *flags) as server:
        server.wait_for(lambda: len(server.plugin("runs")[1]["runs"]) >= 4, timeout_s=60)
        yield server


def _get(tb, **params):
    return tb.get("/data/plugin/advisor/trace?" + urllib.parse.urlencode(params))


def _run(tb, prefix: str) -> str:
    return next(r["run"] for r in tb.plugin("runs")[1]["runs"] if r["run"].startswith(prefix))


def test_serves_the_discovered_file_byte_for_byte_gzip_kept(tb, logdir):
    file = logdir / "torch" / "small" / "worker0.1700000001000.pt.trace.json.gz"
    reply = _get(tb, run=_run(tb, "torch/small"), host="worker0")
    assert reply.status == 200
    assert reply.body == file.read_bytes() and reply.body[:2] == b"\x1f\x8b"
    assert reply.headers["Content-Type"] == "application/gzip"
    assert 'filename="worker0.1700000001000.pt.trace.json.gz"' in reply.headers["Content-Disposition"]
    assert reply.headers.get("Content-Encoding") is None  # the file itself, not a transfer encoding
    # the only host may be left out
    assert _get(tb, run=_run(tb, "torch/small")).body == file.read_bytes()


def test_several_hosts_need_the_host(tb, logdir):
    run = _run(tb, "torch/pair")
    reply = _get(tb, run=run)
    assert reply.status == 400 and "host" in reply.json()["error"]
    reply = _get(tb, run=run, host="host_2")
    assert reply.status == 200
    assert reply.body == (logdir / "torch" / "pair" / "host_2.1700000001000.pt.trace.json.gz").read_bytes()


@pytest.mark.parametrize("run", ["nope", "../../../etc/passwd", "/etc/passwd", "torch/small/../pair",
                                 "torch/small/worker0.1700000001000.pt.trace.json.gz", "..", "%2e%2e"])
def test_unknown_and_traversal_runs_are_404(tb, run):
    reply = _get(tb, run=run)
    assert reply.status == 404
    body = reply.json()
    assert "unknown run" in body["error"] and "/etc" not in json.dumps(body).replace(run, "")


@pytest.mark.parametrize("host", ["../pair/host_1", "worker0.1700000001000.pt.trace.json.gz", "/etc/passwd",
                                  "worker0/../../etc/passwd"])
def test_unknown_and_traversal_hosts_are_404(tb, host):
    reply = _get(tb, run=_run(tb, "torch/small"), host=host)
    assert reply.status == 404 and "has no host" in reply.json()["error"]


def test_missing_run_is_400(tb):
    reply = tb.get("/data/plugin/advisor/trace")
    assert reply.status == 400 and "run" in reply.json()["error"]


@pytest.mark.parametrize("name", ["torch/big", "torch/bomb"])
def test_a_file_over_the_cap_is_refused_with_the_limit(tb, name):
    reply = _get(tb, run=_run(tb, name))
    assert reply.status == 413
    error = reply.json()["error"]
    assert "over the limit" in error or "the profile size limit" in error
    assert "--advisor_max_profile_mb" in error
    assert "/tmp" not in error  # paths relative to the logdir, as every answer


def test_other_methods_are_405(tb):
    import urllib.error
    import urllib.request

    request = urllib.request.Request(tb.url + "/data/plugin/advisor/trace?run=x", method="POST", data=b"")
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=30)
    assert raised.value.code == 405
