"""The real Advisor tab on PyTorch runs beside a TensorFlow run: framework badges, the same panels,
PyTorch snippets, no Profile-tab link (xprof cannot open Kineto traces), the diff of two PyTorch runs.

Traces come from a real torch.profiler in this session (tests/torch_traces.py); a real TensorBoard
serves them and headless Chromium drives the tab through frontend/e2e/drive.mjs.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest
from fixtures_server import TensorBoardServer, start_tensorboard
from test_browser import RUN_SHOWN, browser_tools, diff_summary_steps, drive, final_json  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def torch_tb(torch_traces, tf_profiles, tmp_path_factory) -> TensorBoardServer:
    logdir = tmp_path_factory.mktemp("browser_torch") / "logdir"
    for name in ("slow_loader", "fast_loader"):
        shutil.copytree(torch_traces.run_dir(name), logdir / name)
    shutil.copytree(tf_profiles.logdir / tf_profiles.run_name("loop_fixed").split("/")[0],
                    logdir / tf_profiles.run_name("loop_fixed").split("/")[0])
    with start_tensorboard(logdir) as server:
        yield server


def _runs_by_dir(tb: TensorBoardServer) -> Dict[str, Dict[str, Any]]:
    status, body = tb.plugin("runs")
    assert status == 200, body
    return {run["run"].split("/")[0]: run for run in body["runs"]}


def test_pytorch_runs_in_the_tab_beside_a_tf_run(torch_tb, browser_tools, tmp_path: Path):  # noqa: F811
    runs = _runs_by_dir(torch_tb)
    slow, fast = runs["slow_loader"]["run"], runs["fast_loader"]["run"]
    assert runs["slow_loader"].get("framework") == "pytorch"
    tf_run = next(r["run"] for key, r in runs.items() if key not in ("slow_loader", "fast_loader"))
    report = final_json(torch_tb, "report", run=slow)
    assert report["verdict"]["bottleneck"] == "input"
    diff = final_json(torch_tb, "diff", baseline=slow, candidate=fast)
    steps: List[Dict[str, Any]] = [
        {"do": "openAdvisor"},
        {"do": "selectRun", "run": slow},
        {"do": "expectExactText", "selector": RUN_SHOWN, "text": slow},
        {"do": "expectExactText", "testid": "framework-badge", "text": "PyTorch"},
        {"do": "expectExactText", "testid": "verdict-headline", "text": report["verdict"]["summary"].strip()},
        {"do": "expectChart", "testid": "chart-steps", "minPixels": 2000, "minColours": 2},
        {"do": "expectCount", "selector": '[data-testid="breakdown-table"] tbody tr', "min": 2},
        {"do": "expectRecommendation", "id": "input.dataloader_workers"},
        {"do": "expectCount", "selector": '[data-testid="snippet-pytorch"]', "min": 1},
        {"do": "expectCount", "selector": '[data-testid="snippet-tf"], [data-testid="snippet-jax"]',
         "min": 0, "max": 0},
        {"do": "expectCount", "selector": '[data-testid="profile-links"]', "min": 0, "max": 0},
        {"do": "expectText", "selector": '[data-testid="run-select"]', "match": "· PyTorch"},
        {"do": "screenshot", "name": "advisor-report-pytorch"},
        {"do": "selectRun", "run": tf_run},
        {"do": "expectExactText", "testid": "framework-badge", "text": "TF/JAX"},
        {"do": "expectCount", "selector": '[data-testid="profile-links"]', "min": 1, "max": 1},
        {"do": "diff", "baseline": slow, "candidate": fast},
        *diff_summary_steps(diff["summary"]),
    ]  # fmt: skip
    summary = drive(browser_tools, tmp_path, "pytorch", torch_tb.url + "/", steps)
    shown = [s for s in summary["steps"] if s["do"] == "expectRecommendation"]
    assert shown[0]["id"] == "input.dataloader_workers"
