"""Roofline and MFU against constructed truth: synthetic PyTorch (Kineto) traces whose ops carry shapes
or PyTorch's own `flops`, and synthetic XSpace TPU/GPU profiles whose op events carry XLA's cost stats."""

from __future__ import annotations

import json

import pytest
from synth import XSpaceBuilder
from synth_kineto import BASE_NS, KinetoTrace

from tb_plugin_advisor.analysis import findings as fd
from tb_plugin_advisor.analysis.accelerator_peaks import GB_S, TERA
from tb_plugin_advisor.analysis.op_flops import SOURCE_SHAPES, SOURCE_SHAPES_CONV, shape_cost
from tb_plugin_advisor.analysis.roofline import analyze_roofline
from tb_plugin_advisor.analysis.roofline_ops import SOURCE_WITH_FLOPS, SOURCE_XLA
from tb_plugin_advisor.analysis.steps import find_steps
from tb_plugin_advisor.readers.kineto import read_kineto_bytes
from tb_plugin_advisor.readers.xplane import read_xplane_bytes

MS, US = 1_000_000, 1_000
STEP_MS, STEPS = 10, 4
A100_BF16, A100_FP32, A100_BW = 312 * TERA, 19.5 * TERA, 1555 * GB_S
N = 4096
MM_FLOPS = 2.0 * N ** 3  # bf16 [N,N] @ [N,N]
MM_BYTES = 3.0 * N * N * 2
ADD_ELEMS = 64 * 1024 * 1024
ADD_FLOPS = float(ADD_ELEMS)  # PyTorch's with_flops count for aten::add: one per element
ADD_BYTES = 2.0 * ADD_ELEMS * 4  # two fp32 inputs
LINEAR = ([[512, 1024], [256, 1024], [256]], 2.0 * 512 * 1024 * 256)


def torch_trace(step_ms: int = STEP_MS, add_us: int = 4000) -> bytes:
    """Per 10 ms step: a bf16 mm whose kernel runs 1 ms; an aten::linear (fp32, shapes only) holding an
    aten::addmm that launches its 0.1 ms kernel; an aten::add with PyTorch's flops whose kernel runs 4 ms
    (memory-bound, far below its roof)."""
    t = KinetoTrace()
    t0 = BASE_NS + 1_000_000_000
    for n in range(STEPS):
        s = t0 + n * step_ms * MS
        t.step(n + 1, s, step_ms * MS - US)
        t.op("aten::mm", s + 100 * US, 50 * US, ["c10::BFloat16", "c10::BFloat16"], [[N, N], [N, N]])
        t.launch("ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nn", s + 110 * US, 10 * US,
                 s + 200 * US, 1 * MS)
        t.op("aten::linear", s + 300 * US, 60 * US, ["float", "float", "float"], LINEAR[0])
        t.op("aten::addmm", s + 310 * US, 40 * US, ["float", "float", "float"],
             [[256], [512, 1024], [1024, 256]])
        t.launch("ampere_sgemm_128x64_tn", s + 320 * US, 10 * US, s + 1300 * US, 100 * US)
        add = t.op("aten::add", s + 400 * US, 50 * US, ["float", "float", "Scalar"],
                   [[ADD_ELEMS], [ADD_ELEMS], []])
        add["args"]["flops"] = ADD_ELEMS
        t.launch("void at::native::vectorized_elementwise_kernel<4>(int)", s + 410 * US, 10 * US,
                 s + 2 * MS, add_us * US)
    return t.to_bytes()


def torch_roofline():
    profile = read_kineto_bytes(torch_trace(), source="synthetic.pt.trace.json", host="h")
    steps = find_steps(profile)
    return analyze_roofline(profile, steps).to_json(), steps


def test_shape_formulas():
    flops, nbytes, source = shape_cost("aten::mm", [[8, 16], [16, 4]], ["float", "float"])
    assert (flops, nbytes, source) == (2 * 8 * 16 * 4, (8 * 16 + 16 * 4 + 8 * 4) * 4, SOURCE_SHAPES)
    assert shape_cost("aten::bmm", [[3, 8, 16], [3, 16, 4]], ["c10::Half"])[:2] == (
        2 * 3 * 8 * 16 * 4, (3 * 8 * 16 + 3 * 16 * 4 + 3 * 8 * 4) * 2)
    assert shape_cost("aten::matmul", [[2, 3, 8, 16], [16, 4]], ["float"])[0] == 2 * 6 * 8 * 16 * 4
    assert shape_cost("aten::linear", *LINEAR[:1], ["float"])[0] == LINEAR[1]
    conv = shape_cost("aten::conv2d", [[32, 3, 224, 224], [64, 3, 7, 7], [64]], ["float"])
    assert conv[0] == 2 * 32 * 64 * 224 * 224 * 3 * 49 and conv[2] == SOURCE_SHAPES_CONV
    attn = shape_cost("aten::_scaled_dot_product_flash_attention", [[2, 8, 128, 64]] * 3, ["c10::BFloat16"])
    assert attn[0] == 4 * 2 * 8 * 128 * 128 * 64
    assert shape_cost("aten::mm", [[8, 16], [15, 4]], ["float"]) is None  # inner dims disagree
    assert shape_cost("aten::relu", [[8, 16]], ["float"]) is None


def test_torch_ops_flops_time_roof_and_source():
    r, _ = torch_roofline()
    ops = {o["name"]: o for o in r["ops"]}
    assert set(ops) == {"aten::mm", "aten::linear", "aten::add"}  # addmm sits inside linear: counted once
    mm = ops["aten::mm"]
    assert mm["source"] == SOURCE_SHAPES and mm["precision"] == "bf16" and mm["calls"] == STEPS
    assert mm["flops"] == pytest.approx(STEPS * MM_FLOPS) and mm["bytes"] == pytest.approx(STEPS * MM_BYTES)
    assert mm["time_ms"] == pytest.approx(STEPS * 1.0)
    assert mm["achieved_flops_per_s"] == pytest.approx(MM_FLOPS / 1e-3)
    assert mm["bound"] == "compute" and mm["roof_flops_per_s"] == pytest.approx(A100_BF16)
    assert mm["roof_pct"] == pytest.approx(100 * MM_FLOPS / 1e-3 / A100_BF16, abs=0.01)
    linear = ops["aten::linear"]
    assert linear["flops"] == pytest.approx(STEPS * LINEAR[1])
    assert linear["time_ms"] == pytest.approx(STEPS * 0.1)
    assert linear["precision"] == "fp32" and linear["precision_source"] == "dtype"
    add = ops["aten::add"]
    assert add["source"] == SOURCE_WITH_FLOPS and add["bytes"] == pytest.approx(STEPS * ADD_BYTES)
    assert add["bound"] == "memory"
    roof = min(A100_FP32, ADD_FLOPS / ADD_BYTES * A100_BW)
    assert add["roof_flops_per_s"] == pytest.approx(roof)
    assert add["roof_pct"] == pytest.approx(100 * ADD_FLOPS / 4e-3 / roof, abs=0.01)
    kernel_ms = STEPS * (1.0 + 0.1 + 4.0)
    assert add["time_pct"] == pytest.approx(100 * STEPS * 4.0 / kernel_ms, abs=0.01)
    assert r["flops_sources"] == {SOURCE_SHAPES: 2 * STEPS, SOURCE_WITH_FLOPS: STEPS}
    assert r["accelerator"]["name"] == "NVIDIA A100 40GB" and "nvidia.com" in r["accelerator"]["source"]


def test_torch_mfu_per_step():
    r, steps = torch_roofline()
    steady = int(steps.steady.sum())
    step_flops = MM_FLOPS + LINEAR[1] + ADD_FLOPS
    assert r["steps"] == steady and len(r["per_step"]) == steady
    assert r["mfu_precision"] == "bf16" and r["devices"] == 1
    step_s = (STEP_MS * MS - US) / 1e9
    for s in r["per_step"]:
        assert s["flops"] == pytest.approx(step_flops)
        assert s["mfu_pct"] == pytest.approx(100 * step_flops / step_s / A100_BF16, abs=0.01)
    assert r["mfu_pct"] == pytest.approx(100 * step_flops / step_s / A100_BF16, abs=0.01)
    assert r["achieved_flops_per_s"] == pytest.approx(step_flops / step_s)


def test_roofline_findings_fire_on_their_thresholds():
    r, _ = torch_roofline()
    ids = [f["id"] for f in r["findings"]]
    assert ids.count("roofline.far_below_roof") == 1 and "aten::add" in r["findings"][0]["evidence"]
    assert "roofline.low_mfu" in ids  # ~4.5 % of the bf16 peak
    base = {"ops": [{"name": "op", "roof_pct": fd.ROOFLINE_FAR_BELOW_PCT, "time_pct": 50.0,
                     "bound": "memory", "achieved_flops_per_s": 1.0, "roof_flops_per_s": 10.0,
                     "precision": "fp32", "source": "s"}],
            "mfu_pct": fd.LOW_MFU_PCT}
    assert fd.roofline_findings(base) == []  # both exactly at their threshold: quiet
    base["ops"][0]["roof_pct"] -= 0.01
    base["mfu_pct"] -= 0.01
    assert [f.id for f in fd.roofline_findings(base)] == ["roofline.far_below_roof", "roofline.low_mfu"]
    assert "memory-bound" in fd.roofline_findings(base)[0].message
    base["ops"][0].update(bound="compute", precision="bf16")
    assert "already in 16 bits" in fd.roofline_findings(base)[0].message
    base["ops"][0].update(precision="fp32")
    assert "16-bit inputs" in fd.roofline_findings(base)[0].message
    base["ops"][0]["time_pct"] = fd.ROOFLINE_MIN_TIME_PCT - 0.01
    assert [f.id for f in fd.roofline_findings(base)] == ["roofline.low_mfu"]


def xla_profile(kind: str) -> bytes:
    """Per 10 ms step one fusion (2e12 FLOPs, 4e9 bytes, 5 ms) and one op without cost stats."""
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python", id=1)
    t0 = 1_700_000_000_000_000_000
    for s in range(STEPS):
        python.event("train", t0 + s * STEP_MS * MS, STEP_MS * MS - 1, stats={"step_num": s + 1, "_r": 1})
    if kind == "tpu":
        plane = b.plane("/device:TPU:0").set_stats({"device_type_string": "TPU v4"})
        ops = plane.line("XLA Ops", id=2)
        for s in range(STEPS):
            t = t0 + s * STEP_MS * MS
            ops.event("fusion.1", t + MS, 5 * MS, metadata_stats={"flops": 2e12, "bytes_accessed": 4e9})
            ops.event("copy.2", t + 7 * MS, 1 * MS)
    else:
        stream = b.gpu_plane(0, model="NVIDIA H100 80GB HBM3").line("Stream #7(Kernel)", id=7)
        for s in range(STEPS):
            t = t0 + s * STEP_MS * MS
            stream.kernel("loop_fusion_1", t + MS, 5 * MS, hlo_op="fusion.1",
                          stats={"flops": 2e12, "bytes_accessed": 4e9})
            stream.kernel("copy_2", t + 7 * MS, 1 * MS, hlo_op="copy.2")
    return b.to_bytes()


# TPU: bf16 assumed (its matrix units' precision). GPU: fp32 assumed, but 400 TFLOP/s is beyond the
# H100's fp32 peak (67) and within its tf32 peak (494.5): the precision is inferred from the rate.
@pytest.mark.parametrize("kind,precision,known,peak,bandwidth", [
    ("tpu", "bf16", "assumed", 275 * TERA, 1200 * GB_S),
    ("gpu", "tf32", "inferred from the achieved rate", 494.5 * TERA, 3350 * GB_S)])
def test_xla_cost_stats_give_the_roofline_and_mfu(kind, precision, known, peak, bandwidth):
    profile = read_xplane_bytes(xla_profile(kind), source="synthetic", host="h")
    steps = find_steps(profile)
    r = analyze_roofline(profile, steps).to_json()
    (op,) = r["ops"]
    assert op["name"] == "fusion.1" and op["source"] == SOURCE_XLA and op["precision_source"] == known
    assert op["precision"] == precision and r["mfu_precision"] == precision
    assert op["intensity_flops_per_byte"] == pytest.approx(500.0)
    roof = min(peak, 500.0 * bandwidth)
    assert op["roof_flops_per_s"] == pytest.approx(roof)
    assert op["achieved_flops_per_s"] == pytest.approx(2e12 / 5e-3)
    assert op["time_pct"] == pytest.approx(100 * 5 / 6, abs=0.01)
    step_s = (STEP_MS * MS - 1) / 1e9
    assert r["mfu_pct"] == pytest.approx(100 * 2e12 / step_s / peak, abs=0.01)
    json.dumps(r, allow_nan=False)


def test_cpu_only_trace_reports_flops_without_a_roof():
    t = KinetoTrace(devices=[])
    s = BASE_NS + 1_000_000_000
    t.step(1, s, 10 * MS)
    t.op("aten::mm", s + MS, 2 * MS, ["float", "float"], [[64, 128], [128, 32]])
    profile = read_kineto_bytes(t.to_bytes(), source="cpu.pt.trace.json", host="h")
    r = analyze_roofline(profile, find_steps(profile)).to_json()
    (op,) = r["ops"]
    assert op["achieved_flops_per_s"] == pytest.approx(2 * 64 * 128 * 32 / 2e-3)
    assert op["roof_flops_per_s"] is None and r["accelerator"] is None and r["mfu_pct"] is None


def test_mfu_over_the_device_span_when_no_step_holds_an_op():
    """A step marker around the host loop only: MFU falls back to the span the GPU was busy, labelled."""
    t = KinetoTrace()
    s = BASE_NS + 1_000_000_000
    t.step(1, s, 1 * MS)
    t.op("aten::mm", s + 5 * MS, 50 * US, ["c10::BFloat16", "c10::BFloat16"], [[N, N], [N, N]])
    t.launch("gemm_a", s + 5 * MS + 10 * US, 10 * US, s + 6 * MS, 1 * MS)
    t.op("aten::mm", s + 7 * MS, 50 * US, ["c10::BFloat16", "c10::BFloat16"], [[N, N], [N, N]])
    t.launch("gemm_b", s + 7 * MS + 10 * US, 10 * US, s + 8 * MS, 1 * MS)
    profile = read_kineto_bytes(t.to_bytes(), source="span.pt.trace.json", host="h")
    r = analyze_roofline(profile, find_steps(profile)).to_json()
    assert r["mfu_basis"] == "device span" and r["steps"] == 0 and r["per_step"] == []
    span_s = 3e-3  # first kernel start (6 ms) to last kernel end (9 ms)
    assert r["achieved_flops_per_s"] == pytest.approx(2 * MM_FLOPS / span_s)
    assert r["mfu_pct"] == pytest.approx(100 * 2 * MM_FLOPS / span_s / A100_BF16, abs=0.01)
    low = [f for f in r["findings"] if f["id"] == "roofline.low_mfu"]
    assert not low or "span the devices were busy" in low[0]["evidence"]


def test_conv_output_from_concrete_stride_and_padding():
    """ResNet's 3x3 stride-2 conv as PyTorch records it: 14x14 in, 7x7 out."""
    dims = [[10, 256, 14, 14], [512, 256, 3, 3], [], [], [], [], []]
    concrete = ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]
    flops, nbytes, source = shape_cost("aten::conv2d", dims, ["c10::BFloat16"], concrete)
    assert source == SOURCE_SHAPES and flops == 2 * 10 * 512 * 7 * 7 * 256 * 9
    assert nbytes == (10 * 256 * 14 * 14 + 512 * 256 * 9 + 10 * 512 * 7 * 7) * 2
    same = shape_cost("aten::conv2d", dims, ["c10::BFloat16"], ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", ""])
    assert same[0] == 2 * 10 * 512 * 14 * 14 * 256 * 9
    dilated = shape_cost("aten::conv2d", dims, ["float"], ["", "", "", "[1, 1]", "[0, 0]", "[2, 2]", "1"])
    assert dilated[0] == 2 * 10 * 512 * 10 * 10 * 256 * 9  # 14 - 2*(3-1) = 10
    unknown = shape_cost("aten::conv2d", dims, ["float"], ["", "", "", "[1, 1]", "'same'", "[1, 1]", "1"])
    assert unknown[2] == SOURCE_SHAPES_CONV  # padding="same" is not a list: the labelled assumption


def test_conv_in_a_trace_uses_its_concrete_inputs():
    t = KinetoTrace()
    s = BASE_NS + 1_000_000_000
    t.step(1, s, 10 * MS)
    conv = t.op("aten::conv2d", s + MS, 100 * US, ["c10::BFloat16", "c10::BFloat16", "", "ScalarList",
                                                     "ScalarList", "ScalarList", "Scalar"],
                [[10, 256, 14, 14], [512, 256, 3, 3], [], [], [], [], []])
    conv["args"]["Concrete Inputs"] = ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]
    t.launch("igemm_conv", s + MS + 10 * US, 10 * US, s + 2 * MS, 1 * MS)
    profile = read_kineto_bytes(t.to_bytes(), source="conv.pt.trace.json", host="h")
    (op,) = analyze_roofline(profile, find_steps(profile)).to_json()["ops"]
    assert op["source"] == SOURCE_SHAPES and op["flops"] == 2 * 10 * 512 * 7 * 7 * 256 * 9


def test_conv_backward_costs_one_forward_per_gradient():
    """aten::convolution_backward as PyTorch records it (ResNet, 3x3, 512 channels, 7x7)."""
    dims = [[10, 512, 7, 7], [10, 512, 7, 7], [512, 512, 3, 3]] + [[]] * 8
    forward = 2 * 10 * 512 * 7 * 7 * 512 * 9
    both = ["", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"]
    flops, nbytes, source = shape_cost("aten::convolution_backward", dims, ["c10::BFloat16"], both)
    assert flops == 2 * forward and source == SOURCE_SHAPES
    assert nbytes == (3 * 10 * 512 * 49 + 2 * 512 * 512 * 9) * 2  # read dy, x, w; write dx, dw
    weight_only = both[:10] + ["[False, True, False]"]
    assert shape_cost("aten::convolution_backward", dims, ["c10::BFloat16"], weight_only)[0] == forward
    assert shape_cost("aten::convolution_backward", dims, ["float"], None)[0] == 2 * forward  # not recorded


def test_broken_or_hostile_counts_are_no_flops():
    assert shape_cost("aten::mm", [[10**200, 2], [2, 10**200]], ["float"]) is None
    assert shape_cost("aten::mm", [[0, 2], [2, 3]], ["float"]) is None  # zero FLOPs: nothing to place
    b = XSpaceBuilder(hostnames=["h"])
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    t0 = 1_700_000_000_000_000_000
    cases = [(float("nan"), 1.0), (float("inf"), 1.0), (1e30, 1.0), (2e9, 1e300)]
    for i, (flops, nbytes) in enumerate(cases):
        stream.kernel(f"fusion_{i}", t0 + i * MS, MS, stats={"flops": flops, "bytes_accessed": nbytes})
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    r = analyze_roofline(profile, find_steps(profile)).to_json()
    (op,) = r["ops"]
    assert op["name"] == "fusion_3" and op["bytes"] is None and op["flops"] == 2e9
    json.dumps(r, allow_nan=False)



def test_gpu_plane_with_xprofs_xla_ops_line_reads_the_ops_there():
    """A processed GPU plane: kernels on a stream, and the derived "XLA Ops" line whose events span
    each HLO op and carry its cost stats: the op (not its two kernels) is the roofline's point."""
    b = XSpaceBuilder(hostnames=["h"])
    plane = b.gpu_plane(0, model="NVIDIA H100 80GB HBM3")
    stream = plane.line("Stream #7(Kernel)", id=7)
    ops = plane.line("XLA Ops", id=100)
    t0 = 1_700_000_000_000_000_000
    stream.kernel("gemm_part1", t0, 2 * MS, hlo_op="dot.1")
    stream.kernel("gemm_part2", t0 + 2 * MS, 2 * MS, hlo_op="dot.1")
    ops.event("dot.1", t0, 4 * MS, metadata_stats={"flops": 8e12, "bytes_accessed": 1e9})
    ops.event("dot.2", t0 + 5 * MS, 4 * MS, metadata_stats={"flops": 2e12, "bytes_accessed": 1e9})
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    ops_json = {o["name"]: o for o in analyze_roofline(profile, None).to_json()["ops"]}
    op = ops_json["dot.1"]
    assert op["calls"] == 1 and op["time_ms"] == pytest.approx(4.0)
    assert op["achieved_flops_per_s"] == pytest.approx(2e15)
    bf16 = ops_json["dot.2"]  # 500 TFLOP/s: above the fp32 (67) and tf32 (494.5) peaks, within bf16's
    assert bf16["precision"] == "bf16" and bf16["precision_source"] == "inferred from the achieved rate"
    assert bf16["roof_pct"] == pytest.approx(100 * 5e14 / (989.5 * TERA), abs=0.01)
    # 2 PFLOP/s is beyond every H100 peak (fp8: 1979 TFLOP/s): the assumption stays and the op shows
    # above its roof (a broken cost stat, visibly) rather than under a made-up one
    assert op["precision_source"] == "assumed" and op["roof_pct"] > 100


def test_mfu_divides_by_every_device_of_the_host():
    """Two TPU chips each running the same fusion: the FLOPs double, the devices too, MFU stays."""
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python", id=1)
    t0 = 1_700_000_000_000_000_000
    for s in range(STEPS):
        python.event("train", t0 + s * STEP_MS * MS, STEP_MS * MS - 1, stats={"step_num": s + 1, "_r": 1})
    for chip in range(2):
        ops = b.plane(f"/device:TPU:{chip}").set_stats({"device_type_string": "TPU v4"}).line("XLA Ops", id=2)
        for s in range(STEPS):
            ops.event("fusion.1", t0 + s * STEP_MS * MS + MS, 5 * MS,
                      metadata_stats={"flops": 2e12, "bytes_accessed": 4e9})
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    r = analyze_roofline(profile, find_steps(profile)).to_json()
    step_s = (STEP_MS * MS - 1) / 1e9
    assert r["devices"] == 2 and r["ops"][0]["calls"] == 2 * STEPS
    assert r["mfu_pct"] == pytest.approx(100 * 2e12 / step_s / (275 * TERA), abs=0.01)
    assert r["achieved_flops_per_s"] == pytest.approx(2e12 / step_s)


def test_assumed_conv_geometry_makes_flops_and_mfu_upper_bounds():
    """Without Concrete Inputs a conv is counted at stride 1, same padding: at least its true FLOPs."""
    t = KinetoTrace()
    s = BASE_NS + 1_000_000_000
    t.step(1, s, 10 * MS)
    t.op("aten::conv2d", s + MS, 100 * US, ["float", "float"], [[8, 64, 56, 56], [64, 64, 3, 3]])
    t.launch("implicit_convolve_sgemm", s + MS + 10 * US, 10 * US, s + 2 * MS, 2 * MS)
    profile = read_kineto_bytes(t.to_bytes(), source="conv.pt.trace.json", host="h")
    r = analyze_roofline(profile, find_steps(profile)).to_json()
    assert r["ops"][0]["flops_upper_bound"] is True and r["mfu_upper_bound"] is True
    exact, _ = torch_roofline()
    assert exact["mfu_upper_bound"] is False and not any(o["flops_upper_bound"] for o in exact["ops"])
