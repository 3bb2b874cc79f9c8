"""Tensor Core / matrix-core figures on the real profiles of ../shared/corpus.

Each expectation is checked against what the kernel names themselves say, summed straight from the
reader's kernel table with plain string tests (independent of the pattern tables).
"""

from __future__ import annotations

import pytest
from paths import CORPUS, NO_CORPUS

from tb_plugin_advisor.analysis.precision.tensor_cores import analyze_tensor_cores
from tb_plugin_advisor.readers.xplane.reader import read_xplane

MI300 = CORPUS / "tracelens" / "tests" / "traces" / "mi300"
JAX_GEMM = MI300 / "jax08_gemm" / "tw003.xplane.pb"
JAX_CONV = MI300 / "jax08_conv" / "tw003.xplane.pb"
JAX_ELEMENTWISE = MI300 / "jax08_elementwise" / "tw003.xplane.pb"
JAX_ATTENTION_MI355 = (CORPUS / "tracelens" / "tests" / "test_data_jax_te_fused_attn_categorization"
                       / "934987a2fc2f.xplane.pb")
V100_TF = sorted((CORPUS / "xprof" / "demo" / "plugins" / "profile" / "GPU-multi-worker").glob("*.xplane.pb"))
TPU = CORPUS / "xprof" / "older_01d85de" / "xprof" / "convert" / "test_xplanes" / "tpu_inference_2.xplane.pb"
ALL = sorted(p for p in CORPUS.rglob("*.xplane.pb") if "_corrupt" not in p.parts)
needs_corpus = pytest.mark.skipif(not ALL, reason=NO_CORPUS)


def kernel_times(profile):
    """(name, duration_ns) of every kernel of every device, straight from the reader."""
    out = []
    for device in profile.devices:
        table = device.kernels
        for index, duration in zip(table.name_index.tolist(), table.duration_ns.tolist()):
            out.append((table.names[index], duration))
    return out


def runtime_copy(name: str) -> bool:
    return name.startswith("__amd_rocclr_")


@needs_corpus
def test_jax_gemm_on_mi300x_runs_its_gemms_on_matrix_cores():
    profile = read_xplane(str(JAX_GEMM))
    result = analyze_tensor_cores(profile)
    kernels = kernel_times(profile)
    compute = sum(d for n, d in kernels if not runtime_copy(n))
    # rocBLAS Tensile kernels name their MFMA instruction (MI16x16x16x1); XLA's Triton GEMM fusion
    # (gemm_fusion_dot) uses MFMA on gfx942 too.
    matrix = sum(
        d for n, d in kernels if (n.startswith("Cijk_") and "_MI16x16x16x1_" in n) or "gemm_fusion" in n
    )
    assert result.architectures == ["CDNA3"] and result.has_tensor_cores is True
    assert abs(result.device_time_pct - 100.0 * matrix / compute) <= 0.01
    assert result.device_time_pct > 90.0
    tensile = [k for k in result.kernels if k["name"].startswith("Cijk_")]
    assert tensile and all(k["uses_tensor_cores"] and k["precision"] == "bf16" for k in tensile)
    assert result.eligible_not_using == []


@needs_corpus
def test_jax_conv_on_mi300x_spends_more_time_in_layout_transposes_than_in_the_conv():
    profile = read_xplane(str(JAX_CONV))
    result = analyze_tensor_cores(profile)
    kernels = kernel_times(profile)
    compute = sum(d for n, d in kernels if not runtime_copy(n))
    transposes = sum(d for n, d in kernels if "transpose" in n)
    conv_gemm = sum(d for n, d in kernels if n.startswith("Cijk_"))
    assert abs(result.transpose_time_pct - 100.0 * transposes / compute) <= 0.01
    assert abs(result.device_time_pct - 100.0 * conv_gemm / compute) <= 0.01
    assert result.transpose_time_pct > result.device_time_pct  # the 3-D conv is mostly layout work
    assert result.transposes[0][0].startswith("input_transpose_fusion")
    assert any("layout transposes" in e for e in result.evidence)


@needs_corpus
def test_jax_elementwise_has_no_matrix_work():
    result = analyze_tensor_cores(read_xplane(str(JAX_ELEMENTWISE)))
    assert (result.device_time_pct, result.eligible_time_pct) == (0.0, 0.0)


@needs_corpus
def test_fused_attention_on_mi355x_runs_on_matrix_cores():
    profile = read_xplane(str(JAX_ATTENTION_MI355))
    result = analyze_tensor_cores(profile)
    assert result.architectures == ["CDNA4"]
    attention = [k for k in result.kernels if "FmhaFwdKernel" in k["name"] or "FmhaBwdDQDKDV" in k["name"]]
    assert len(attention) == 2
    assert all(k["uses_tensor_cores"] and k["precision"] == "bf16" for k in attention)
    # the backward pre/post passes (rowsum(dO*O), dQ conversion) are elementwise, not Tensor Core misses
    assert all("FmhaBwdOGradDotO" not in e.kernel and "FmhaBwdConvert" not in e.kernel
               for e in result.eligible_not_using)
    assert result.eligible_on_tensor_cores_pct > 95.0


@needs_corpus
@pytest.mark.parametrize("path", V100_TF, ids=[p.name for p in V100_TF])
def test_v100_tf_bert_window_holds_no_matmuls(path):
    # The profiled window of this TF BERT run only caught dropout/cast/random kernels (Eigen, fp16).
    result = analyze_tensor_cores(read_xplane(str(path)))
    assert result.architectures == ["Volta"]
    assert (result.device_time_pct, result.eligible_time_pct) == (0.0, 0.0)


@needs_corpus
def test_tpu_ops_are_not_called_matrix_work_without_dots_or_convolutions():
    result = analyze_tensor_cores(read_xplane(str(TPU)))
    assert result.architectures == ["TPU"]
    assert result.eligible_time_pct == 0.0  # broadcast/add fusions, copies and an all-reduce only


@needs_corpus
@pytest.mark.parametrize("path", ALL, ids=[str(p.relative_to(CORPUS)) for p in ALL])
def test_every_corpus_xplane_gets_consistent_tensor_core_figures(path):
    result = analyze_tensor_cores(read_xplane(str(path)))
    out = result.to_json()["tensor_cores"]
    assert 0.0 <= out["device_time_pct"] <= 100.0 + 1e-9
    assert 0.0 <= out["eligible_time_pct"] <= 100.0 + 1e-9
    assert result.eligible_tensor_core_ns <= result.tensor_core_ns <= result.compute_ns
    assert all(k["time_ms"] >= 0 for k in out["kernels"])
