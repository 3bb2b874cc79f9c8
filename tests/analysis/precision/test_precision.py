"""Precision shares and the mixed-precision verdict on synthetic profiles whose truth is known.

Kernel names are real ones (sources in tests/analysis/classify/test_patterns.py); only the timings
are made up.
"""

from __future__ import annotations

import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.precision.device import VERDICT_THRESHOLDS, analyze_precision
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
MS = 1_000_000

BF16_GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"
FP32_GEMM = "volta_sgemm_128x64_nn"  # cuBLAS picks the volta_ SIMT kernels on Ampere too
FP16_ELEMENTWISE = (
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
    "Eigen::Tensor<Eigen::half, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorConversionOp<Eigen::half,"
)
XLA_FUSION = "loop_convert_fusion.kd"
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"


def gpu_profile(kernels, model="NVIDIA A100-SXM4-40GB", cc=(8, 0), vendor="Nvidia"):
    """One GPU; `kernels` = [(name, duration_ms, tf_op or None, extra stats)] back to back on a stream."""
    b = XSpaceBuilder(hostnames=["h"])
    b.plane("/host:CPU").line("python", id=1).event("train", T0, 1000 * MS, stats={"step_num": 1, "_r": 1})
    gpu = b.gpu_plane(0, model=model, compute_capability=cc, vendor=vendor)
    stream = gpu.line("Stream #7(Kernel)", id=7)
    t = T0
    for name, ms, tf_op, stats in kernels:
        dur = int(ms * MS)
        stream.kernel(name, t, dur, tf_op=tf_op, stats=stats or None)
        t += dur + 1000
    return read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")


def test_bf16_gemm_counts_as_bf16_and_mixed_precision_is_active():
    profile = gpu_profile([(BF16_GEMM, 40.0, "model/dense/MatMul:MatMul", None)])
    result = analyze_precision(profile)
    pct = result.to_json()["precision_pct"]
    assert abs(pct["bf16"] - 100.0) <= 0.01
    assert result.sixteen_bit_share_pct == pytest.approx(100.0, abs=0.01)
    assert result.fp32_share_pct == 0.0
    assert result.verdict == "active"
    assert "bf16" in result.summary and any("counts bf16 as 32-bit" in e for e in result.evidence)


def test_70_30_split_gives_70_percent_bf16_and_a_partial_verdict_naming_the_fp32_op():
    profile = gpu_profile([
        (BF16_GEMM, 70.0, "model/dense/MatMul:MatMul", None),
        (FP32_GEMM, 30.0, "model/head/MatMul:MatMul", None),
    ])
    result = analyze_precision(profile, steps=3)
    out = result.to_json()
    assert abs(out["precision_pct"]["bf16"] - 70.0) <= 0.5
    assert abs(out["precision_pct"]["fp32"] - 30.0) <= 0.5
    assert abs(sum(out["precision_pct"].values()) - 100.0) <= 0.01
    assert out["precision"]["verdict"] == "partial"  # 70 % of matrix work in bf16: 20 <= 70 < 80
    top = out["precision"]["top_fp32_ops"][0]
    assert top["name"] == "model/head/MatMul:MatMul"
    assert abs(top["time_ms"] - 10.0) <= 0.01  # 30 ms over 3 steps
    assert out["precision"]["time_basis"] == "per_step"
    assert result.tf32_possible  # A100 ran an fp32 GEMM without TF32


@pytest.mark.parametrize(
    "bf16_ms,verdict",
    [(85.0, "active"), (75.0, "partial"), (25.0, "partial"), (15.0, "not_active")],
)
def test_verdict_thresholds_on_both_sides(bf16_ms, verdict):
    assert dict(VERDICT_THRESHOLDS) == {"active": 80.0, "partial": 20.0}
    profile = gpu_profile([
        (BF16_GEMM, bf16_ms, "model/dense/MatMul:MatMul", None),
        (FP32_GEMM, 100.0 - bf16_ms, "model/head/MatMul:MatMul", None),
    ])
    assert analyze_precision(profile).verdict == verdict


def test_fp32_elementwise_work_beside_bf16_matmuls_keeps_the_verdict_active():
    # Mixed precision keeps softmax/loss/optimizer in fp32 on purpose: judge the matrix work.
    softmax = ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*,"
               " float const*, int, int, int)")
    profile = gpu_profile([
        (BF16_GEMM, 40.0, "m/dense/MatMul:MatMul", None),
        (softmax, 60.0, "m/Softmax:Softmax", None),
    ])
    result = analyze_precision(profile)
    assert abs(result.precision_pct["fp32"] - 60.0) <= 0.5
    assert result.verdict == "active"
    assert result.matrix_low_precision_pct == pytest.approx(100.0)


def test_fp32_split_k_reduction_of_a_bf16_matmul_does_not_lower_the_verdict():
    split_k = ("void splitKreduce_kernel<float, float, float>(cublasSplitKParams<float>, float const*,"
               " float const*, float*, float const*, float const*)")
    profile = gpu_profile([
        (BF16_GEMM, 60.0, "m/dense/MatMul:MatMul", None),
        (split_k, 40.0, "m/dense/MatMul:MatMul", None),
    ])
    result = analyze_precision(profile)
    assert abs(result.precision_pct["fp32"] - 40.0) <= 0.5
    assert result.matrix_low_precision_pct == pytest.approx(100.0)
    assert result.verdict == "active"


def test_collectives_and_copy_kernels_are_not_compute():
    profile = gpu_profile([
        (BF16_GEMM, 50.0, "m/MatMul:MatMul", None),
        (NCCL, 50.0, None, None),
        ("__amd_rocclr_copyBuffer.kd", 25.0, None, None),
    ])
    result = analyze_precision(profile)
    assert result.compute_ns == 50 * MS
    assert abs(result.precision_pct["bf16"] - 100.0) <= 0.01
    assert any("collectives" in e for e in result.evidence)


def test_kernels_without_a_type_are_unknown_and_give_no_verdict():
    profile = gpu_profile([(XLA_FUSION, 10.0, None, None)] * 3, vendor="AMD", model="", cc=(9, 4))
    result = analyze_precision(profile)
    assert result.to_json()["precision_pct"]["unknown"] == 100.0
    assert result.verdict == "unknown"
    assert "unknown" in result.summary.lower()


def test_a_shape_stat_types_kernels_whose_name_has_no_type():
    profile = gpu_profile([
        (XLA_FUSION, 30.0, "m/Cast:Cast", {"shape": "(half[4,384,1024];half[])"}),
        (XLA_FUSION, 10.0, "m/Cast_1:Cast", {"shape": "(float[1024])"}),
        (XLA_FUSION, 60.0, "m/Shape:Shape", {"shape": "(int32[3])"}),
    ])
    result = analyze_precision(profile)
    pct = result.precision_pct
    assert abs(pct["fp16"] - 30.0) <= 0.5
    assert abs(pct["fp32"] - 10.0) <= 0.5
    assert abs(pct["unknown"] - 60.0) <= 0.5
    assert any("`shape` stat" in e for e in result.evidence)


def test_older_tf_level0_annotation_names_the_fp32_op():
    profile = gpu_profile([(FP32_GEMM, 5.0, None, {"level 0": "replica_0/model/dense/MatMul:MatMul"})])
    result = analyze_precision(profile)
    assert result.top_fp32_ops[0][0] == "replica_0/model/dense/MatMul:MatMul"


def test_no_compute_means_all_zero_shares_and_unknown():
    b = XSpaceBuilder(hostnames=["h"])
    b.plane("/host:CPU").line("python", id=1).event("train", T0, MS, stats={"step_num": 1, "_r": 1})
    result = analyze_precision(read_xplane_bytes(b.to_bytes(), source="empty", host="h"))
    out = result.to_json()
    assert set(out["precision_pct"]) == set(PRECISIONS)
    assert all(v == 0.0 for v in out["precision_pct"].values())
    assert out["precision"]["verdict"] == "unknown" and out["precision"]["basis"] == "none"


# ---------------------------------------------------------------------------------------------------
# CPU-only profiles: op time typed by the op's output MemoryAllocation


def host_profile(ops, allocations=True):
    """`ops` = [(op event name "scope/op:Type", ms, TF DataType of its output or None)]."""
    b = XSpaceBuilder(hostnames=["h"])
    host = b.plane("/host:CPU")
    host.line("python", id=1).event("train", T0, 1000 * MS, stats={"step_num": 1, "_r": 1})
    compute = host.line("tf_Compute", id=2)
    t = T0
    for name, ms, dtype in ops:
        dur = int(ms * MS)
        compute.event(name, t, dur)
        if allocations and dtype is not None:
            compute.event("MemoryAllocation", t + 10, 100, stats={
                "data_type": dtype, "tf_op": name.rsplit(":", 1)[0], "region_type": "output",
                "requested_bytes": 4096, "allocator_name": "bfc_cpu_allocator_for_gpu",
            })
            # a larger fp32 scratch buffer: temps must not decide the op's type
            compute.event("MemoryAllocation", t + 200, 100, stats={
                "data_type": 1, "tf_op": name.rsplit(":", 1)[0], "region_type": "temp",
                "requested_bytes": 1 << 20,
            })
        t += dur + 1000
    return read_xplane_bytes(b.to_bytes(), source="cpu", host="h")


CPU_OPS = [
    ("StatefulPartitionedCall/sequential_1/conv2d_1/convolution:Conv2D", 50.0, 14),
    ("StatefulPartitionedCall/sequential_1/dense_1/MatMul:MatMul", 20.0, 14),
    ("StatefulPartitionedCall/adam/Sqrt_9:Sqrt", 20.0, 1),
    ("StatefulPartitionedCall/compile_loss/sparse_categorical_crossentropy/Cast_1:Cast", 10.0, 9),
]


def test_cpu_profile_types_host_op_time_by_each_ops_output_allocation():
    result = analyze_precision(host_profile(CPU_OPS))
    pct = result.precision_pct
    assert result.basis == "host"
    assert abs(pct["bf16"] - 70.0) <= 0.5
    assert abs(pct["fp32"] - 20.0) <= 0.5
    assert abs(pct["unknown"] - 10.0) <= 0.5
    assert result.verdict == "active"  # all matmul/conv ops write bf16 tensors
    assert result.summary.startswith("bf16/fp16 dominant on the host")
    assert "upper bound" in result.summary  # output types bound, not measure, the math
    assert result.top_fp32_ops[0][0] == "StatefulPartitionedCall/adam/Sqrt_9:Sqrt"


def test_cpu_profile_with_fp32_matmuls_is_not_active():
    ops = [(name, ms, 1 if dtype == 14 else dtype) for name, ms, dtype in CPU_OPS]
    result = analyze_precision(host_profile(ops))
    assert result.verdict == "not_active"
    assert result.precision_pct["bf16"] == 0.0
    # fp32 is the CPU default: said plainly, with no jargon about what output types bound.
    assert result.summary.startswith("fp32 throughout, the default on a CPU: 0 % of matrix work")
    assert "bound" not in result.summary and "not active" not in result.summary


def test_cpu_profile_without_typed_allocations_says_how_to_get_them():
    result = analyze_precision(host_profile(CPU_OPS, allocations=False))
    assert result.verdict == "unknown"
    assert result.precision_pct["unknown"] == 100.0
    assert any("TF_CPU_ALLOCATOR_USE_BFC=true" in e for e in result.evidence)
