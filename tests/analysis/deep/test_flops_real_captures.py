"""Model FLOPs per step and MFU on real PyTorch profiles, against each model's own arithmetic.

- ResNet-50 on a V100 (the corpus' torch-tb-profiler sample, batch 32 at 224×224, 2021: `Input Dims`
  but no `Concrete Inputs`, so every convolution's output size comes from its autograd node or the op
  after it). torchvision's ResNet-50 is 4.09 GMAC per image forward; a training step is about 3× the
  forward: ≈ 785 GFLOP at batch 32, and at its 175 ms steps ≈ 28 % of the V100's 15.7 TFLOP/s fp32.
  Exactly: forward 2 · B · MACs, backward twice the convolutions and the classifier, less the stem's
  input gradient (the image needs none).
- The H200 captures (tests/captures/h200, bench/capture_gpu_profiles.py): ResNet-50 at batch 64
  (≈ 1.57 TFLOP per step), and a 6-layer nn.TransformerEncoder (d 1024, 16 heads, FFN 4096, seq 512,
  batch 16): linears 2 · tokens · 12 d² per layer forward, attention 4 · B · H · S² · D forward and
  2.5 × that backward.
- A real CPU trace written in this session (tests/torch_traces.py: a 256-512-512-10 MLP at batch 16).

Tolerances: ±10 % against the rounded published figures and the "3× forward" rule; the counts from
the arithmetic above are exact, so they are compared exactly.
"""

from __future__ import annotations

import json
from typing import List

import pytest
from deep_profiles import deep_section
from paths import CORPUS, H200, needs_corpus

from tb_plugin_advisor.analysis.deep.op_flops import op_costs
from tb_plugin_advisor.readers.kineto.reader import read_kineto

SAMPLES = CORPUS / "kineto/tb_plugin/samples"
RESNET_V100 = SAMPLES / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
V100_FP32 = 15.7e12
H200_FP32 = 67e12


def resnet50_conv_macs(size: int = 224) -> List[int]:
    """MACs per image of each convolution of torchvision's ResNet-50 (stride on the 3×3), in forward
    order: stem, then per bottleneck conv1 (1×1), conv2 (3×3), conv3 (1×1) and the first block's
    downsample (1×1)."""
    h = size // 2
    macs = [h * h * 64 * 3 * 7 * 7]
    h //= 2  # max pool
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for block in range(blocks):
            out = h // (stride if block == 0 else 1)
            macs += [h * h * cin * width, out * out * width * width * 9, out * out * width * width * 4]
            if block == 0:
                macs.append(out * out * cin * width * 4)
            cin, h = width * 4, out
    return macs


FC_MACS = 2048 * 1000


def resnet50_step_flops(batch: int) -> float:
    """Forward + backward FLOPs of one training step, exactly as a profiler sees the ops."""
    convs = resnet50_conv_macs()
    forward = 2.0 * batch * (sum(convs) + FC_MACS)
    return 3 * forward - 2.0 * batch * convs[0]  # no input gradient for the image


def test_resnet50_arithmetic_is_torchvisions():
    convs = resnet50_conv_macs()
    assert len(convs) == 53
    assert (sum(convs) + FC_MACS) / 1e9 == pytest.approx(4.09, abs=0.005)  # torchvision's 4.09 GMAC


@pytest.fixture(scope="module")
def resnet_v100():
    return read_kineto(str(RESNET_V100))


@needs_corpus
def test_corpus_resnet50_flops_per_step_and_mfu(resnet_v100):
    r = deep_section(resnet_v100, "roofline")
    assert r["device"] == "NVIDIA V100 SXM2" and r["peak_tflops"] == 15.7 and r["basis"] == "steps"
    per_step = r["model_flops_per_step"]
    assert per_step == pytest.approx(785e9, rel=0.10)  # the task's figure: 3 × 4.09 GMAC × 2 × 32
    assert per_step == pytest.approx(resnet50_step_flops(32), rel=1e-9)  # the arithmetic, exactly
    assert r["mfu_pct"] == pytest.approx(28.0, rel=0.10)
    assert r["mfu_pct"] == pytest.approx(100 * per_step / (r["step_ms"] / 1e3) / V100_FP32, rel=1e-3)
    assert [s["model_flops"] for s in r["per_step"]] == [per_step] * 6  # every step the same FLOPs
    assert r["mfu_lower_bound"] is False and 60 <= r["costed_time_pct"] <= 75  # batch norm, relu: not costed
    uncosted = [op["name"] for op in r["uncosted_ops"]]
    assert uncosted[:2] == ["aten::cudnn_batch_norm_backward", "aten::cudnn_batch_norm"]


@needs_corpus
def test_corpus_resnet50_bottleneck_block_layer_by_layer(resnet_v100):
    """The stem and layer1.0 (56×56, 64 → 256 channels) as the code costs them, and the same block's
    backward: one forward per gradient (the stem's weight gradient only)."""
    rows = [c for c in op_costs(resnet_v100).rows() if c.source != "none"]
    forward = [c.flops for c in rows if c.name == "aten::conv2d"][:5]
    b = 32
    stem, conv1, conv2, conv3, down = (2.0 * b * m for m in resnet50_conv_macs()[:5])
    assert forward == [stem, conv1, conv2, conv3, down]
    assert (conv1, conv2, conv3) == (2.0 * b * 56 * 56 * 64 * 64, 2.0 * b * 56 * 56 * 64 * 64 * 9,
                                     2.0 * b * 56 * 56 * 64 * 256)
    backward = [c.flops for c in rows if c.name == "aten::cudnn_convolution_backward"][:53]
    # backward runs in reverse: …, layer1.0's conv3 and downsample, conv2, conv1, then the stem
    assert backward[-5:] == [2 * conv3, 2 * down, 2 * conv2, 2 * conv1, stem]


@needs_corpus
def test_nested_ops_are_costed_once(resnet_v100):
    """aten::conv2d > convolution > _convolution > cudnn_convolution: only the outermost is costed, and
    no kernel's time counts twice."""
    costs = op_costs(resnet_v100)
    names = {costs.names[i] for i in set(costs.name[costs.costed].tolist())}
    assert names == {"aten::conv2d", "aten::cudnn_convolution_backward", "aten::linear", "aten::mm"}
    kernels = sum(int(d.kernels.duration_ns.sum()) for d in resnet_v100.devices)
    assert int(costs.duration_ns.sum()) <= kernels
    assert int(costs.duration_ns[costs.costed].sum()) > 0.6 * kernels


# ---------------------------------------------------------------------------------------------------
# H200 captures


def _h200(run: str):
    (path,) = sorted((H200 / run).glob("*.pt.trace.json*"))
    return deep_section(read_kineto(str(path)), "roofline")


RESNET_RUNS = sorted(p.name for p in H200.glob("resnet50_*"))


@pytest.mark.parametrize("run", RESNET_RUNS)
def test_h200_resnet50_flops_per_step(run):
    r = _h200(run)
    assert r["device"] == "NVIDIA H200 SXM" and r["basis"] == "steps"
    assert r["model_flops_per_step"] == pytest.approx(1.57e12, rel=0.10)
    assert r["model_flops_per_step"] == pytest.approx(resnet50_step_flops(64), rel=1e-9)
    # fp32 convolutions run on TF32 Tensor Cores (cuDNN's default): the MFU is against the TF32 peak
    assert r["dominant_precision"] == ("bf16" if "bf16" in run else "tf32")
    assert r["peak_tflops"] == (989.5 if "bf16" in run else 494.5) and 0 < r["mfu_pct"] < 100


def transformer_step_flops(layers: int = 6, d: int = 1024, heads: int = 16, ffn: int = 4096, seq: int = 512,
                           batch: int = 16) -> float:
    tokens = batch * seq
    linears = 2.0 * tokens * (4 * d * d + 2 * d * ffn)  # qkv + out projection, two FFN matrices
    attention = 4.0 * batch * heads * seq * seq * (d // heads)
    return layers * (3 * linears + (1 + 2.5) * attention)


@pytest.mark.parametrize("run", ["transformer_fp32", "transformer_bf16"])
def test_h200_transformer_flops_per_step(run):
    r = _h200(run)
    forward = 6 * (2.0 * 16 * 512 * 12 * 1024 ** 2 + 4.0 * 16 * 16 * 512 * 512 * 64)
    assert r["model_flops_per_step"] == pytest.approx(3 * forward, rel=0.10)
    assert r["model_flops_per_step"] == pytest.approx(transformer_step_flops(), rel=1e-9)
    ops = {op["name"]: op for op in r["ops"]}
    backward = next(name for name in ops if name.endswith("attention_backward"))
    assert ops[backward]["flops"] == pytest.approx(2.5 * ops["aten::scaled_dot_product_attention"]["flops"])
    if run == "transformer_bf16":  # autocast casts inside aten::linear: its matmul is bf16
        assert {op["precision"] for op in r["ops"]} == {"bf16"}
    else:  # captured with torch.backends.cuda.matmul.allow_tf32 = False: plain fp32
        assert {op["precision"] for op in r["ops"]} == {"fp32"} and r["peak_tflops"] == 67.0


def test_h200_transformer_fp32_mfu_matches_the_unprofiled_step():
    """Device-bound fp32 (TF32 off): the profiled steps run as fast as the unprofiled ones, so the MFU
    must match FLOPs ÷ the step time measured without the profiler ÷ the H200's 67 TFLOP/s fp32."""
    truth = json.loads((H200 / "captures.json").read_text())["transformer_fp32"]["unprofiled_step_ms"]
    r = _h200("transformer_fp32")
    expected = 100 * transformer_step_flops() / (truth / 1e3) / H200_FP32
    assert r["mfu_pct"] == pytest.approx(expected, rel=0.10) and r["mfu_lower_bound"] is False


# ---------------------------------------------------------------------------------------------------
# A CPU-only trace written by torch.profiler in this session


def _mlp_step_flops(batch: int = 16, sizes=(256, 512, 512, 10)) -> float:
    macs = [a * b for a, b in zip(sizes, sizes[1:])]
    return 3 * 2.0 * batch * sum(macs) - 2.0 * batch * macs[0]  # the input needs no gradient


@pytest.mark.parametrize("run, precision", [("fast_loader", "fp32"), ("bf16", "bf16")])
def test_cpu_profile_gets_model_flops_per_step_and_no_mfu(torch_traces, run, precision):
    r = deep_section(read_kineto(str(torch_traces.trace(run))), "roofline")
    assert r["cpu_only"] is True and r["basis"] == "steps"
    assert r["model_flops_per_step"] == _mlp_step_flops()
    assert r["achieved_tflops"] > 0 and r["mfu_pct"] is None and r["peak_tflops"] is None
    assert r["dominant_precision"] == precision
    assert 0 < r["costed_time_pct"] < 100 and r["uncosted_ops"]
    assert all(op["name"].startswith("aten::") for op in r["uncosted_ops"])


@pytest.mark.parametrize("capture", ["resnet50_fp32_workers8", "transformer_fp32", "mlp_launch_bound"])
def test_the_walk_in_blocks_costs_what_one_block_costs(capture, monkeypatch):
    """The host walk turns events into Python values a block at a time; the ops still open at a
    block's end carry over, and every launching op still names its kernels: any block size, one that
    splits ops from their children included, gives the same rows as one block for the whole line."""
    import numpy as np

    from tb_plugin_advisor.analysis.deep import op_flops

    path = next((H200 / capture).glob("*.pt.trace.json*"))
    monkeypatch.setattr(op_flops, "WALK_BLOCK", 1 << 40)
    whole = op_costs(read_kineto(path))
    monkeypatch.setattr(op_flops, "WALK_BLOCK", 5)
    blocked = op_costs(read_kineto(path))
    uncosted = whole.source == op_flops.UNCOSTED
    assert uncosted.any() and (~uncosted).any()  # both kinds of rows are compared
    assert whole.names == blocked.names and whole.devices == blocked.devices
    for column in ("name", "device", "start_ns", "end_ns", "duration_ns", "host_ns", "flops", "precision",
                   "source"):
        assert np.array_equal(getattr(whole, column), getattr(blocked, column)), column
