"""The tab shows what each fix is worth and, in the diff, whether it bought it: real H200 captures of a
ResNet-50 with a single-process DataLoader and with eight workers, served by a real TensorBoard and
read by headless Chromium."""

from __future__ import annotations

import re
import shutil

import pytest
from fixtures_server import TensorBoardServer, start_tensorboard
from paths import H200
from test_browser import browser_tools, diff_summary_steps, drive, final_json  # noqa: F401 (fixture)

from tb_plugin_advisor.report.document import Advice
from tb_plugin_advisor.views.export.report_lines import gain_line

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def h200_tb(tmp_path_factory) -> TensorBoardServer:
    logdir = tmp_path_factory.mktemp("browser_gains") / "logdir"
    for name in ("resnet50_fp32_workers0", "resnet50_fp32_workers8"):
        shutil.copytree(H200 / name, logdir / name)
    with start_tensorboard(logdir, "--advisor_write_markers=false") as server:
        yield server


def test_recommendation_gains_and_diff_outcomes_in_the_tab(h200_tb, browser_tools, tmp_path):  # noqa: F811
    status, body = h200_tb.plugin("runs")
    assert status == 200
    runs = {r["run"].split("/")[0]: r["run"] for r in body["runs"]}
    slow, fast = runs["resnet50_fp32_workers0"], runs["resnet50_fp32_workers8"]
    report = final_json(h200_tb, "report", run=slow)
    first = report["recommendations"][0]
    assert first["id"] == "input.dataloader_workers"
    low, high = first["expected_gain"]["ms_per_step"]
    assert 0 < low < high <= report["steps"]["mean_ms"]
    diff = final_json(h200_tb, "diff", baseline=slow, candidate=fast)
    assert "input.dataloader_workers + input.pin_memory: predicted" in diff["summary"]
    assert diff["summary"].rstrip().endswith("— within.")
    realized = re.search(r"realized [\d.]+ ms — within", diff["summary"]).group(0)
    steps = [
        {"do": "openAdvisor"},
        {"do": "selectRun", "run": slow},
        {"do": "expectExactText", "text": gain_line(Advice(first)).capitalize(),
         "selector": '[data-rec-id="input.dataloader_workers"] [data-testid="rec-gain"]'},
        {"do": "expectText", "selector": '[data-rec-id="profile.few_steps"] [data-testid="rec-gain"]',
         "match": "^Not estimated: improves the measurement, not the step$"},
        {"do": "diff", "baseline": slow, "candidate": fast},
        *diff_summary_steps(diff["summary"]),
        {"do": "expectText", "testid": "diff-summary", "match": re.escape(realized)},
        # the outcomes table: one row per recommendation of the baseline, the DataLoader fix first
        {"do": "expectCount", "selector": '[data-testid="diff-outcomes"] tbody tr',
         "min": len(diff["recommendation_outcomes"]), "max": len(diff["recommendation_outcomes"])},
        {"do": "expectText", "selector": '[data-testid="diff-outcomes"] tbody tr',
         "match": r"^input\.dataloader_workers\s*yes\s*[\d.]+–[\d.]+\s*\+1[45]\d.*"
                  r"within \(the 2 together\)$"},
    ]  # fmt: skip
    drive(browser_tools, tmp_path, "gains", h200_tb.url + "/", steps)
