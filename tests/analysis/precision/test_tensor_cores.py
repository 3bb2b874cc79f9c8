"""Tensor Core / matrix-core analysis on synthetic profiles with known truth (real kernel names)."""

from __future__ import annotations

import numpy as np
import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis.classify.architectures import architecture
from tb_plugin_advisor.analysis.precision.device import analyze_precision
from tb_plugin_advisor.analysis.precision.tensor_cores import REASONS, analyze_tensor_cores, why_not
from tb_plugin_advisor.model import Device, KernelTable, Line, MemcpyTable, Plane, Profile
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
MS = 1_000_000

BF16_GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"
FP32_GEMM = "volta_sgemm_128x64_nn"
TF32_CONV = ("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5"
             "_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer")
NCHW_TO_NHWC = ("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true,"
                " (cudnnKernelDataType_t)0>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)")
TENSILE_BF16 = "Cijk_Ailk_Bljk_BBS_BH_MT256x224x64_MI16x16x16x1_SN_1LDSB1_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3"
TENSILE_FP16_VALU = "Cijk_Ailk_Bljk_HSS_BH_MT64x32x8_SE_1LDSB0_AMAS2"

A100 = dict(model="NVIDIA A100-SXM4-40GB", cc=(8, 0), vendor="Nvidia")
V100 = dict(model="Tesla V100-SXM2-16GB", cc=(7, 0), vendor="Nvidia")
P100 = dict(model="Tesla P100-PCIE-16GB", cc=(6, 0), vendor="Nvidia")
MI300X = dict(model="AMD Instinct MI300X", cc=(9, 4), vendor="AMD")


def gpu_profile(kernels, model, cc, vendor):
    """One GPU; `kernels` = [(name, duration_ms, {kernel(...) keyword arguments})] back to back."""
    b = XSpaceBuilder(hostnames=["h"])
    b.plane("/host:CPU").line("python", id=1).event("train", T0, 1000 * MS, stats={"step_num": 1, "_r": 1})
    stream = b.gpu_plane(0, model=model, compute_capability=cc, vendor=vendor).line("Stream #7(Kernel)", id=7)
    t = T0
    for name, ms, kwargs in kernels:
        dur = int(ms * MS)
        stream.kernel(name, t, dur, **kwargs)
        t += dur + 1000
    return read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")


def test_bf16_gemm_runs_on_tensor_cores():
    profile = gpu_profile([(BF16_GEMM, 40.0, {"tf_op": "m/dense/MatMul:MatMul"})], **A100)
    result = analyze_tensor_cores(profile)
    out = result.to_json()["tensor_cores"]
    assert abs(out["device_time_pct"] - 100.0) <= 0.01
    assert abs(out["eligible_time_pct"] - 100.0) <= 0.01
    assert out["eligible_not_using"] == []
    (kernel,) = out["kernels"]
    assert kernel == {"name": BF16_GEMM, "short_name": BF16_GEMM, "uses_tensor_cores": True,
                      "precision": "bf16", "time_ms": 40.0, "family": "gemm", "eligible": True}
    assert out["architecture"] == "Ampere" and out["has_tensor_cores"] is True


@pytest.mark.parametrize("gpu,reason_id,tf32_possible", [
    (A100, "fp32_tf32_off", True),
    (V100, "fp32_needs_16bit", False),
    (P100, "no_tensor_cores", False),
])
def test_fp32_gemm_is_eligible_but_not_using_with_the_device_specific_reason(gpu, reason_id, tf32_possible):
    profile = gpu_profile([(FP32_GEMM, 30.0, {"tf_op": "model/dense/MatMul:MatMul"})], **gpu)
    result = analyze_tensor_cores(profile)
    assert result.device_time_pct == 0.0
    assert abs(result.eligible_time_pct - 100.0) <= 0.01
    (entry,) = result.eligible_not_using
    assert (entry.op, entry.kernel, entry.reason_id) == ("model/dense/MatMul:MatMul", FP32_GEMM, reason_id)
    assert entry.reason == REASONS[reason_id].format(
        device=gpu["model"], arch=architecture(gpu["vendor"], gpu["model"], gpu["cc"]).name, precision="fp32",
        shape="")
    assert result.tf32_possible is tf32_possible
    assert analyze_precision(profile).tf32_possible is tf32_possible
    if reason_id == "fp32_tf32_off":
        assert "TF32" in entry.reason and "mixed_float16" not in entry.reason


def test_70_30_split_of_device_time_on_tensor_cores():
    profile = gpu_profile([
        (BF16_GEMM, 70.0, {"tf_op": "m/dense/MatMul:MatMul"}),
        (FP32_GEMM, 30.0, {"tf_op": "m/head/MatMul:MatMul"}),
    ], **A100)
    result = analyze_tensor_cores(profile, steps=10)
    assert abs(result.device_time_pct - 70.0) <= 0.5
    assert abs(result.eligible_on_tensor_cores_pct - 70.0) <= 0.5
    out = result.to_json()["tensor_cores"]
    assert abs(out["eligible_not_using"][0]["time_ms"] - 3.0) <= 0.01  # 30 ms over 10 steps
    assert out["time_basis"] == "per_step"


def test_tf32_convolution_counts_as_tensor_core_work():
    result = analyze_tensor_cores(gpu_profile([(TF32_CONV, 10.0, {"tf_op": "m/conv/Conv2D:Conv2D"})], **A100))
    assert abs(result.device_time_pct - 100.0) <= 0.01
    assert result.kernels[0]["precision"] == "tf32"
    assert not result.tf32_possible


def test_layout_transposes_inside_a_conv_op_are_reported_with_their_reason():
    conv = "m/conv2d/Conv2D:Conv2D"
    profile = gpu_profile([
        (NCHW_TO_NHWC, 4.0, {"tf_op": conv}),
        (TF32_CONV, 12.0, {"tf_op": conv}),
        (NCHW_TO_NHWC, 4.0, {"tf_op": conv}),
    ], **A100)
    result = analyze_tensor_cores(profile)
    assert abs(result.transpose_time_pct - 40.0) <= 0.5
    assert abs(result.device_time_pct - 60.0) <= 0.5
    assert abs(result.eligible_time_pct - 100.0) <= 0.5  # the whole op is matrix work
    (entry,) = result.eligible_not_using
    assert (entry.kernel, entry.reason_id, entry.time_ns) == (NCHW_TO_NHWC, "layout_transpose", 8 * MS)
    assert result.transposes == [(NCHW_TO_NHWC, 8 * MS)]
    assert any("layout transposes take 40 %" in e for e in result.evidence)


def test_16_bit_gemm_without_matrix_cores_blames_dimensions_when_the_shape_says_so():
    bad = {"tf_op": "m/dense/MatMul:MatMul", "stats": {"shape": "(half[64,1023];half[1023,4096])"}}
    good = {"tf_op": "m/dense_1/MatMul:MatMul", "stats": {"shape": "(half[64,1024];half[1024,4096])"}}
    profile = gpu_profile([(TENSILE_FP16_VALU, 5.0, bad), (TENSILE_FP16_VALU, 3.0, good)], **MI300X)
    result = analyze_tensor_cores(profile)
    by_op = {e.op: e for e in result.eligible_not_using}
    assert by_op["m/dense/MatMul:MatMul"].reason_id == "dims_not_multiple"
    assert "multiples of 8" in by_op["m/dense/MatMul:MatMul"].reason
    assert by_op["m/dense_1/MatMul:MatMul"].reason_id == "low_precision_no_tc"


def test_jax_ops_are_eligible_by_hlo_name_or_by_their_gemm_kernel():
    # xprof never calls JAX work eligible: its op names are HLO, not TF op types.
    profile = gpu_profile([
        (TENSILE_BF16, 6.0, {"tf_op": "XlaModule:", "hlo_op": "custom-call.1", "hlo_module": "jit_dot"}),
        ("gemm_fusion_dot_6.kd", 3.0, {"tf_op": "XlaModule:", "hlo_op": "gemm_fusion_dot.6",
                                       "hlo_module": "jit_loss_fn"}),
        ("loop_convert_fusion.kd", 1.0, {"tf_op": "XlaModule:", "hlo_op": "loop_convert_fusion",
                                         "hlo_module": "jit_loss_fn"}),
    ], **MI300X)
    result = analyze_tensor_cores(profile)
    assert abs(result.eligible_time_pct - 90.0) <= 0.5
    assert abs(result.device_time_pct - 90.0) <= 0.5  # Triton GEMM fusions use MFMA on CDNA3
    names = {k["name"]: k for k in result.kernels}
    assert names[TENSILE_BF16]["uses_tensor_cores"] and names[TENSILE_BF16]["precision"] == "bf16"


def test_unknown_amd_generation_does_not_claim_triton_gemms_use_matrix_cores():
    amd_unknown = dict(model="", cc=(9, 0), vendor="AMD")  # gfx906 (no MFMA) and gfx90a both say 9.0
    result = analyze_tensor_cores(gpu_profile([("gemm_fusion_dot_6.kd", 3.0, {})], **amd_unknown))
    assert result.device_time_pct == 0.0 and result.has_tensor_cores is None


def test_why_not_falls_back_to_unknown_precision():
    rid, text = why_not("unknown", "gemm", architecture("Nvidia", "", (8, 0)), "GPU", None)
    assert rid == "unknown_precision" and text == REASONS["unknown_precision"]


def test_no_kernels_no_percentages():
    b = XSpaceBuilder(hostnames=["h"])
    b.plane("/host:CPU").line("python", id=1).event("train", T0, MS, stats={"step_num": 1, "_r": 1})
    profile = read_xplane_bytes(b.to_bytes(), source="cpu", host="h")
    out = analyze_tensor_cores(profile).to_json()["tensor_cores"]
    assert (out["device_time_pct"], out["eligible_time_pct"], out["kernels"]) == (0.0, 0.0, [])


# ---------------------------------------------------------------------------------------------------
# Speed: one classification per distinct name, numpy for the rest


def big_profile(n: int) -> Profile:
    """A GPU with n kernels over 64 real names, built as columns (the reader's output form)."""
    names = [BF16_GEMM, FP32_GEMM, TF32_CONV, NCHW_TO_NHWC, "loop_convert_fusion.kd",
             "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, int)"]
    names += [f"{BF16_GEMM}_v{i}" for i in range(58)]
    rng = np.random.default_rng(0)
    name_index = rng.integers(0, len(names), n).astype(np.int32)
    duration = rng.integers(1_000, 100_000, n).astype(np.int64)
    start = T0 + np.cumsum(duration + 100)
    strings = ["m/dense/MatMul:MatMul", "m/Softmax:Softmax", "m/conv/Conv2D:Conv2D"]
    tf_op = rng.integers(-1, len(strings), n).astype(np.int32)
    plane = Plane(id=1, name="/device:GPU:0", event_names=names, stats={}, strings=strings)
    line = Line(id=7, name="Stream #7(Kernel)", display_name="", plane=plane, start_ns=start,
                duration_ns=duration, metadata_index=name_index)
    plane.lines = [line]
    none = np.full(n, -1, dtype=np.int32)
    kernels = KernelTable(names=names, strings=strings, start_ns=start, duration_ns=duration,
                          name_index=name_index, line_index=np.zeros(n, dtype=np.int32), tf_op=tf_op,
                          hlo_op=none, hlo_module=none, details=none, correlation_id=np.full(n, -1))
    empty = np.zeros(0, dtype=np.int64)
    copies = MemcpyTable(start_ns=empty, duration_ns=empty, direction=np.zeros(0, dtype=np.int8), bytes=empty,
                         line_index=np.zeros(0, dtype=np.int32))
    gpu = Device(name="/device:GPU:0", kind="gpu", ordinal=0, vendor="Nvidia", model="NVIDIA A100-SXM4-40GB",
                 compute_capability=(8, 0), core_count=108, clock_rate_khz=None, memory_bytes=None,
                 memory_bandwidth=None, plane=plane, kernels=kernels, memcpys=copies)
    return Profile(path="big", host="h", size_bytes=0, planes=[plane], devices=[gpu], step_markers=[])


def test_a_million_kernels_give_the_shares_their_columns_imply():
    """Vectorised over columns (speed is measured in bench/bench_kernels.py, not here)."""
    profile = big_profile(1_000_000)
    precision = analyze_precision(profile)
    tensor_cores = analyze_tensor_cores(profile)
    duration = profile.devices[0].kernels.duration_ns
    names = profile.devices[0].kernels.name_index
    bf16 = duration[(names == 0) | (names >= 6)].sum() / duration.sum() * 100
    assert abs(precision.precision_pct["bf16"] - bf16) <= 0.01
    assert tensor_cores.compute_ns == int(duration.sum())


V100_FP16_GEMM = "volta_h884gemm_64x64_ldg8_nn"


def test_a_kernel_on_two_gpus_is_one_row_with_both_times():
    """Two GPUs (an A100 and a V100) run the same fp32 GEMM (3 + 2 ms) and each its own kernels: the
    kernel list sums the GEMM over both devices, keeps one row per name and orders by total time, ties
    in the order first seen (columns summed per name: tensor_cores._KernelSums)."""
    b = XSpaceBuilder(hostnames=["h"])
    b.plane("/host:CPU").line("python", id=1).event("train", T0, 1000 * MS, stats={"step_num": 1, "_r": 1})
    first = b.gpu_plane(0, model=A100["model"], compute_capability=A100["cc"]).line("Stream #7", id=7)
    second = b.gpu_plane(1, model=V100["model"], compute_capability=V100["cc"]).line("Stream #7", id=7)
    for line, kernels in ((first, [(FP32_GEMM, 3), (BF16_GEMM, 4), (TF32_CONV, 1)]),
                          (second, [(FP32_GEMM, 2), (V100_FP16_GEMM, 1)])):
        t = T0
        for name, ms in kernels:
            line.kernel(name, t, ms * MS, tf_op="m/dense/MatMul:MatMul")
            t += ms * MS + 1000
    result = analyze_tensor_cores(read_xplane_bytes(b.to_bytes(), source="synthetic", host="h"))
    rows = [(k["name"], k["time_ns"], k["precision"], k["uses_tensor_cores"]) for k in result.kernels]
    assert rows == [(FP32_GEMM, 5 * MS, "fp32", False), (BF16_GEMM, 4 * MS, "bf16", True),
                    (TF32_CONV, 1 * MS, "tf32", True), (V100_FP16_GEMM, 1 * MS, "fp16", True)]
    assert result.kernels[0]["by_prec"].sum() == 5 * MS and result.kernels[0]["eligible"] is True
