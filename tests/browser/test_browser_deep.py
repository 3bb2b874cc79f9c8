"""End to end: the deeper-view panels (kernel statistics, memory over time) in a real TensorBoard and
headless Chromium, on a synthetic GPU run whose numbers are known and on the bundled real TF run."""

from __future__ import annotations

import shutil
from typing import Any, Dict, List

import pytest
from deep_profiles import COLLECTIVE_MS, EXPOSED_MS, STEPS, TINY_PER_STEP, write_gpu_run
from fixtures_server import start_tensorboard
from paths import SAMPLE_LOGDIR
from test_browser import browser_tools, drive, step_result  # noqa: F401 - the fixture is used by name

pytestmark = pytest.mark.browser

SAMPLE = SAMPLE_LOGDIR


@pytest.fixture(scope="module")
def deep_tb(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("deep_logdir")
    gpu_run = write_gpu_run(logdir)
    shutil.copytree(SAMPLE / "run3_mixed", logdir / "run3_mixed")
    with start_tensorboard(logdir) as tb:
        status, runs = tb.plugin("runs")
        assert status == 200, runs
        names = [r["run"] for r in runs["runs"]]
        tf_run = next(n for n in names if n.startswith("run3_mixed"))
        yield tb, gpu_run, tf_run


def final_report(tb, run: str) -> Dict[str, Any]:
    def ready():
        status, body = tb.plugin("report", run=run)
        return body if status == 200 else None

    return tb.wait_for(ready, timeout_s=300)


def collectives_line(c: Dict[str, Any]) -> str:
    """What the panel must say, written here with the shared rounding rule (formatting.py)."""
    from tb_plugin_advisor.formatting import format_ms, format_pct

    assert c["per_step_ms"] == pytest.approx(COLLECTIVE_MS)
    assert c["exposed_per_step_ms"] == pytest.approx(EXPOSED_MS)
    share = format_pct(c["exposed_step_pct"])
    exposed = f"{format_ms(c['exposed_per_step_ms'])} of it exposed ({share} of the step)"
    return (f"{format_ms(c['per_step_ms'])} of collectives per step, {exposed}; "
            f"{format_pct(c['hidden_pct'])} hidden behind compute")


def test_kernel_statistics_and_memory_panels(deep_tb, browser_tools, tmp_path):  # noqa: F811
    tb, gpu_run, tf_run = deep_tb
    report = final_report(tb, gpu_run)
    kernels = report["kernel_stats"]["kernels"]
    collectives = report["collectives"]
    by_launches = [k["name"] for k in sorted(kernels, key=lambda k: -k["launches"])]
    launches = STEPS * (4 + TINY_PER_STEP)
    tiny_finding = '[data-testid="kernel-finding"][data-finding-id="kernels.tiny_launches"]'
    occupancy_cells = '[data-testid="kernel-row"] td:nth-child(11) span'
    steps: List[Dict[str, Any]] = [
        {"do": "openAdvisor"},
        {"do": "selectRun", "run": gpu_run},
        {"do": "expectText", "testid": "kernel-summary", "match": rf"^{launches} launches of 5 kernels"},
        {"do": "expectCount", "selector": '[data-testid="kernel-row"]', "min": 5, "max": 5},
        {"do": "expectCount", "selector": tiny_finding, "max": 1},
        {"do": "collect", "selector": '[data-testid="kernel-row"]', "attr": "data-name", "min": 5},
        {"do": "click", "testid": "kernel-sort-launches"},
        {"do": "collect", "selector": '[data-testid="kernel-row"]', "attr": "data-name", "min": 5},
        {"do": "fill", "testid": "kernel-filter", "value": "GEMM -tiny"},
        {"do": "expectCount", "selector": '[data-testid="kernel-row"]', "min": 1, "max": 1},
        {"do": "collect", "selector": occupancy_cells, "attr": "data-source", "min": 1},
        {"do": "fill", "testid": "kernel-filter", "value": "elementwise"},
        {"do": "collect", "selector": occupancy_cells, "attr": "data-source", "min": 2},
        {"do": "expectCount", "selector": '[data-testid="memory-chart"] polyline', "min": 1},
        {"do": "expectCount", "selector": '[data-testid="memory-peak"]', "min": 1, "max": 1},
        {"do": "expectText", "testid": "memory-facts", "match": r"Peak 900 MiB at \d+(\.\d+)? ms in step 3"},
        {"do": "expectCount", "selector": '[data-testid="memory-live"] tbody tr', "min": 1},
        {"do": "screenshot", "name": "advisor-deep-gpu", "scrollTo": '[data-testid="kernel-stats"]'},
        {"do": "expectExactText", "testid": "collectives-summary", "text": collectives_line(collectives)},
        {"do": "expectCount", "selector": '[data-testid="collectives-table"] tbody tr',
         "min": len(collectives["types"]), "max": len(collectives["types"])},
        {"do": "screenshot", "name": "advisor-deep-collectives",
         "scrollTo": '[data-testid="collectives-card"]'},
        {"do": "selectRun", "run": tf_run},
        {"do": "expectCount", "selector": '[data-testid="kernel-stats"]', "min": 0, "max": 0},
        {"do": "expectCount", "selector": '[data-testid="collectives-card"]', "min": 0, "max": 0},  # CPU run
        {"do": "expectCount", "selector": '[data-testid="memory-chart"] polyline', "min": 1},
        {"do": "expectText", "testid": "memory-facts", "match": r"allocations live at the peak.*bfloat16"},
        {"do": "screenshot", "name": "advisor-deep-memory-tf", "scrollTo": '[data-testid="memory-card"]'},
    ]  # fmt: skip
    summary = drive(browser_tools, tmp_path, "deep", tb.url + "/", steps)
    first = [i["attr"] for i in step_result(summary, "collect", 0)["items"]]
    assert first == [k["name"] for k in kernels], "default order: total time, as the report lists them"
    after_sort = [i["attr"] for i in step_result(summary, "collect", 1)["items"]]
    assert after_sort == by_launches, "clicking Launches sorts by launches, most first"
    gemm_source = step_result(summary, "collect", 2)["items"][0]["attr"]
    assert gemm_source == "profile_theoretical"
    sources = sorted(i["attr"] for i in step_result(summary, "collect", 3)["items"])
    assert sources == ["computed_theoretical", "computed_theoretical"]  # elementwise + the tiny fill kernel


def test_roofline_panel(deep_tb, browser_tools, tmp_path):  # noqa: F811
    """The synthetic GPU run's XLA cost stats: two ops on the roofline (the GEMM compute-bound at 50 %
    of its roof, the elementwise kernel memory-bound at 7.7 %), MFU 7.5 %, both findings."""
    tb, gpu_run, _ = deep_tb
    r = final_report(tb, gpu_run)["roofline"]
    assert r["mfu_pct"] == 7.5016 and [op["bound"] for op in r["ops"]] == ["compute", "memory"]
    far = '[data-testid="roofline-finding"][data-finding-id="roofline.far_below_roof"]'
    low = '[data-testid="roofline-finding"][data-finding-id="roofline.low_mfu"]'
    steps: List[Dict[str, Any]] = [
        {"do": "openAdvisor"},
        {"do": "selectRun", "run": gpu_run},
        {"do": "expectText", "testid": "roofline-facts", "match": r"NVIDIA A100 40GB: 312 TFLOP/s bf16 peak"},
        {"do": "expectText", "testid": "roofline-facts", "match": r"MFU 7\.5 ?%"},
        {"do": "expectChart", "testid": "roofline-chart", "minColours": 3},
        {"do": "expectCount", "selector": '[data-testid="roofline-row"]', "min": 2, "max": 2},
        {"do": "collect", "selector": '[data-testid="roofline-row"]', "attr": "data-bound", "min": 2},
        {"do": "expectCount", "selector": far, "min": 1, "max": 1},
        {"do": "expectCount", "selector": low, "min": 1, "max": 1},
        {"do": "screenshot", "name": "advisor-roofline", "scrollTo": '[data-testid="roofline-card"]'},
    ]  # fmt: skip
    summary = drive(browser_tools, tmp_path, "roofline", tb.url + "/", steps)
    assert [i["attr"] for i in step_result(summary, "collect", 0)["items"]] == ["compute", "memory"]
    assert step_result(summary, "expectChart")["points"] == 2
    # the HTML export draws the same chart with the embedded bundle, offline
    from tb_plugin_advisor.views.cli.main import main

    page = tmp_path / "report.html"
    assert main(["report", str(tb.logdir), "--run", gpu_run, "--format", "html", "-o", str(page)]) == 0
    exported = drive(browser_tools, tmp_path, "export-roofline", page.as_uri(), [
        {"do": "openPage"},
        {"do": "expectChart", "testid": "roofline-chart", "minColours": 3},
        {"do": "screenshot", "name": "export-roofline", "scrollTo": '[data-testid="roofline-chart"]'},
    ])  # fmt: skip
    assert step_result(exported, "expectChart")["points"] == 2
