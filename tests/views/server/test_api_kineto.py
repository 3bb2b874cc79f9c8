"""PyTorch runs through the HTTP API of a real TensorBoard on 127.0.0.1 (one server for the module)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fixtures_server import start_tensorboard
from synth import XSpaceBuilder
from synth_kineto import training_trace

RUN = "torch/resnet/2023_11_14_22_13_21.000"
BAD = "torch/broken/2023_11_14_22_13_21.000"


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("api_kineto") / "logs"
    trace = training_trace(steps=4)
    for worker in ("host_1", "host_2"):
        trace.write(root / "torch" / "resnet" / f"{worker}.1700000001000.pt.trace.json.gz")
    broken = root / "torch" / "broken" / "host_1.1700000001000.pt.trace.json.gz"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(trace.to_bytes(gzipped=True)[:200])  # truncated
    b = XSpaceBuilder(hostnames=["tfhost"])
    b.plane("/host:CPU").line("python", id=1).event("train", 1_700_000_000_000_000_000, 10**6,
                                                     stats={"step_num": 1, "_r": 1})
    b.write(root / "tf" / "plugins" / "profile" / "2024_01_01_00_00_00" / "tfhost.xplane.pb")
    return root


@pytest.fixture(scope="module")
def tb(logdir: Path):
    with start_tensorboard(logdir, "--reload_interval=1", "--advisor_reload_interval=1") as server:
        yield server


def poll(tb, route: str, timeout_s: float = 120, **params):
    deadline = time.monotonic() + timeout_s
    while True:
        status, body = tb.plugin(route, **params)
        if status != 202:
            return status, body
        assert time.monotonic() < deadline, f"{route} {params} still running after {timeout_s} s"
        time.sleep(0.25)


def test_runs_route_lists_pytorch_runs_with_framework(tb):
    runs = tb.wait_for(lambda: {r["run"]: r for r in tb.plugin("runs")[1]["runs"]} if RUN in str(
        tb.plugin("runs")[1]) else None)
    assert runs[RUN]["framework"] == "pytorch" and runs[RUN]["format"] == "kineto"
    assert runs[RUN]["hosts"] == ["host_1", "host_2"]
    assert runs["tf/2024_01_01_00_00_00"]["framework"] is None


def test_report_of_a_pytorch_run(tb):
    status, body = poll(tb, "report", run=RUN)
    assert status == 200, body
    assert body["hosts"] == ["host_1", "host_2"]
    assert body["steps"]["source"] == "profiler_step"
    assert body["steps"]["count"] == 8  # 4 ProfilerStep#N per worker, 2 workers
    status, body = poll(tb, "report", run=RUN, host="host_2")
    assert status == 200 and body["hosts"] == ["host_2"]


def test_truncated_trace_is_422_json_and_tensorboard_keeps_serving(tb):
    status, body = poll(tb, "report", run=BAD)
    assert status == 422 and "gzip data is truncated" in body["error"], body
    assert tb.plugin("runs")[0] == 200


def test_tensorboard_run_list_shows_the_pytorch_run_directory(tb):
    """The marker written into the run directory makes TensorBoard's own run selector list it."""
    runs = tb.wait_for(lambda: (lambda r: r if "torch/resnet" in r else None)(tb.get_json("/data/runs")[1]),
                       timeout_s=60)
    assert "torch/resnet" in runs
