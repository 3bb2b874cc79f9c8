"""The input pipeline card in the real tab: the DataLoader panel on the H200 ResNet-50 captures
(num_workers=0: input-bound, pageable copies whose non_blocking has no effect; 8 workers: pinned and
overlapped) and the input annotations panel on the JAX capture, each with the numbers of the report
the same server answers. A real TensorBoard serves them; headless Chromium drives the tab."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any, Dict

import pytest
from fixtures_server import TensorBoardServer, start_tensorboard
from paths import H200
from test_browser import RUN_SHOWN, browser_tools, drive, final_json  # noqa: F401 (fixture)

from tb_plugin_advisor.formatting import format_ms, format_pct

pytestmark = pytest.mark.browser

RUNS = ("resnet50_fp32_workers0", "resnet50_fp32_workers8", "jax_mlp_slow_input")
TITLE = '[data-testid="input-pipeline"] h2'


@pytest.fixture(scope="module")
def captures_tb(tmp_path_factory) -> TensorBoardServer:
    logdir = tmp_path_factory.mktemp("browser_dataloader") / "logdir"
    for name in RUNS:
        shutil.copytree(H200 / name, logdir / name)
    with start_tensorboard(logdir) as server:
        yield server


def run_names(tb: TensorBoardServer) -> Dict[str, str]:
    status, body = tb.plugin("runs")
    assert status == 200, body
    return {run["run"].split("/")[0]: run["run"] for run in body["runs"]}


def exact(text: str) -> str:
    return re.escape(text)


def test_dataloader_and_annotation_panels_in_the_tab(captures_tb, browser_tools, tmp_path: Path):  # noqa: F811
    runs = run_names(captures_tb)
    reports: Dict[str, Any] = {k: final_json(captures_tb, "report", run=runs[k]) for k in RUNS}
    zero, eight = (reports[k]["input_pipeline"]["dataloader"] for k in RUNS[:2])
    jax = reports["jax_mlp_slow_input"]["input_pipeline"]["annotations"]
    steps = [
        {"do": "openAdvisor"},
        {"do": "selectRun", "run": runs["resnet50_fp32_workers0"]},
        {"do": "expectExactText", "selector": RUN_SHOWN, "text": runs["resnet50_fp32_workers0"]},
        {"do": "expectExactText", "selector": TITLE, "text": "Input pipeline · PyTorch DataLoader"},
        {"do": "expectText", "testid": "dl-iterator",
         "match": "_SingleProcessDataLoaderIter · num_workers=0"},
        {"do": "expectText", "testid": "dl-wait", "match": exact(
            f"{format_ms(zero['wait_ms_per_step'])} per step ({format_pct(zero['wait_pct'])} of the step)")},
        {"do": "expectText", "testid": "dl-pinned", "match": "no: batches are copied from pageable memory"},
        {"do": "expectText", "testid": "dl-non-blocking", "match": "^check True, but no effect"},
        {"do": "expectCount", "selector": '[data-testid="dl-main-process"] tbody tr', "min": 3, "max": 3},
        {"do": "expectCount", "selector": '[data-testid="input-stages"]', "min": 0, "max": 0},
        {"do": "screenshot", "name": "advisor-dataloader-workers0", "scrollTo": TITLE},
        {"do": "selectRun", "run": runs["resnet50_fp32_workers8"]},
        {"do": "expectExactText", "selector": RUN_SHOWN, "text": runs["resnet50_fp32_workers8"]},
        {"do": "expectText", "testid": "dl-iterator",
         "match": "_MultiProcessingDataLoaderIter · worker processes"},
        {"do": "expectText", "testid": "dl-wait",
         "match": exact(f"{format_ms(eight['wait_ms_per_step'])} per step")},
        {"do": "expectText", "testid": "dl-pinned", "match": "^ok yes"},
        {"do": "expectText", "testid": "dl-non-blocking", "match": "^ok True: the copies overlap the step"},
        {"do": "expectCount", "selector": '[data-testid="dl-main-process"]', "min": 0, "max": 0},
        {"do": "selectRun", "run": runs["jax_mlp_slow_input"]},
        {"do": "expectExactText", "selector": TITLE, "text": "Input pipeline · your input annotations"},
        {"do": "expectText", "testid": "ann-wait", "match": exact(
            f"{format_ms(jax['wait_ms_per_step'])} per step ({format_pct(jax['wait_pct'])} of the step)")},
        {"do": "expectText", "selector": '[data-testid="ann-names"] tbody tr', "match": "^input"},
        {"do": "expectRecommendation", "id": "input.background_prefetch"},
        {"do": "expectCount", "selector": '[data-testid="snippet-jax"]', "min": 1},
        {"do": "screenshot", "name": "advisor-input-annotations-jax", "scrollTo": TITLE},
    ]
    drive(browser_tools, tmp_path, "dataloader", captures_tb.url + "/", steps)
