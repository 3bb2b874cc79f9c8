"""The Tensor Core card on a real GPU trace someone else captured (the corpus ResNet-50 on a V100,
fp32): eligible kernels are listed under the aten op that launched them, by a short name with the
full signature on hover, the shared reason once, one screen by default with the rest behind "Show
all"; and the mixed-precision remedy is float16 with a GradScaler in PyTorch words (a V100 has no
bf16)."""

from __future__ import annotations

import shutil

import pytest
from fixtures_server import TensorBoardServer, start_tensorboard
from paths import CORPUS, NO_CORPUS
from test_browser import browser_tools, drive, final_json  # noqa: F401 (fixture)

RESNET_V100 = CORPUS / "kineto" / "tb_plugin" / "samples" / "resnet50_num_workers_0"
ROWS_SHOWN = 8
ONE_SCREEN_PX = 700

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not RESNET_V100.is_dir(), reason=NO_CORPUS)]


@pytest.fixture(scope="module")
def v100_tb(tmp_path_factory) -> TensorBoardServer:
    logdir = tmp_path_factory.mktemp("browser_tc") / "logdir"
    shutil.copytree(RESNET_V100, logdir / "resnet50_v100")
    with start_tensorboard(logdir, "--advisor_write_markers=false") as server:
        yield server


def test_eligible_kernels_by_launching_op_on_one_screen_with_pytorch_fp16_advice(
        v100_tb, browser_tools, tmp_path):  # noqa: F811
    status, body = v100_tb.plugin("runs")
    assert status == 200
    run = body["runs"][0]["run"]
    report = final_json(v100_tb, "report", run=run)
    eligible = report["tensor_cores"]["eligible_not_using"]
    assert len(eligible) > ROWS_SHOWN
    assert all(e["op"].startswith("aten::") for e in eligible), [e["op"] for e in eligible]
    assert all(len(e["kernel_short"]) < len(e["kernel"]) or "(" not in e["kernel"] for e in eligible)
    mixed = next(r for r in report["recommendations"] if r["id"] == "precision.mixed")
    assert "torch.float16" in mixed["snippet"] and "GradScaler" in mixed["snippet"]
    assert "bfloat16" not in mixed["snippet"] and "mixed_float16" not in mixed["snippet"]
    steps = [
        {"do": "openAdvisor"},
        {"do": "selectRun", "run": run},
        {"do": "expectCount", "selector": '[data-testid="tc-eligible"] tbody tr', "min": ROWS_SHOWN,
         "max": ROWS_SHOWN},
        {"do": "expectText", "testid": "tc-reason", "match": "float16 with loss scaling"},
        {"do": "collect", "selector": '[data-testid="tc-kernel"]', "attr": "title", "min": ROWS_SHOWN},
        {"do": "measure", "testid": "tc-eligible"},
        {"do": "click", "testid": "tc-eligible-all"},
        {"do": "expectCount", "selector": '[data-testid="tc-eligible"] tbody tr', "min": len(eligible),
         "max": len(eligible)},
        {"do": "expectText", "selector": '[data-rec-id="precision.mixed"] [data-testid="snippet-pytorch"]',
         "match": "GradScaler"},
    ]  # fmt: skip
    summary = drive(browser_tools, tmp_path, "tensor-cores", v100_tb.url + "/", steps)
    by_step = {s["do"]: s for s in summary["steps"]}
    assert by_step["measure"]["height"] <= ONE_SCREEN_PX, by_step["measure"]
    kernels = by_step["collect"]["items"]
    full_names = {e["kernel"] for e in eligible}
    assert all(item["attr"] in full_names and len(item["text"]) <= len(item["attr"]) for item in kernels)
