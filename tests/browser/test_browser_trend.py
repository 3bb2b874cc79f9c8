"""The tab's Trend view on a real series: the committed H200 captures of one ResNet-50 configuration
(eight DataLoader workers) taken four times, then the single-process DataLoader (a real +270 %
regression), served by a real TensorBoard and read by headless Chromium. The view must list the five
captures in order, mark exactly the change point the trend JSON has, open the diff across it in one
click and a capture's report in one click."""

from __future__ import annotations

import json
import shutil

import pytest
from fixtures_server import TensorBoardServer, start_tensorboard
from paths import H200
from test_browser import browser_tools, drive, final_json, step_result  # noqa: F401 (fixture)

SAME_CONFIG = ("resnet50_fp32_workers8", "resnet50_fp32_workers8_repeat1", "resnet50_fp32_workers8_repeat2",
               "resnet50_fp32_workers8_repeat3")
REGRESSED = "resnet50_fp32_workers0"
# A PyTorch trace's capture time is the nanosecond stamp in its name; the single-process capture was in
# fact taken first, so as the series' newest capture it gets a stamp a minute and a half after the last
# repeat (2026-11-27 09:43:20 UTC).
REGRESSED_NAME = "gpu0.1795772600000000000.pt.trace.json.gz"
SERIES = "resnet50"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def trend_tb(tmp_path_factory, browser_tools) -> TensorBoardServer:  # noqa: F811
    """One run directory holding the five traces: PyTorch writes every capture of a job there."""
    root = tmp_path_factory.mktemp("browser_trend")
    run_dir = root / "logdir" / SERIES
    run_dir.mkdir(parents=True)
    for name in SAME_CONFIG:
        for trace in (H200 / name).glob("*.pt.trace.json.gz"):
            shutil.copy2(trace, run_dir / trace.name)
    [slow] = (H200 / REGRESSED).glob("*.pt.trace.json.gz")
    shutil.copy2(slow, run_dir / REGRESSED_NAME)
    with start_tensorboard(root / "logdir", "--advisor_write_markers=false",
                           "--advisor_cache_dir", str(root / "cache")) as server:
        yield server


def row(run: str) -> str:
    return f'[data-testid="trend-open-report"][data-run={json.dumps(run)}]'


def test_trend_view_marks_the_change_and_opens_its_diff_and_a_capture_report(
    trend_tb, browser_tools, tmp_path  # noqa: F811
):
    trend = final_json(trend_tb, "trend", run=SERIES)
    assert trend["schema"] == "tb-advisor/trend/1"
    [series] = trend["series"]
    captures = series["captures"]
    assert len(captures) == 5 and all(not c.get("error") for c in captures)
    changes = [p for p in series["change_points"] if p["significant"]]
    assert [p["index"] for p in changes] == [4]
    cp = changes[0]
    assert cp["delta_pct"] > 200 and cp["cause"]["category"] == "input"
    assert (cp["previous_run"], cp["run"]) == (captures[3]["run"], captures[4]["run"])
    repeat = captures[2]["run"]
    steps = [
        {"do": "openAdvisor"},
        {"do": "trend"},  # the series the run list offers first: the only one here
        {"do": "expectChart", "testid": "chart-trend", "minColours": 3},
        {"do": "expectCount", "selector": '[data-testid="trend-change"]', "min": 1, "max": 1},
        {"do": "expectExactText", "selector": '[data-testid="trend-change"] [data-testid="trend-cause"]',
         "text": f"Cause: {cp['cause']['summary']}"},
        {"do": "expectText", "testid": "trend-summary",
         "match": r"^5 captures, noise between captures ±\d+ %; 1 change point\.$"},
        {"do": "screenshot", "name": "advisor-trend", "fullAdvisor": True},
        {"do": "click", "testid": "trend-open-diff"},
        {"do": "expectDiffShown", "baseline": cp["previous_run"], "candidate": cp["run"]},
        {"do": "trend"},
        {"do": "click", "selector": row(repeat)},
        {"do": "expectReportShown", "run": repeat},
        {"do": "trend", "pattern": f"{SERIES}/"},  # a typed prefix: the same series
        {"do": "reloadPage"},
        {"do": "trend", "shown": True},  # the view and its pattern came back from the page's URL
    ]  # fmt: skip
    summary = drive(browser_tools, tmp_path, "trend", trend_tb.url + "/", steps)
    for shown in (step_result(summary, "trend", i) for i in (0, 2, 3)):
        assert [(r["index"], r["run"]) for r in shown["rows"]] == [(c["index"], c["run"]) for c in captures]
        assert [r["index"] for r in shown["rows"] if r["change"]] == [4]
        assert shown["chartChangePoints"] == [4]
    assert step_result(summary, "trend", 0)["pattern"] == SERIES
    assert step_result(summary, "trend", 3)["pattern"] == f"{SERIES}/"
    assert "view=diff" in step_result(summary, "expectDiffShown")["hash"]
    assert "view=report" in step_result(summary, "expectReportShown")["hash"]
