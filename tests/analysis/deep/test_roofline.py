"""The roofline view with constructed truth: every FLOP count, intensity, achieved rate, MFU and
classification checked exactly, for XLA cost stats (XSpace) and for PyTorch (Kineto `flops` and shapes)."""

from __future__ import annotations

from deep_profiles import (
    ELEMENTWISE,
    ELEMENTWISE_BYTES,
    ELEMENTWISE_FLOPS,
    GEMM,
    GEMM_BYTES,
    GEMM_FLOPS,
    GEMM_MODEL_FLOPS,
    STEPS,
    TINY_PER_STEP,
    deep_section,
    gpu_training_profile,
)
from synth import XSpaceBuilder
from synth_kineto import BASE_NS, KinetoTrace

from tb_plugin_advisor.advice.findings import roofline_findings
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.analysis.deep.op_flops import NO_HOST_OP, op_costs
from tb_plugin_advisor.analysis.deep.roofline import roofline
from tb_plugin_advisor.analysis.deep.shape_flops import shape_cost as _shape_cost
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.readers.kineto.reader import read_kineto_bytes
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes


def shape_cost(*args):
    """(FLOPs, elements moved) of shape_flops.shape_cost, or None."""
    cost = _shape_cost(*args)
    return None if cost is None else tuple(cost[:2])


A100_BF16, A100_FP32, A100_BW = 312e12, 19.5e12, 1555e9
STEP_S = (20_000_000 - 1) / 1e9  # the synthetic step markers are 1 ns short of 20 ms


def _xla_roofline():
    profile = read_xplane_bytes(gpu_training_profile().to_bytes(), "synthetic.xplane.pb")
    return deep_section(profile, "roofline")


def test_xla_cost_stats_give_exact_roofline():
    r = _xla_roofline()
    assert r["device"] == "NVIDIA A100 40GB" and r["device_model"] == "NVIDIA A100-SXM4-40GB"
    assert r["peak_tflops"] == 312.0 and r["bandwidth_gbps"] == 1555.0 and r["dominant_precision"] == "bf16"
    assert r["ridge_flops_per_byte"] == round(A100_BF16 / A100_BW, 2)
    gemm, add = r["ops"]
    assert (gemm["name"], add["name"]) == (GEMM, ELEMENTWISE)
    # GEMM: 624 GFLOP and 1 GB in 4 ms per call → intensity 624, compute-bound, 156 TFLOP/s = 50 % of roof
    assert gemm["calls"] == STEPS and gemm["flops"] == STEPS * GEMM_FLOPS
    assert gemm["bytes"] == STEPS * GEMM_BYTES
    assert gemm["intensity"] == GEMM_FLOPS / GEMM_BYTES == 624.0
    assert gemm["bound"] == "compute" and gemm["achieved_tflops"] == 156.0 and gemm["roof_pct"] == 50.0
    assert gemm["roof_tflops"] == 312.0 and gemm["source"] == "profile" and gemm["precision"] == "bf16"
    # elementwise (cost stats on the event metadata): 0.1 GFLOP, 0.12 GB in 1 ms → fp32 roof, memory-bound
    assert add["flops"] == STEPS * ELEMENTWISE_FLOPS and add["bytes"] == STEPS * ELEMENTWISE_BYTES
    assert add["intensity"] == round(ELEMENTWISE_FLOPS / ELEMENTWISE_BYTES, 3) and add["precision"] == "fp32"
    assert add["ridge_flops_per_byte"] == round(A100_FP32 / A100_BW, 2) and add["bound"] == "memory"
    assert add["achieved_gbps"] == 120.0 and add["roof_pct"] == round(100 * 120e9 / A100_BW, 2)
    assert add["roof_tflops"] == round(ELEMENTWISE_FLOPS / ELEMENTWISE_BYTES * A100_BW / 1e12, 4)
    # device time per step: GEMM 4 + add 1 + tiny kernels + collectives 5 ms
    device_ms = 4 + 1 + TINY_PER_STEP * 0.003 + 5
    assert add["time_pct"] == round(100 * 1 / device_ms, 2)
    assert r["costed_time_pct"] == round(100 * 5 / (device_ms - 5), 2)  # of compute: no collectives
    assert r["mfu_lower_bound"] is False
    # MFU counts model FLOPs (XLA's model_flops where recorded), per steady step, against bf16's peak
    per_step = GEMM_MODEL_FLOPS + ELEMENTWISE_FLOPS
    assert r["basis"] == "steps" and r["steps"] == STEPS and r["model_flops_per_step"] == per_step
    assert r["hardware_flops"] == STEPS * (GEMM_FLOPS + ELEMENTWISE_FLOPS)
    assert r["achieved_tflops"] == round(per_step / STEP_S / 1e12, 6)
    assert r["mfu_pct"] == round(100 * per_step / STEP_S / A100_BF16, 4)
    assert [s["step"] for s in r["per_step"]] == [1, 2, 3, 4, 5]
    assert all(s["mfu_pct"] == r["mfu_pct"] for s in r["per_step"])
    assert [x["precision"] for x in r["roofs"]] == ["bf16", "fp32"]


def test_findings_fire_for_the_slow_hot_op_and_low_mfu():
    r = _xla_roofline()
    ids = [f["id"] for f in r["findings"]]
    assert ids == ["roofline.far_below_roof", "roofline.low_mfu"]
    far = r["findings"][0]
    assert short_name(ELEMENTWISE) in far["title"] and "memory-bound" in far["evidence"]  # its short name
    assert "120.0 GB/s of 1555 GB/s" in far["evidence"] and "7.7 % of its roof" in far["evidence"]
    assert "7.5 %" in r["findings"][1]["title"] and r["mfu_pct"] == 7.5016


def test_roofline_thresholds_on_both_sides():
    base = {"ridge_flops_per_byte": 200.0, "bandwidth_gbps": 1555.0, "peak_tflops": 312.0,
            "peak_precision": "bf16", "device": "X", "devices": 1, "costed_time_pct": 50.0,
            "achieved_tflops": 10.0, "basis": "steps"}
    op = {"name": "k", "bound": "compute", "intensity": 300.0, "ridge_flops_per_byte": 200.0,
          "peak_precision": "bf16", "achieved_tflops": 1.0, "roof_tflops": 312.0, "source": "profile"}

    def ids(pct, share, mfu, covered=50.0):
        r = dict(base, mfu_pct=mfu, costed_time_pct=covered, ops=[dict(op, roof_pct=pct, time_pct=share)])
        return [f.id for f in roofline_findings(r)]

    low, far, hot = th.LOW_MFU_PCT, th.ROOFLINE_FAR_BELOW_PCT, th.ROOFLINE_MIN_TIME_PCT
    assert ids(far - 0.01, hot, low) == ["roofline.far_below_roof"]
    assert ids(far, hot, low) == [] and ids(far - 0.01, hot - 0.01, low) == []
    assert ids(50, hot, low - 0.01) == ["roofline.low_mfu"] and ids(50, hot, low) == []
    assert ids(50, hot, low - 0.01, th.ROOFLINE_MIN_COSTED_PCT - 0.01) == []  # MFU only a lower bound


# ---------------------------------------------------------------------------------------------------
# PyTorch

MS = 1_000_000


def _torch_trace() -> KinetoTrace:
    """2 steps of 10 ms on an A100: linear (→ addmm, by shapes), conv2d (Kineto `flops`), flash
    attention (by shapes), and a relu with no cost."""
    trace = KinetoTrace()
    t0 = BASE_NS + 1_000_000_000
    for n in range(2):
        s = t0 + n * 10 * MS
        trace.step(n + 1, s, 10 * MS)
        bf16 = ["c10::BFloat16"] * 3
        trace.op("aten::linear", s + 100_000, 1_500_000, bf16, [[64, 1024], [4096, 1024], [4096]])
        trace.op("aten::addmm", s + 110_000, 1_400_000, bf16, [[4096], [64, 1024], [1024, 4096]])
        trace.launch("ampere_bf16_gemm", s + 120_000, 10_000, s + 200_000, 1 * MS)
        trace.op("aten::conv2d", s + 2 * MS, 3 * MS, ["float", "float", "float"],
                 [[32, 3, 224, 224], [64, 3, 7, 7], [64]], flops=118_013_952_000)
        trace.launch("implicit_convolve_sgemm", s + 2 * MS + 10_000, 10_000, s + 2 * MS + 100_000, 2 * MS)
        trace.op("aten::_scaled_dot_product_flash_attention", s + 5 * MS, 1 * MS, ["c10::BFloat16"] * 3,
                 [[2, 8, 512, 64]] * 3)
        trace.launch("flash_fwd_kernel", s + 5 * MS + 10_000, 10_000, s + 5 * MS + 100_000, 500_000)
        trace.op("aten::relu", s + 7 * MS, 200_000, ["float"], [[32, 64, 112, 112]])
        trace.launch("elementwise_kernel", s + 7 * MS + 10_000, 10_000, s + 7 * MS + 50_000, 100_000)
    return trace


def test_kernels_without_a_host_op_are_one_uncosted_row_that_counts_each_kernel():
    trace = _torch_trace()
    s = BASE_NS + 1_000_000_000 + 8 * MS
    trace._external = 90_000  # an id no recorded op holds: these kernels' host op was not recorded
    for k in range(3):
        trace.launch("orphan_kernel", s + k * 100_000, 5_000, s + k * 100_000 + 20_000, (k + 1) * 10_000)
    profile = read_kineto_bytes(trace.to_bytes(), "orphans.pt.trace.json")
    (row,) = [c for c in op_costs(profile).rows() if c.name == NO_HOST_OP]
    assert (row.calls, row.duration_ns, row.host_ns, row.source) == (3, 60_000, -1, "none")
    assert (row.start_ns, row.end_ns) == (s + 20_000, s + 200_000 + 20_000 + 30_000)
    # the kernels an op launched stay one row per op instance, each one call
    relu = [c for c in op_costs(profile).rows() if c.name == "aten::relu"]
    assert [c.calls for c in relu] == [1, 1]
    r = roofline(profile, find_steps(profile)).to_json()
    listed = {op["name"]: op for op in r["uncosted_ops"]}
    assert listed[NO_HOST_OP]["calls"] == 3 and listed[NO_HOST_OP]["total_ms"] == 0.06
    assert listed["aten::relu"]["calls"] == 2


def test_shape_formulas():
    assert shape_cost("aten::mm", [[8, 16], [16, 32]]) == (2 * 8 * 16 * 32, 8 * 16 + 16 * 32 + 8 * 32)
    assert shape_cost("aten::bmm", [[4, 8, 16], [4, 16, 32]]) == (2 * 4 * 8 * 16 * 32,
                                                                  4 * (8 * 16 + 16 * 32 + 8 * 32))
    assert shape_cost("aten::matmul", [[16], [16, 32]]) == (2 * 16 * 32, 16 + 16 * 32 + 32)
    assert shape_cost("aten::linear", [[2, 3, 16], [32, 16], [32]]) == (2 * 6 * 16 * 32,
                                                                        32 + 96 + 512 + 6 * 32)
    assert shape_cost("aten::conv2d", [[1, 3, 8, 8], [4, 3, 3, 3]]) is None  # strides unknown
    stem = [[32, 3, 224, 224], [64, 3, 7, 7], [64], [], [], [], []]
    out = 32 * 64 * 112 * 112  # (224 + 2·3 − 7) // 2 + 1 = 112
    assert shape_cost("aten::conv2d", stem, ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"]) == (
        2.0 * out * 3 * 49, 32 * 3 * 224 * 224 + 64 * 3 * 49 + 64 + out)
    grouped = [[2, 8, 10], [8, 2, 3], [], [], [], [], [], [], []]  # conv1d via aten::convolution, 4 groups
    concrete = ["", "", "", "[1]", "[2]", "[2]", "False", "[0]", "4"]
    out1 = 2 * 8 * ((10 + 4 - 2 * 2 - 1) // 1 + 1)
    cost = (2.0 * out1 * 2 * 3, 2 * 8 * 10 + 8 * 2 * 3 + out1)
    assert shape_cost("aten::convolution", grouped, concrete) == cost
    # transposed (weight [C_in, C_out/groups, k]): each input element feeds C_out/groups × k outputs
    assert shape_cost("aten::convolution", grouped, concrete[:6] + ["True"] + concrete[7:]) == (
        2.0 * 2 * 8 * 10 * 2 * 3, None)
    assert shape_cost("aten::mm", [[8, 16]]) is None


def test_torch_flops_from_profile_and_shapes():
    profile = read_kineto_bytes(_torch_trace().to_bytes(), "synthetic.pt.trace.json")
    costs = op_costs(profile).rows()
    assert [(c.name, c.source) for c in costs[:3]] == [
        ("aten::linear", "shapes"), ("aten::conv2d", "profile"),
        ("aten::_scaled_dot_product_flash_attention", "shapes")]
    linear, conv, attn = costs[:3]
    assert linear.flops == 2 * 64 * 1024 * 4096 and linear.duration_ns == 1 * MS  # addmm nested: once
    assert linear.bytes == 2 * (64 * 1024 + 4096 * 1024 + 4096 + 64 * 4096) and linear.precision == "bf16"
    # `flops` from the profile; bytes from shapes, the output size from the relu that reads it
    stem_out = 32 * 64 * 112 * 112
    assert conv.flops == 118_013_952_000 and conv.precision == "fp32"
    assert conv.bytes == 4 * (32 * 3 * 224 * 224 + 64 * 3 * 49 + 64 + stem_out)
    assert attn.flops == 2 * 2 * 8 * 512 * 512 * (64 + 64)
    assert attn.bytes == 2 * 4 * (2 * 8 * 512 * 64) and attn.duration_ns == 500_000
    assert len([c for c in costs if c.source != "none"]) == 6  # relu has no cost …
    assert [c.name for c in costs if c.source == "none"] == ["aten::relu"] * 2  # … and is listed so

    r = roofline(profile, find_steps(profile)).to_json()
    assert r["sources"] == ["profile", "shapes"] and r["dominant_precision"] == "fp32"
    ops = {op["name"]: op for op in r["ops"]}
    lin = ops["aten::linear"]
    assert lin["achieved_tflops"] == round(2 * 64 * 1024 * 4096 / 1e-3 / 1e12, 4)
    intensity = linear.flops / linear.bytes
    assert lin["intensity"] == round(intensity, 3) and lin["bound"] == "memory"  # 61.8 < ridge 200.6
    assert lin["roof_pct"] == round(100 * (linear.bytes / 1e-3) / A100_BW, 2)
    assert ops["aten::conv2d"]["intensity"] == round(conv.flops / conv.bytes, 3)
    assert ops["aten::_scaled_dot_product_flash_attention"]["bound"] == "compute"  # 512 FLOP/byte
    # MFU: all FLOPs per 10 ms step at the dominant fp32 peak (conv holds most FLOPs)
    per_step = linear.flops + conv.flops + attn.flops
    assert r["basis"] == "steps" and r["model_flops_per_step"] == per_step
    assert r["mfu_pct"] == round(100 * per_step / 0.01 / A100_FP32, 4)


# ---------------------------------------------------------------------------------------------------
# Report key, `--section roofline`, exports


def test_section_and_exports(tmp_path, capsys):
    import json

    from deep_profiles import write_gpu_run
    from html_pages import outside_scripts

    from tb_plugin_advisor.views.cli.main import main as cli_main

    write_gpu_run(tmp_path)
    assert cli_main(["report", str(tmp_path), "--section", "roofline", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sections"] == ["roofline"] and out["roofline"]["mfu_pct"] == _xla_roofline()["mfu_pct"]
    assert cli_main(["report", str(tmp_path), "--section", "roofline"]) == 0
    text = capsys.readouterr().out
    assert "Roofline:" in text and "MFU 7.5 %" in text and "ridge 200.6 FLOP/byte" in text
    assert "roofline.far_below_roof" in text and "compute       50.0" in text
    assert cli_main(["report", str(tmp_path), "--section", "roofline", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "## Roofline" in md and "| op | source |" in md and "nvidia-a100-datasheet" in md
    assert cli_main(["report", str(tmp_path), "--format", "html"]) == 0
    page = outside_scripts(capsys.readouterr().out)
    assert '<h2 id="roofline">' in page and "AddFunctor&lt;float&gt;" in page and "<script" not in page


def test_all_hosts_sum_the_devices_and_keep_each_hosts_ops():
    from tb_plugin_advisor.model import RunProfiles
    from tb_plugin_advisor.report.run import build_report

    profiles = [read_xplane_bytes(gpu_training_profile(h).to_bytes(), f"{h}.xplane.pb") for h in ("w0", "w1")]
    r = build_report(RunProfiles(run="two", profiles=profiles)).to_json()["roofline"]
    one = _xla_roofline()
    assert r["devices"] == 2 and r["hosts"] == 2 and r["mfu_pct"] == one["mfu_pct"]
    assert r["model_flops"] == 2 * one["model_flops"] and r["achieved_tflops"] == one["achieved_tflops"]
    assert sorted({op["host"] for op in r["ops"]}) == ["w0", "w1"] and len(r["ops"]) == 4
    assert [p["host"] for p in r["per_host"]] == ["w0", "w1"]
    assert sorted(f["host"] for f in r["findings"]) == ["w0", "w0", "w1", "w1"]


def test_torch_convolution_from_concrete_inputs():
    trace = KinetoTrace()
    s = BASE_NS + 1_000_000_000
    types = ["c10::BFloat16"] * 2 + ["", "ScalarList", "ScalarList", "ScalarList", "Scalar"]
    trace.op("aten::conv2d", s, 3 * MS, types, [[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []],
             concrete=["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"])
    trace.launch("implicit_convolve_sgemm", s + 10_000, 10_000, s + 100_000, 2 * MS)
    (conv,) = op_costs(read_kineto_bytes(trace.to_bytes(), "conv.pt.trace.json")).rows()
    assert conv.source == "shapes" and conv.precision == "bf16" and conv.duration_ns == 2 * MS
    out = 32 * 64 * 112 * 112
    assert conv.flops == 2 * out * 3 * 49
    assert conv.bytes == 2 * (32 * 3 * 224 * 224 + 64 * 3 * 49 + out)


def test_convolution_backward_costs_one_forward_per_gradient():
    """aten::convolution_backward as PyTorch records it (a ResNet 3x3, 512 channels, 7x7): no stride
    needed, grad_output is the forward's output; output_mask says which gradients were computed."""
    dims = [[10, 512, 7, 7], [10, 512, 7, 7], [512, 512, 3, 3]] + [[]] * 8
    forward = 2 * 10 * 512 * 7 * 7 * 512 * 9
    both = ["", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"]
    flops, moved = shape_cost("aten::convolution_backward", dims, both)
    assert flops == 2 * forward
    assert moved == 3 * 10 * 512 * 49 + 2 * 512 * 512 * 9  # read dy, x, w; write dx, dw
    weight_only = both[:10] + ["[False, True, False]"]
    assert shape_cost("aten::convolution_backward", dims, weight_only)[0] == forward
    assert shape_cost("aten::convolution_backward", dims, None)[0] == 2 * forward  # mask not recorded
    assert shape_cost("aten::convolution_backward", [[10, 512, 7, 7], [10, 512, 7, 7], [256, 512, 3, 3]],
                      both) is None  # grad_output's channels are not the weight's outputs


def test_an_unnamed_rocm_gpu_gets_its_peaks_from_what_it_records():
    """ROCm's XSpace planes name no device: gfx942 with 304 CUs and 192 GiB is an MI300X, and the report
    says so (never "compute capability": ROCm's 9.4 is none)."""
    b = XSpaceBuilder(hostnames=["h"])
    t0 = 1_700_000_000_000_000_000
    plane = b.gpu_plane(0, model="", vendor="AMD", compute_capability=(9, 4), core_count=304,
                        memory_size=192 << 30, clock_rate_khz=2_100_000)
    plane.line("Stream #7(Kernel)", id=7).kernel("fusion_1", t0, 1_000_000, hlo_op="fusion.1",
                                                 stats={"flops": 1e12, "bytes_accessed": 1e9})
    r = roofline(read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")).to_json()
    assert r["device_model"] == "AMD Instinct MI300X"
    assert r["device_model_source"] == "identified from gfx942, 304 CUs and 192 GiB"
    assert r["device"] == "AMD Instinct MI300X" and r["gfx_target"] == "gfx942" and r["peak_tflops"] == 1307.4


def test_broken_cost_stats_count_as_absent():
    b = XSpaceBuilder(hostnames=["h"])
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    t0 = 1_700_000_000_000_000_000
    for i, (flops, nbytes) in enumerate([(-5.0, 1.0), (float("inf"), 1.0), (2e9, 1e9)]):
        stats = {"flops": flops, "bytes_accessed": nbytes}
        stream.kernel(f"fusion_{i}", t0 + i * 1_000_000, 1_000_000, stats=stats)
    r = roofline(read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")).to_json()
    assert r["hardware_flops"] == 2e9


def test_a_flops_arg_inside_a_costed_op_is_not_counted_again():
    """with_flops=True puts `flops` on aten::addmm too: inside aten::linear (costed by shapes) it is
    the same work, so the step counts the linear's FLOPs once."""
    trace = KinetoTrace()
    s = BASE_NS + 1_000_000_000
    trace.step(1, s, 10 * MS)
    fp32 = ["float"] * 3
    trace.op("aten::linear", s + 100_000, 2 * MS, fp32, [[64, 1024], [4096, 1024], [4096]])
    trace.op("aten::addmm", s + 110_000, 1_800_000, fp32, [[4096], [64, 1024], [1024, 4096]],
             flops=2 * 64 * 1024 * 4096)
    trace.launch("sgemm", s + 120_000, 10_000, s + 200_000, 1 * MS)
    profile = read_kineto_bytes(trace.to_bytes(), "nested.pt.trace.json")
    (linear,) = [c for c in op_costs(profile).rows() if c.source != "none"]
    assert (linear.name, linear.source, linear.flops) == ("aten::linear", "shapes", 2 * 64 * 1024 * 4096)
    assert roofline(profile, find_steps(profile)).to_json()["model_flops_per_step"] == linear.flops
