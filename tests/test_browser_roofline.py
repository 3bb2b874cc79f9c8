"""End to end: the roofline panel in a real TensorBoard and headless Chromium, on the constructed
PyTorch trace of test_roofline.py (A100, three ops whose FLOPs, times and roofs are known), and the
Compare view's MFU line against the same trace with steps half as long."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from fixtures_server import start_tensorboard
from test_browser import browser_tools, drive, step_result  # noqa: F401 - the fixture is used by name
from test_report_roofline import MFU, STEP_FLOPS
from test_roofline import A100_BF16, MS, STEP_MS, US, torch_trace

pytestmark = pytest.mark.browser


def test_roofline_panel(browser_tools, tmp_path):  # noqa: F811
    logdir = tmp_path / "logdir"
    (logdir / "torch_roofline").mkdir(parents=True)
    (logdir / "torch_roofline" / "w0.pt.trace.json").write_bytes(torch_trace())
    (logdir / "torch_roofline_fast").mkdir(parents=True)
    (logdir / "torch_roofline_fast" / "w0.pt.trace.json").write_bytes(torch_trace(step_ms=STEP_MS // 2))
    fast_mfu = 100 * STEP_FLOPS / ((STEP_MS // 2 * MS - US) / 1e9) / A100_BF16
    with start_tensorboard(logdir) as tb:
        status, runs = tb.plugin("runs")
        assert status == 200, runs
        by_dir = {r["run"].split("/")[0]: r["run"] for r in runs["runs"]}
        run, fast = by_dir["torch_roofline"], by_dir["torch_roofline_fast"]
        for name in (run, fast):
            tb.wait_for(lambda name=name: tb.plugin("report", run=name)[0] == 200, timeout_s=300)
        mfu = rf"MFU {MFU:.1f} % of the NVIDIA A100 40GB bf16 peak"
        mfu_move = rf"^MFU {MFU:.1f} % → {fast_mfu:.1f} % of the bf16 peak"
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
            {"do": "diff", "baseline": run, "candidate": fast},
            {"do": "expectText", "testid": "diff-mfu", "match": mfu_move},
        ]  # fmt: skip
        summary = drive(browser_tools, tmp_path, "roofline", tb.url + "/", steps)
    names = [r["attr"] for r in step_result(summary, "collect", 0)["items"]]
    bounds = [r["attr"] for r in step_result(summary, "collect", 1)["items"]]
    by_name = dict(zip(names, bounds))
    assert by_name == {"aten::add": "memory", "aten::mm": "compute", "aten::linear": "compute"}
