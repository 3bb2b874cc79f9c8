"""AMD devices named by gfx target and product (analysis/classify/amd_devices.py), never by a "compute
capability": every row of the product table, and the corpus' real ROCm profiles — the MI250 trace
whose deviceProperties say "AMD Radeon Graphics" (9.0, 104 CUs, 64 GiB, kernels tagged ISA90a: an
MI250 GCD, or its twin the MI210), MI300X traces from Kineto (named) and XSpace (unnamed), an MI210
trace (named) and an MI355X XSpace profile (told from the MI350X by its 2.4 GHz clock)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from deep_profiles import deep_section
from paths import CORPUS, needs_corpus

from tb_plugin_advisor.analysis.classify.amd_devices import (
    AMD_PRODUCTS,
    GFX_BY_VERSION,
    gfx_from_kernels,
    identify_amd,
)
from tb_plugin_advisor.analysis.classify.device_peaks import PEAKS, peaks_by_key
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.views.cli.main import main as cli_main

MI250 = CORPUS / "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
MI300X_KINETO = CORPUS / "tracelens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
MI300X_XSPACE = CORPUS / "tracelens/tests/traces/mi300/jax08_gemm/tw003.xplane.pb"
MI210 = CORPUS / "tracelens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz"
MI355X = CORPUS / "tracelens/tests/test_data_jax_te_fused_attn_categorization/934987a2fc2f.xplane.pb"
VERSION = {"gfx908": (9, 0), "gfx90a": (9, 0), "gfx942": (9, 4), "gfx950": (9, 5)}
GIB = 1 << 30


@pytest.mark.parametrize("row", AMD_PRODUCTS, ids=[p.label for p in AMD_PRODUCTS])
def test_every_product_is_identified_from_what_rocm_records(row):
    memory = int(sum(row.memory_gib) / 2 * GIB)
    clock = row.clock_mhz * 1000
    anonymous = identify_amd("", VERSION[row.gfx], row.cus, memory, clock)
    assert anonymous.gfx == row.gfx and row.label.split("AMD Instinct ")[1] in anonymous.product
    named = identify_amd(f"AMD Instinct {row.name_pattern.split('(')[0]}", VERSION[row.gfx], row.cus, memory,
                         None)
    assert named.product == row.label and named.peaks_key == row.peaks_key
    assert peaks_by_key(row.peaks_key) is not None
    # a different CU count is another device (a partition, another product): no product, gfx kept
    other = identify_amd("", VERSION[row.gfx], row.cus + 2, memory, None, kernel_gfx=row.gfx)
    assert other.product is None and other.gfx == row.gfx


def test_every_amd_peaks_entry_has_a_product():
    amd = {p.key for p in PEAKS if p.label.startswith("AMD")}
    assert amd == {row.peaks_key for row in AMD_PRODUCTS}


def test_ties_are_named_together_and_resolved_by_name_or_clock():
    gcd = identify_amd("AMD Radeon Graphics", (9, 0), 104, 64 * GIB, None, "gfx90a")
    assert gcd.product == "AMD Instinct MI250 (one GCD) or MI210" and gcd.peaks_key == "mi250-gcd"
    # ROCm names MI250 and MI250X alike; the CU count tells them apart
    assert identify_amd("AMD Instinct MI250X / MI250", (9, 0), 104, 64 * GIB, None).product == \
        "AMD Instinct MI250 (one GCD)"
    assert identify_amd("AMD Instinct MI250X / MI250", (9, 0), 110, 64 * GIB, None).product == \
        "AMD Instinct MI250X (one GCD)"
    fast = identify_amd("", (9, 5), 256, 288 * GIB, 2_400_000)
    slow = identify_amd("", (9, 5), 256, 288 * GIB, 2_200_000)
    unknown = identify_amd("", (9, 5), 256, 288 * GIB, None)
    assert (fast.product, slow.product) == ("AMD Instinct MI355X", "AMD Instinct MI350X")
    assert unknown.product == "AMD Instinct MI355X or MI350X" and unknown.peaks_key == "mi355x"


def test_gfx_targets_from_versions_and_kernel_tags():
    assert GFX_BY_VERSION == {(9, 4): "gfx942", (9, 5): "gfx950"}
    for version, gfx in GFX_BY_VERSION.items():
        assert identify_amd("", version, None, None, None).gfx == gfx
    assert identify_amd("", (9, 0), None, None, None).gfx is None  # gfx906, gfx908 or gfx90a
    assert identify_amd("", (9, 0), 120, None, None).gfx == "gfx908"  # only the MI100 has 120 CUs
    tensile = "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_GSUAMB_ISA90a_IU1_K1_WG64_4_1"
    assert gfx_from_kernels([tensile, "void at::native::elementwise_kernel<128>"]) == "gfx90a"
    assert gfx_from_kernels(["ck_fmha_fwd_gfx942_bf16", "Cijk_ISA942_MT128"]) == "gfx942"
    assert gfx_from_kernels(["void at::native::reduce_kernel<512, 1>"]) is None


def _report(path: Path) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main(["report", str(path), "--format", "json"]) == 0
    return json.loads(out.getvalue())


def _text(path: Path) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main(["report", str(path)]) == 0
    return out.getvalue()


@needs_corpus
def test_corpus_mi250_is_a_gfx90a_gcd_not_a_radeon_with_a_compute_capability():
    (device,) = [d for d in _report(MI250)["devices"] if d["kernel_count"]]
    assert device["model"] == "AMD Radeon Graphics" and device["gfx_target"] == "gfx90a"
    assert device["product"] == "AMD Instinct MI250 (one GCD) or MI210"
    assert device["compute_capability"] is None  # ROCm's 9.0 is no compute capability
    r = deep_section(read_kineto(str(MI250)), "roofline")
    assert (r["gfx_target"], r["device"]) == ("gfx90a", "AMD Instinct MI250 (one GCD) or MI210")
    assert r["device_model_source"] == "identified from gfx90a, 104 CUs and 64 GiB"
    assert r["peak_tflops"] == 45.3 and r["bandwidth_gbps"] == 1638.4  # one GCD's fp32 matrix peak
    text = _text(MI250)
    assert "AMD Instinct MI250 (one GCD) or MI210 (gfx90a)" in text
    assert "compute capability" not in text.lower()


@needs_corpus
@pytest.mark.parametrize("path, source", [
    (MI300X_KINETO, "profile"),
    (MI300X_XSPACE, "identified from gfx942, 304 CUs and 192 GiB"),
])
def test_corpus_mi300x_is_gfx942(path, source):
    profile = read_kineto(str(path)) if path.name.endswith(".json.gz") else read_xplane(str(path))
    r = deep_section(profile, "roofline")
    assert (r["gfx_target"], r["device"]) == ("gfx942", "AMD Instinct MI300X")
    assert r["device_model_source"] == source
    assert r["peak_tflops"] is not None and r["bandwidth_gbps"] == 5300.0
    devices = [d for d in _report(path)["devices"] if d["kernel_count"]]
    assert {(d["gfx_target"], d["product"], d["compute_capability"]) for d in devices} == {
        ("gfx942", "AMD Instinct MI300X", None)}
    assert "compute capability" not in _text(path).lower()


@needs_corpus
def test_corpus_mi210_and_mi355x():
    r = deep_section(read_kineto(str(MI210)), "roofline")
    assert (r["gfx_target"], r["device"]) == ("gfx90a", "AMD Instinct MI210")
    assert r["device_model_source"] == "profile"
    r = deep_section(read_xplane(str(MI355X)), "roofline")
    assert (r["gfx_target"], r["device"]) == ("gfx950", "AMD Instinct MI355X")
    assert r["device_model_source"] == "identified from gfx950, 256 CUs and 288 GiB"
