"""End to end: the roofline panel in a real TensorBoard and headless Chromium, on the constructed
PyTorch trace of test_roofline.py (A100, three ops whose FLOPs, times and roofs are known)."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from fixtures_server import start_tensorboard
from test_browser import browser_tools, drive, step_result  # noqa: F401 - the fixture is used by name
from test_report_roofline import MFU
from test_roofline import torch_trace

pytestmark = pytest.mark.browser


def test_roofline_panel(browser_tools, tmp_path):  # noqa: F811
    logdir = tmp_path / "logdir"
    (logdir / "torch_roofline").mkdir(parents=True)
    (logdir / "torch_roofline" / "w0.pt.trace.json").write_bytes(torch_trace())
    with start_tensorboard(logdir) as tb:
        status, runs = tb.plugin("runs")
        assert status == 200, runs
        run = runs["runs"][0]["run"]
        tb.wait_for(lambda: tb.plugin("report", run=run)[0] == 200, timeout_s=300)
        mfu = rf"MFU {MFU:.1f} % of the NVIDIA A100 40GB bf16 peak"
        far_below = '[data-testid="roofline-finding"][data-finding-id="roofline.far_below_roof"]'
        three_points = '[data-testid="roofline-chart"][data-chart-ready="3"]'
        steps: List[Dict[str, Any]] = [
            {"do": "openAdvisor"},
            {"do": "selectRun", "run": run},
            {"do": "expectText", "testid": "roofline-facts", "match": mfu},
            {"do": "expectChart", "testid": "roofline-chart", "minColours": 3},
            {"do": "expectCount", "selector": three_points, "max": 1},
            {"do": "collect", "selector": '[data-testid="roofline-row"]', "attr": "data-name", "min": 3},
            {"do": "collect", "selector": '[data-testid="roofline-row"]', "attr": "data-bound", "min": 3},
            {"do": "expectCount", "selector": far_below, "max": 1},
            {"do": "expectText", "testid": "roofline-ridge", "match": r"Ridge point 201 FLOP/byte"},
            {"do": "screenshot", "name": "advisor-roofline", "scrollTo": '[data-testid="roofline-card"]'},
        ]  # fmt: skip
        summary = drive(browser_tools, tmp_path, "roofline", tb.url + "/", steps)
    names = [r["attr"] for r in step_result(summary, "collect", 0)["items"]]
    bounds = [r["attr"] for r in step_result(summary, "collect", 1)["items"]]
    by_name = dict(zip(names, bounds))
    assert by_name == {"aten::add": "memory", "aten::mm": "compute", "aten::linear": "compute"}
