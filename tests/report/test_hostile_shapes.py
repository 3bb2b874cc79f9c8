"""Tensor shapes no device can hold, in a PyTorch trace's `Input Dims`: an MFU of ~1e28 % once made the
text, Markdown and HTML reports, the trend and every format of the diff die in Decimal.quantize (the
diff also through TensorBoard, as an HTTP 500). A shape past MAX_TENSOR_ELEMENTS is no shape (the op
stays uncosted); FLOPs that would run a device above its peak are flagged `mfu_impossible` and give
neither a FLOP rate nor an MFU; every output is written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest
from synth_kineto import training_trace
from test_api_tf import poll

from tb_plugin_advisor.views.cli.main import main as cli_main

# a 2^41 x 2^41 matrix: not a tensor at all; 2^20 x 2^20 (2^40 elements) is one, but 4 of its matrix
# products per 10 ms step are ~1e21 FLOP/s, 50 million times an A100's fp32 peak
UNREAL = [[2**41, 2**41], [2**41, 2**41]]
IMPOSSIBLE = [[2**20, 2**20], [2**20, 2**20]]


def _write(path: Path, dims: List[List[int]] = None) -> Path:
    document = training_trace(steps=4).document()
    if dims is not None:
        for event in document["traceEvents"]:
            if event.get("name") == "aten::conv2d":
                event["name"] = "aten::mm"
                event["args"]["Input Dims"] = dims
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return path


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("shapes")
    _write(root / "job" / "ok" / "w.1700000000000.pt.trace.json")
    _write(root / "job" / "unreal" / "w.1700000001000.pt.trace.json", UNREAL)
    _write(root / "job" / "impossible" / "w.1700000002000.pt.trace.json", IMPOSSIBLE)
    return root


def _cli(capsys, *argv: str) -> str:
    code = cli_main([*argv, "--no-cache"])
    out = capsys.readouterr()
    assert code == 0 and "Traceback" not in out.err, out.err[-2000:]
    return out.out


def _trace(logdir: Path, run: str) -> str:
    return str(next((logdir / "job" / run).iterdir()))


@pytest.mark.parametrize("run", ["unreal", "impossible"])
@pytest.mark.parametrize("fmt", ["text", "md", "html"])
def test_every_report_format_is_written(logdir, capsys, run, fmt):
    text = _cli(capsys, "report", _trace(logdir, run), "--format", fmt)
    assert not re.search(r"\de\+\d+ ?%", text)  # no 1e28 % anywhere a person reads
    if run == "impossible":
        assert "impossible" in text


def test_a_shape_past_any_device_is_no_shape(logdir, capsys):
    roofline = json.loads(_cli(capsys, "report", _trace(logdir, "unreal"), "--format", "json"))["roofline"]
    assert "aten::mm" not in [op["name"] for op in roofline["ops"]]
    assert "aten::mm" in [op["name"] for op in roofline["uncosted_ops"]]
    assert roofline["mfu_impossible"] is False


def test_an_mfu_above_the_peak_is_flagged_and_left_out(logdir, capsys):
    out = _cli(capsys, "report", _trace(logdir, "impossible"), "--format", "json")
    roofline = json.loads(out)["roofline"]
    assert roofline["mfu_impossible"] is True
    assert roofline["mfu_pct"] is None and roofline["achieved_tflops"] is None
    assert roofline["model_flops_per_step"] > 1e18  # the count itself is kept: it shows what is wrong
    assert all(s["mfu_pct"] is None for s in roofline["per_step"])
    [mm] = [op for op in roofline["ops"] if op["name"] == "aten::mm"]
    assert mm["impossible"] is True and mm["roof_pct"] is None and mm["achieved_tflops"] is None
    ok = json.loads(_cli(capsys, "report", _trace(logdir, "ok"), "--format", "json"))["roofline"]
    assert ok["mfu_impossible"] is False


@pytest.mark.parametrize("fmt", ["json", "text", "md", "html"])
def test_every_diff_format_is_written(logdir, capsys, fmt):
    for run in ("unreal", "impossible"):
        out = _cli(capsys, "diff", _trace(logdir, "ok"), _trace(logdir, run), "--format", fmt)
        if fmt == "json":
            roofline: Dict[str, Any] = json.loads(out)["roofline"]
            assert all(v is None or abs(v) < 1e6 for v in roofline["mfu_pct"].values())


@pytest.mark.parametrize("fmt", ["json", "text", "md"])
def test_the_trend_is_written(logdir, capsys, fmt):
    out = _cli(capsys, "trend", str(logdir), "--run", "job/*", "--format", fmt)
    if fmt == "json":
        captures = json.loads(out)["series"][0]["captures"]
        assert len(captures) == 3 and all(c["mfu_pct"] is None or c["mfu_pct"] <= 100 for c in captures)


def test_the_diff_route_answers_200(tensorboard_factory, logdir):
    tb = tensorboard_factory(logdir, "--advisor_cache_dir=off", "--advisor_write_markers=false")
    runs = {r["run"].split("/")[1]: r["run"] for r in tb.wait_for(lambda: tb.plugin("runs")[1]["runs"])}
    for baseline, candidate in (("ok", "unreal"), ("impossible", "unreal"), ("unreal", "impossible")):
        status, body = poll(tb, "diff", baseline=runs[baseline], candidate=runs[candidate])
        assert status == 200, body
        assert body["roofline"]["mfu_pct"]["candidate"] is None
