"""Precision shares and verdicts on the real profiles of ../shared/corpus, checked against the names."""

from __future__ import annotations

import pytest
from paths import CORPUS, NO_CORPUS

from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.precision.device import analyze_precision
from tb_plugin_advisor.readers.xplane.reader import read_xplane

MI300 = CORPUS / "tracelens" / "tests" / "traces" / "mi300"
V100_TF = sorted((CORPUS / "xprof" / "demo" / "plugins" / "profile" / "GPU-multi-worker").glob("*.xplane.pb"))
TPU = CORPUS / "xprof" / "older_01d85de" / "xprof" / "convert" / "test_xplanes" / "tpu_inference_2.xplane.pb"
ALL = sorted(p for p in CORPUS.rglob("*.xplane.pb") if "_corrupt" not in p.parts)
needs_corpus = pytest.mark.skipif(not ALL, reason=NO_CORPUS)


def kernel_times(profile):
    return [
        (d.kernels.names[i], t)
        for d in profile.devices
        for i, t in zip(d.kernels.name_index.tolist(), d.kernels.duration_ns.tolist())
    ]


@needs_corpus
@pytest.mark.parametrize("path", V100_TF, ids=[p.name for p in V100_TF])
def test_v100_tf_fp16_bert_is_fp16_where_the_built_in_tab_needs_half_in_the_name(path):
    profile = read_xplane(str(path))
    result = analyze_precision(profile)
    kernels = kernel_times(profile)
    total = sum(t for _, t in kernels)
    half_named = 100.0 * sum(t for n, t in kernels if "Eigen::half" in n) / total
    pct = result.precision_pct
    assert pct["fp16"] >= 99.9
    assert abs(pct["fp16"] - half_named) <= 0.05  # casts half→float count as fp32 (their output type)
    assert abs(pct["fp16"] + pct["fp32"] - 100.0) <= 0.01
    assert result.verdict == "active"
    assert "no matmul/conv work" in result.summary


@needs_corpus
def test_jax_gemm_on_mi300x_is_bf16_by_its_tensile_type_code():
    profile = read_xplane(str(MI300 / "jax08_gemm" / "tw003.xplane.pb"))
    result = analyze_precision(profile)
    kernels = [(n, t) for n, t in kernel_times(profile) if not n.startswith("__amd_rocclr_")]
    total = sum(t for _, t in kernels)
    bbs = 100.0 * sum(t for n, t in kernels if n.startswith("Cijk_Ailk_Bljk_BBS_")) / total
    assert abs(result.precision_pct["bf16"] - bbs) <= 0.01
    assert abs(result.precision_pct["unknown"] - (100.0 - bbs)) <= 0.01
    assert result.verdict == "active" and result.matrix_low_precision_pct == pytest.approx(100.0)


@needs_corpus
def test_jax_elementwise_has_no_dtype_in_its_kernel_names():
    result = analyze_precision(read_xplane(str(MI300 / "jax08_elementwise" / "tw003.xplane.pb")))
    assert result.precision_pct["unknown"] == 100.0
    assert result.verdict == "unknown"


@needs_corpus
def test_tpu_inference_ops_are_fp32_by_their_hlo_result_types():
    result = analyze_precision(read_xplane(str(TPU)))
    assert result.precision_pct["fp32"] == 100.0
    assert result.verdict == "not_active"
    assert any("collectives" in e for e in result.evidence)  # the all-reduce and async copies are left out


@needs_corpus
@pytest.mark.parametrize("path", ALL, ids=[str(p.relative_to(CORPUS)) for p in ALL])
def test_every_corpus_xplane_gets_shares_that_add_up(path):
    out = analyze_precision(read_xplane(str(path))).to_json()
    shares = out["precision_pct"]
    assert list(shares) == list(PRECISIONS)
    assert abs(sum(shares.values()) - 100.0) <= 0.01 or all(v == 0.0 for v in shares.values())
    assert out["precision"]["verdict"] in ("active", "partial", "not_active", "unknown")
    assert out["precision"]["summary"]
