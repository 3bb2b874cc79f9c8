"""The newcomer's path through the demo logdir (issue 14), in a real TensorBoard and Chromium.

The demo (`tb-advisor demo`) is what a new user sees first: four TensorFlow CPU runs and a PyTorch
story on an H200 (torch_resnet50/). Nothing on the CPU runs may look alarming: the precision panel
is neutral (fp32 is the CPU default), the Tensor Core card says why it is empty, and the doctor,
which finds only tips for TensorBoard's built-in Profile tab, shows no problem count. The PyTorch
input-bound run shows its DataLoader panel, its step source in words and Perfetto links (the
README's second picture). The compare view pre-selects the newest run against the one before and
compares without a button press; an error replaces the previous result; a reload of TensorBoard's
page lands on the same view, pair and run (the URL holds them).
Screenshots go to test-artifacts/screenshots/newcomer-*.png.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from fixtures_server import start_tensorboard
from paths import SAMPLE_LOGDIR
from test_browser import SCREENSHOTS, browser_tools, drive  # noqa: F401  (browser_tools: a fixture)

from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.runs import find_run, load_run

pytestmark = pytest.mark.browser

DEMO = SAMPLE_LOGDIR


@pytest.fixture(scope="module")
def demo_logdir(tmp_path_factory) -> Path:
    """A copy of the demo logdir: TensorBoard must never write next to the package's files."""
    dst = tmp_path_factory.mktemp("newcomer") / "logs"
    shutil.copytree(DEMO, dst)
    return dst


def report_of(scan, run: str) -> dict:
    return build_report(load_run(find_run(scan, run))).to_json()


ROWS = '[data-testid="ops-table"] tbody tr'
TOP_N = 10  # the op table's rows before a person picks more


def ops_table_steps(report: dict) -> list:
    """Top 10 by default (frontend/src/opfilter.ts DEFAULT_TOP_N); the filter narrows to matching names
    (still cut to the top 10); "all" shows every op; the % of step column is the op's time over the
    mean step, as the tab rounds it."""
    ops = sorted(report["ops"], key=lambda o: -o["time_ms"])
    assert len(ops) > TOP_N, len(ops)
    conv = [o for o in ops if "conv2d" in o["name"].lower()]
    shown_conv = min(len(conv), TOP_N)
    assert conv, len(conv)
    top_pct = 100 * ops[0]["time_ms"] / report["steps"]["mean_ms"]
    assert 10 <= top_pct < 100 and abs(top_pct - round(top_pct)) < 0.45, top_pct  # whole % either way
    return [
        {"do": "expectCount", "selector": ROWS, "min": TOP_N, "max": TOP_N},
        {"do": "expectText", "selector": f"{ROWS} td:nth-child(4)", "match": rf"^{round(top_pct)} %$"},
        {"do": "expectCount", "selector": f"{ROWS} td:nth-child(2) .adv-nowrap", "min": TOP_N, "max": TOP_N},
        {"do": "expectText", "testid": "ops-card", "flags": "s",
         "match": "^(?!.*(input_pipeline|host_compute)).*$"},
        {"do": "fill", "testid": "ops-table-filter", "text": "CONV2D"},
        {"do": "expectCount", "selector": ROWS, "min": shown_conv, "max": shown_conv},
        {"do": "expectText", "testid": "ops-table-count", "match": f"^{shown_conv} of {len(conv)} matching"},
        {"do": "fill", "testid": "ops-table-filter", "text": ""},
        {"do": "choose", "testid": "ops-table-topn", "value": "0"},
        {"do": "expectCount", "selector": ROWS, "min": len(ops), "max": len(ops)},
    ]


def test_newcomer_walks_the_demo_without_alarms(demo_logdir, browser_tools, tmp_path):  # noqa: F811
    scan = scan_logdir(str(demo_logdir))
    runs = sorted(s.run for s in scan.sessions if s.format != "kineto")
    assert len(runs) == 4, runs
    (torch_input_bound,) = [s.run for s in scan.sessions
                            if s.run.startswith("torch_resnet50/1_fp32_workers0/")]
    fp32 = "FP32 throughout (the default on a CPU)"
    steps = [{"do": "openAdvisor"}]
    opened = scan.sessions[0].run  # the tab opens on the newest run: its report is already there
    for i, run in enumerate(runs):
        verdict = report_of(scan, run)["precision"]["verdict"]
        active = ("Mixed precision is active", "ok")
        label, severity = (fp32, "neutral") if verdict == "not_active" else active
        assert verdict in ("not_active", "active"), (run, verdict)
        steps += [
            # --advisor_wait=0: each first request answers 202, so the tab must show a progress bar
            {"do": "selectRun", "run": run, "expectPending": run != opened, "expectProgress": run != opened},
            {"do": "expectExactText", "testid": "precision-verdict", "text": label},
            {"do": "expectCount", "selector": f'[data-testid="precision-verdict"] .sev-{severity}', "max": 1},
            {"do": "expectCount", "selector": '[data-testid="precision-card"] .sev-warn', "min": 0, "max": 0},
            {"do": "expectText", "testid": "precision-card",
             "match": "^(?!.*(bound, not measure|not active)).*$", "flags": "s"},
            {"do": "expectText", "testid": "tc-empty", "match": "this run used only the CPU"},
        ]  # fmt: skip
        if i == 0:  # run1_naive: the README's picture (docs/advisor-tab.png is copied from it)
            steps.append({"do": "screenshot", "name": "readme-advisor-tab"})
            steps += ops_table_steps(report_of(scan, run))
            steps.append({"do": "screenshot", "name": "newcomer-report-full", "fullAdvisor": True})
    steps += [
        {"do": "selectRun", "run": torch_input_bound},
        {"do": "expectText", "testid": "verdict-headline", "match": "^Input-bound"},
        {"do": "expectText", "testid": "steps-line",
         "match": r"^Steps: \d+ \(PyTorch profiler steps \(prof\.step\(\)\)\)"},
        {"do": "expectText", "testid": "input-facts", "match": "DataLoader"},
        {"do": "expectCount", "selector": '[data-testid="span-perfetto"]', "min": 1},
        {"do": "screenshot", "name": "readme-advisor-tab-pytorch"},
    ]  # fmt: skip
    newest = [s.run for s in scan.sessions]  # the server's order: newest capture first
    by_time = sorted(scan.sessions, key=lambda s: s.name, reverse=True)
    assert newest[:2] == [s.run for s in by_time[:2]], newest
    naive, parallel = runs[0], runs[1]
    panel_diff = '[data-testid="panel-diff"] [data-testid="diff"]'
    diff_error = '[data-testid="panel-diff"] [data-testid="error"]'
    steps += [
        # Compare: pre-selected newest vs the one before, compared without pressing a button.
        {"do": "clickNav", "panel": "diff"},
        {"do": "expectDiffShown", "baseline": newest[1], "candidate": newest[0]},
        # Same run twice: the error replaces the previous result instead of sitting above it.
        {"do": "choose", "testid": "diff-baseline", "value": newest[0]},
        {"do": "expectText", "selector": diff_error, "match": "same run"},
        {"do": "expectCount", "selector": panel_diff, "min": 0, "max": 0},
        {"do": "choose", "testid": "diff-baseline", "value": naive},
        {"do": "choose", "testid": "diff-candidate", "value": parallel},
        {"do": "expectDiffShown", "baseline": naive, "candidate": parallel},
        {"do": "expectCount", "selector": diff_error, "min": 0, "max": 0},
        # Reload TensorBoard's page: the tab comes back on the same view and pair.
        {"do": "reloadPage"},
        {"do": "expectDiffShown", "baseline": naive, "candidate": parallel},
        {"do": "clickNav", "panel": "report"},
        {"do": "selectRun", "run": parallel},
        {"do": "reloadPage"},
        {"do": "expectExactText", "selector": '[data-testid="report-run"] .adv-name', "text": parallel},
        {"do": "expectCount", "selector": '[data-testid="panel-report"]:not([hidden]) [data-testid=report]'},
        {"do": "doctor"},
        {"do": "expectText", "testid": "doctor-status", "match":
         rf"^The Advisor reads all {len(scan.sessions)} profile sessions; "
         r"\d tips? for TensorBoard's built-in Profile tab$"},
        {"do": "expectCount", "selector": '[data-testid="doctor-count"]', "min": 0, "max": 0},
        {"do": "expectCount", "selector": '[data-testid="doctor-status"][data-severity="ok"]', "max": 1},
        {"do": "expectText", "testid": "doctor", "flags": "s",
         "match": "^(?!.*(keras3_marker|root_marker)).*$"},
        {"do": "expectCount", "selector": '[data-testid="doctor-shared-fix"]', "max": 1},
        {"do": "expectCount", "selector": '[data-testid="doctor-fix"]', "max": 1},  # the Keras fix, once
        {"do": "screenshot", "name": "newcomer-doctor"},
    ]  # fmt: skip
    with start_tensorboard(demo_logdir, "--advisor_wait=0") as server:
        summary = drive(browser_tools, tmp_path, "newcomer", server.url + "/", steps)
    selected = [s for s in summary["steps"] if s["do"] == "selectRun"]
    assert [s["run"] for s in selected] == [*runs, torch_input_bound, runs[1]]
    for step in [s for s in selected[:4] if s["run"] != opened]:
        stage_words = r"^(waiting for a worker|starting|reading the profile|analysing)"
        assert re.match(stage_words, step["progress"]["text"]), step
    for name in ("newcomer-report-full", "newcomer-doctor", "readme-advisor-tab",
                 "readme-advisor-tab-pytorch"):
        assert (SCREENSHOTS / f"{name}.png").stat().st_size > 10_000, name


def test_html_exports_draw_the_tabs_charts_offline(demo_logdir, browser_tools, tmp_path):  # noqa: F811
    """`--format html` pages draw their charts with the tab's own bundle, from a file, fetching
    nothing: the same charts (same number of bars) as the tab shows for the same run."""
    from tb_plugin_advisor.views.cli.main import main

    scan = scan_logdir(str(demo_logdir))
    naive, parallel = sorted(s.run for s in scan.sessions)[:2]
    report_page, diff_page = tmp_path / "report.html", tmp_path / "diff.html"
    report_args = ["report", str(demo_logdir), "--run", parallel, "--format", "html", "-o", str(report_page)]
    assert main(report_args) == 0
    assert main(["diff", str(demo_logdir), naive, parallel, "--format", "html", "-o", str(diff_page)]) == 0

    exported = drive(browser_tools, tmp_path, "export-report", report_page.as_uri(), [
        {"do": "openPage"},
        {"do": "expectCount", "selector": 'html[data-charts-drawn="2"]', "max": 1},
        {"do": "expectChart", "testid": "chart-steps", "minColours": 3},
        {"do": "expectChart", "testid": "chart-precision", "minColours": 2},
        # the memory curve: the tab's own SVG chart, drawn into the export's slot by the bundle
        {"do": "expectCount", "selector": 'html[data-memory-charts-drawn="1"]', "max": 1},
        {"do": "expectCount", "selector": '[data-advisor-memory] [data-testid="memory-chart"] polyline',
         "min": 1},
        {"do": "screenshot", "name": "export-report"},
    ])  # fmt: skip
    drive(browser_tools, tmp_path, "export-diff", diff_page.as_uri(), [
        {"do": "openPage"},
        {"do": "expectCount", "selector": 'html[data-charts-drawn="1"]', "max": 1},
        {"do": "expectChart", "testid": "chart-delta", "minColours": 2},
        {"do": "screenshot", "name": "export-diff"},
    ])  # fmt: skip
    with start_tensorboard(demo_logdir) as server:
        tab = drive(browser_tools, tmp_path, "export-tab", server.url + "/", [
            {"do": "openAdvisor"},
            {"do": "selectRun", "run": parallel},
            {"do": "expectChart", "testid": "chart-steps", "minColours": 3},
        ])  # fmt: skip
    points = [s["points"] for s in exported["steps"] if s["do"] == "expectChart"]
    assert points[0] == [s["points"] for s in tab["steps"] if s["do"] == "expectChart"][0] > 0
