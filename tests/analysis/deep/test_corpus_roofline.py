"""The roofline on real profiles from the shared corpus (../shared/corpus; skipped when absent).

Plausibility, stated: (1) the JAX TPU v6e inference fixture carries XLA cost stats on every op; its hot
ops are f32 broadcast-add fusions, which XLA costs at exactly 1 FLOP per 8 bytes (one add per 4-byte
read and 4-byte write), so they must be memory-bound and reach a large share of, but never more than,
the v6e's 1640 GB/s. (2) The PyTorch Qwen1.5-0.5B inference trace on an MI300X records shapes: its
linears (bf16, by shapes) must be compute-bound and run below the 1307 TFLOP/s bf16 peak, and the
whole model's MFU must land in the band real inference reaches (1–60 %).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from deep_profiles import deep_section
from paths import CORPUS

from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.readers.xplane.reader import read_xplane

TPU = CORPUS / "xprof/older_01d85de/xprof/convert/test_xplanes/tpu_inference_2.xplane.pb"
QWEN = CORPUS / "tracelens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"


def _need(path: Path) -> None:
    if not path.is_file():
        pytest.skip(f"corpus file not present: {path}")


def test_tpu_v6e_cost_stats_are_memory_bound_below_the_bandwidth():
    _need(TPU)
    profile = read_xplane(str(TPU))
    r = deep_section(profile, "roofline")
    assert r["device"] == "Google TPU v6e (Trillium)" and r["devices"] == 4
    assert r["sources"] == ["profile"] and r["bandwidth_gbps"] == 1640.0
    hot = [op for op in r["ops"] if "broadcast_add_fusion" in op["name"]]
    assert len(hot) == 3
    for op in hot:
        assert op["intensity"] == 0.125 and op["bound"] == "memory"
        assert 50.0 <= op["roof_pct"] <= 100.0 and op["achieved_gbps"] <= 1640.0
    for op in r["ops"]:
        assert op["roof_pct"] is None or op["roof_pct"] <= 100.0
    # elementwise inference: almost no matrix work, so the MFU is tiny (and said so)
    assert r["mfu_pct"] is not None and r["mfu_pct"] < 1.0
    assert "roofline.low_mfu" in [f["id"] for f in r["findings"]]


def test_mi300x_qwen_linears_from_shapes_are_compute_bound_below_peak():
    _need(QWEN)
    profile = read_kineto(str(QWEN))
    r = deep_section(profile, "roofline")
    assert r["device"] == "AMD Instinct MI300X" and r["dominant_precision"] == "bf16"
    linear = next(op for op in r["ops"] if op["name"] == "aten::linear")
    assert linear["source"] == "shapes" and linear["precision"] == "bf16" and linear["bound"] == "compute"
    assert 0 < linear["achieved_tflops"] < 1307.4 and linear["roof_pct"] < 100.0
    assert 1.0 <= r["mfu_pct"] <= 60.0


RESNET = CORPUS / "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz"


def test_mi300x_resnet_convolutions_from_concrete_inputs():
    """ResNet (batch 10, bf16) records `Concrete Inputs`: its forward convolutions get FLOPs from shapes
    and strides; at this small batch they stay far below the bf16 peak, never above it."""
    _need(RESNET)
    profile = read_kineto(str(RESNET))
    r = deep_section(profile, "roofline")
    conv = next(op for op in r["ops"] if op["name"] == "aten::conv2d")
    assert conv["source"] == "shapes" and conv["precision"] == "bf16" and conv["calls"] > 10
    assert conv["bound"] == "compute" and 0 < conv["achieved_tflops"] < 1307.4 and conv["roof_pct"] < 100
