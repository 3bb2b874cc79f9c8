"""A page a person can read: the report of every committed H200 capture and of the corpus ResNet-50
V100 trace, opened in the real tab at 1300 px wide with nothing opened, is under MAX_HEIGHT_PX, has
no visible run of text over 120 characters without a space (a C++ signature or raw symbol), shows
no table past its cap until "Show all" is clicked, and says its step source in words.

A real TensorBoard serves the captures; headless Chromium drives the tab (frontend/e2e/drive.mjs).
"""

from __future__ import annotations

import shutil

import pytest
from fixtures_server import TensorBoardServer, start_tensorboard
from paths import CORPUS, H200
from test_browser import browser_tools, drive  # noqa: F401 (fixture)

from tb_plugin_advisor.analysis.step_time.steps import STEP_SOURCE_WORDS

pytestmark = pytest.mark.browser

RESNET_V100 = CORPUS / "kineto" / "tb_plugin" / "samples" / "resnet50_num_workers_0"
CAPTURES = sorted(p.name for p in H200.iterdir() if p.is_dir())
# The tallest page (ResNet-50 fp32 on the H200, every card it has) was 15,500 px before tables were capped
# and names shortened.
MAX_HEIGHT_PX = 6000
MAX_RUN_CHARS = 120
TABLE_ROWS = 10  # frontend/src/dom.ts TABLE_ROWS: a table without its own top-N choice
TOP_N_ROWS = 25  # the op and kernel tables' default top-N (frontend/src/opfilter.ts, deep/data.ts)
ELIGIBLE_ROWS = 8  # the Tensor Cores card's eligible table (frontend/src/views/report.ts)
# Fixed tables read whole: one row per step-time category (eight at most), and the validity matrix,
# one row per analysis the Advisor runs (analysis/validity ANALYSES, and one for several hosts)
UNCAPPED = {"breakdown-table", "validity-table"}


@pytest.fixture(scope="module")
def readable_tb(tmp_path_factory) -> TensorBoardServer:
    logdir = tmp_path_factory.mktemp("browser_readable") / "logdir"
    for name in CAPTURES:
        shutil.copytree(H200 / name, logdir / name)
    if RESNET_V100.is_dir():
        shutil.copytree(RESNET_V100, logdir / "resnet50_v100")
    with start_tensorboard(logdir) as server:
        yield server


def _runs(tb: TensorBoardServer) -> list:
    status, body = tb.plugin("runs")
    assert status == 200, body
    return [run["run"] for run in body["runs"]]


@pytest.fixture(scope="module")
def pages(readable_tb, browser_tools, tmp_path_factory):  # noqa: F811
    """Every run's report opened in turn, as a person would: (run, its page's shape, its step line)."""
    runs = _runs(readable_tb)
    wanted = set(CAPTURES) | ({"resnet50_v100"} if RESNET_V100.is_dir() else set())
    assert {r.split("/")[0] for r in runs} >= wanted
    steps = [{"do": "openAdvisor"}]
    for run in runs:
        steps += [{"do": "selectRun", "run": run}, {"do": "expectReportShown", "run": run},
                  {"do": "pageShape"}, {"do": "collect", "selector": '[data-testid="steps-line"]'}]
        if run.startswith("resnet50_fp32_workers0/"):  # the tallest page: kept for a person to look at
            steps.append({"do": "screenshot", "name": "readable-resnet50-fp32-workers0", "fullAdvisor": True})
    summary = drive(browser_tools, tmp_path_factory.mktemp("readable"), "readable", readable_tb.url + "/",
                    steps, viewport=[1300, 900])
    shapes = [s for s in summary["steps"] if s["do"] == "pageShape"]
    lines = [s for s in summary["steps"] if s["do"] == "collect"]
    assert len(shapes) == len(lines) == len(runs)
    return list(zip(runs, shapes, lines))


def test_no_long_runs_no_table_past_its_cap_and_the_step_source_in_words(pages):
    words = set(STEP_SOURCE_WORDS)
    problems = []
    for run, shape, line in pages:
        if len(shape["longestRun"]) > MAX_RUN_CHARS:
            problems.append(f"{run}: a {len(shape['longestRun'])}-character run in {shape['longestIn']}: "
                            f"{shape['longestRun'][:80]}…")
        for t in shape["tables"]:
            cap = (TOP_N_ROWS if t["select"] and t["testid"] != "tc-eligible" else
                   ELIGIBLE_ROWS if t["testid"] == "tc-eligible" else TABLE_ROWS)
            if t["testid"] not in UNCAPPED and t["rows"] > cap:
                problems.append(f"{run}: table {t['testid']} shows {t['rows']} rows (cap {cap})")
        assert line["items"], run
        for item in line["items"]:
            if any(f"({key})" in item["text"] for key in words):
                problems.append(f"{run}: the step line shows a key: {item['text']}")
    assert not problems, "\n".join(problems)
    assert any(t["showAll"] for _, s, _ in pages for t in s["tables"])  # some table was over its cap


def test_every_report_page_is_short_with_nothing_opened(pages):
    tallest = max(pages, key=lambda page: page[1]["height"])
    print(f"tallest page: {tallest[0]}, {tallest[1]['height']} px of {len(pages)} pages")
    problems = []
    for run, shape, _ in pages:
        if shape["height"] >= MAX_HEIGHT_PX:
            cards = ", ".join(f"{c['testid']} {c['height']}" for c in shape["cards"])
            problems.append(f"{run}: {shape['height']} px tall ({cards})")
    assert not problems, "\n".join(problems)
