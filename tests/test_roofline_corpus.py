"""The roofline on a real PyTorch trace by other people (AMD TraceLens: Qwen1.5-0.5B inference on one
MI300X, record_shapes=True, bf16): FLOPs recomputed here from the raw JSON, achieved FLOP/s never above
the roof, MFU over the span the device was busy (the trace's one step marker holds none of the ops)."""

from __future__ import annotations

import gzip
import json
from math import prod
from pathlib import Path

import pytest

from tb_plugin_advisor.analysis.accelerator_peaks import GB_S, TERA
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto import read_kineto
from tb_plugin_advisor.report import build_report

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
QWEN = CORPUS / "tracelens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"


@pytest.mark.skipif(not QWEN.is_file(), reason="shared corpus not present")
def test_qwen_on_mi300x_roofline_is_plausible():
    raw = json.loads(gzip.decompress(QWEN.read_bytes()))["traceEvents"]
    ops = [e for e in raw if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    linear = [e["args"]["Input Dims"] for e in ops if e["name"] == "aten::linear"]
    linear_flops = sum(2 * prod(x[:-1]) * w[0] * w[1] for x, w, *_ in linear)
    sdpa = [e["args"]["Input Dims"] for e in ops if e["name"] == "aten::scaled_dot_product_attention"]
    sdpa_flops = sum(4 * q[0] * q[1] * q[2] * k[2] * q[3] for q, k, *_ in sdpa)
    kernels = [e for e in raw if e.get("ph") == "X" and e.get("cat") == "kernel"]
    span_s = (max(e["ts"] + e["dur"] for e in kernels) - min(e["ts"] for e in kernels)) / 1e6

    r = build_report(RunProfiles(run="qwen", profiles=[read_kineto(str(QWEN))])).to_json()["roofline"]
    assert r["device_model"] == "AMD Instinct MI300X VF" and r["accelerator"]["name"] == "AMD Instinct MI300X"
    by_name = {o["name"]: o for o in r["ops"]}
    assert by_name["aten::linear"]["calls"] == len(linear) == 168
    assert by_name["aten::linear"]["flops"] == pytest.approx(linear_flops)
    assert by_name["aten::scaled_dot_product_attention"]["flops"] == pytest.approx(sdpa_flops)
    assert by_name["aten::linear"]["precision"] == "bf16"
    for o in r["ops"]:
        assert 0 < o["roof_pct"] <= 100, o  # nothing runs faster than the datasheet allows
        assert o["roof_flops_per_s"] <= 1307.4 * TERA
        assert o["bound"] == ("compute" if o["intensity_flops_per_byte"] >= 1307.4 * TERA / (5300 * GB_S)
                              else "memory")
    assert r["mfu_basis"] == "device span"
    assert r["achieved_flops_per_s"] == pytest.approx(r["flops_total"] / span_s, rel=1e-3)
    assert r["mfu_pct"] == pytest.approx(100 * r["flops_total"] / span_s / (1307.4 * TERA), abs=0.02)
    assert 1 < r["mfu_pct"] < 60  # a 0.5B-parameter model's inference: far from the peak, not idle
