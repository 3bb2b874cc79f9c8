"""The accelerator peak table (analysis/device_peaks.py): every entry is found from the model names
profiles record, and its figures are sane (dense peaks ordered by precision, bandwidth in range)."""

from __future__ import annotations

import pytest

from tb_plugin_advisor.analysis.classify.device_peaks import PEAKS, peak_flops, peaks_for

# Device.model strings as profiles write them (CUDA device names, ROCm marketing names, TPU names) →
# the entry they must match. At least one per entry.
MODEL_NAMES = {
    "Tesla V100-PCIE-16GB": "v100-pcie",
    "Tesla V100-SXM2-32GB": "v100-sxm",
    "Tesla V100-DGXS-32GB": "v100-sxm",
    "NVIDIA Tesla V100 16GB": "v100-sxm",
    "Tesla T4": "t4",
    "NVIDIA A100 80GB PCIe": "a100-pcie-80gb",
    "NVIDIA A100-SXM4-80GB": "a100-sxm-80gb",
    "NVIDIA A100-SXM4-40GB": "a100-40gb",
    "NVIDIA A100-PG509-200": "a100-40gb",
    "NVIDIA A100-PCIE-40GB": "a100-40gb",
    "NVIDIA L4": "l4",
    "NVIDIA H100 PCIe": "h100-pcie",
    "NVIDIA H100 80GB HBM3": "h100-sxm",
    "NVIDIA H100": "h100-sxm",
    "NVIDIA H200": "h200",
    "NVIDIA B200": "b200",
    "AMD Instinct MI100": "mi100",
    "AMD Instinct MI210": "mi250-gcd",
    "AMD Instinct MI250X": "mi250x-gcd",
    "AMD Instinct MI250X / MI250": "mi250x-gcd",  # ROCm's one name for both: amd_devices.py tells them apart
    "AMD Instinct MI250": "mi250-gcd",
    "AMD Instinct MI300A": "mi300a",
    "AMD Instinct MI300X": "mi300x",
    "AMD Instinct MI300X VF": "mi300x",
    "AMD Instinct MI325X": "mi325x",
    "AMD Instinct MI350X": "mi350x",
    "AMD Instinct MI355X": "mi355x",
    "TPU v4": "tpu-v4",
    "TPU v5 lite": "tpu-v5e",
    "TPU v5e": "tpu-v5e",
    "TPU v5": "tpu-v5p",
    "TPU v5p": "tpu-v5p",
    "TPU v6 Lite": "tpu-v6e",
    "TPU v6e": "tpu-v6e",
}
NOT_IN_TABLE = ["", "NVIDIA GeForce RTX 4090", "Quadro GP100", "AMD Radeon Graphics", "Intel(R) Xeon(R)",
                "NVIDIA L40S", "AMD Instinct MI50"]


@pytest.mark.parametrize("model, key", sorted(MODEL_NAMES.items()))
def test_model_name_matches_its_entry(model, key):
    entry = peaks_for(model)
    assert entry is not None and entry.key == key


@pytest.mark.parametrize("model", NOT_IN_TABLE)
def test_unknown_devices_have_no_entry(model):
    assert peaks_for(model) is None


@pytest.mark.parametrize("entry", PEAKS, ids=[p.key for p in PEAKS])
def test_entry_is_sane(entry):
    assert entry.key in MODEL_NAMES.values(), "every entry has a model name test above"
    assert entry.source.startswith("https://") and (
        "nvidia.com" in entry.source or "amd.com" in entry.source or "cloud.google.com" in entry.source)
    assert 100e9 <= entry.bandwidth <= 10e12
    flops = entry.flops
    assert "bf16" in flops or "fp16" in flops
    for value in flops.values():
        assert 1e12 <= value <= 10e15
    half = flops.get("bf16", flops.get("fp16"))
    if "fp32" in flops:
        assert flops["fp32"] < half  # matrix units: 16-bit beats fp32
    if "tf32" in flops:
        assert flops["fp32"] < flops["tf32"] < half
    if "fp8" in flops:
        assert flops["fp8"] == pytest.approx(2 * half, rel=0.01)
    # ridge point (FLOP per byte at 16 bits) within what accelerators have had: ~50 to ~600
    assert 50 <= half / entry.bandwidth <= 600


def test_fallback_precision_is_an_upper_bound():
    tpu = peaks_for("TPU v6 Lite")
    assert peak_flops(tpu, "fp32") == (918e12, "bf16")
    assert peak_flops(tpu, "bf16") == (918e12, "bf16")
    assert peak_flops(peaks_for("NVIDIA A100-SXM4-40GB"), "tf32") == (156e12, "tf32")


def test_known_figures():
    """A few figures spelled out against their datasheets (dense)."""
    assert peaks_for("NVIDIA H100 80GB HBM3").flops["bf16"] == 989.5e12
    assert peaks_for("NVIDIA A100-SXM4-80GB").bandwidth == 2039e9
    assert peaks_for("TPU v5 lite").flops["bf16"] == 197e12
    assert peaks_for("AMD Instinct MI300X").bandwidth == 5300e9
    # an MI250 package is 362.1 TFLOP/s bf16 over two GCDs; ROCm shows each GCD as a device
    assert peaks_for("AMD Instinct MI250").flops["bf16"] == 181.0e12
    assert peaks_for("AMD Instinct MI250X").flops["bf16"] == 191.5e12


@pytest.mark.parametrize("key,expected", [
    (("Nvidia", (8, 0), 108, 40 << 30), "a100-40gb"),
    (("Nvidia", (8, 0), 108, 80 << 30), "a100-sxm-80gb"),
    (("Nvidia", (9, 0), 132, 80 << 30), "h100-sxm"),
    (("Nvidia", (9, 0), 132, 141 << 30), "h200"),
    (("Nvidia", (7, 0), 80, 32 << 30), "v100-sxm"),
    (("Nvidia", (7, 5), 40, 16 << 30), "t4"),
    (("Nvidia", (8, 9), 58, 24 << 30), "l4"),
    (("Nvidia", (10, 0), 148, 180 << 30), "b200"),
])
def test_unnamed_devices_are_named_from_what_they_record(key, expected):
    from tb_plugin_advisor.analysis.classify.device_peaks import INFERRED_MODELS, infer_model

    vendor, capability, cores, memory = key
    assert (capability, cores) in INFERRED_MODELS
    name = infer_model(vendor, capability, cores, memory)
    assert peaks_for(name).key == expected
    assert infer_model(vendor, capability, cores + 1, memory) is None
    assert infer_model(vendor, None, cores, memory) is None
    assert infer_model("AMD", capability, cores, memory) is None  # AMD: amd_devices.py, by gfx target


def test_every_inferred_name_has_a_case():
    from tb_plugin_advisor.analysis.classify.device_peaks import INFERRED_MODELS

    assert len(INFERRED_MODELS) == 6
