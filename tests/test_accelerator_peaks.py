"""The accelerator peak table: every entry is matched by the name its device records, cites its vendor
page, and carries the datasheet's figures (checked here one by one, so a typo in the table fails)."""

from __future__ import annotations

import pytest

from tb_plugin_advisor.analysis.accelerator_peaks import (
    ACCELERATOR_PEAKS,
    GB_S,
    PRECISIONS,
    TERA,
    peaks_for,
    precision_of,
)

# entry name -> (a device name as profiles record it, bf16 or fp16 TFLOP/s, fp32 TFLOP/s, GB/s, vendor domain)
EXPECTED = {
    "NVIDIA V100 SXM2": ("Tesla V100-SXM2-16GB", ("fp16", 125), 15.7, 900, "nvidia.com"),
    "NVIDIA T4": ("Tesla T4", ("fp16", 65), 8.1, 320, "nvidia.com"),
    "NVIDIA A100 40GB": ("NVIDIA A100-SXM4-40GB", ("bf16", 312), 19.5, 1555, "nvidia.com"),
    "NVIDIA A100 80GB SXM": ("NVIDIA A100-SXM4-80GB", ("bf16", 312), 19.5, 2039, "nvidia.com"),
    "NVIDIA L4": ("NVIDIA L4", ("bf16", 121), 30.3, 300, "nvidia.com"),
    "NVIDIA H100 SXM": ("NVIDIA H100 80GB HBM3", ("bf16", 989.5), 67, 3350, "nvidia.com"),
    "NVIDIA H200 SXM": ("NVIDIA H200", ("bf16", 989.5), 67, 4800, "nvidia.com"),
    "NVIDIA B200 (HGX)": ("NVIDIA B200", ("bf16", 2250), 75, 7700, "nvidia.com"),
    "AMD Instinct MI250": ("AMD Instinct MI250X", ("bf16", 362.1), 90.5, 3276.8, "amd.com"),
    "AMD Instinct MI300X": ("AMD Instinct MI300X", ("bf16", 1307.4), 163.4, 5300, "amd.com"),
    "AMD Instinct MI355X": ("AMD Instinct MI355X", ("bf16", 2516.6), 157.3, 8000, "amd.com"),
    "Google TPU v4": ("TPU v4", ("bf16", 275), None, 1200, "cloud.google.com"),
    "Google TPU v5e": ("TPU v5 lite", ("bf16", 197), None, 819, "cloud.google.com"),
    "Google TPU v5p": ("TPU v5p", ("bf16", 459), None, 2765, "cloud.google.com"),
    "Google TPU v6e (Trillium)": ("TPU v6 lite", ("bf16", 918), None, 1640, "cloud.google.com"),
}


def test_every_entry_is_checked_and_no_name_twice():
    names = [e.name for e in ACCELERATOR_PEAKS]
    assert sorted(names) == sorted(EXPECTED) and len(set(names)) == len(names)


@pytest.mark.parametrize("entry", ACCELERATOR_PEAKS, ids=lambda e: e.name)
def test_entry_matches_its_device_name_and_datasheet(entry):
    device, (precision, tflops), fp32, gbs, domain = EXPECTED[entry.name]
    assert peaks_for(device) is entry
    assert entry.peak(precision) == pytest.approx(tflops * TERA)
    assert entry.peak("fp32") == (None if fp32 is None else pytest.approx(fp32 * TERA))
    assert entry.memory_bandwidth == pytest.approx(gbs * GB_S)
    assert entry.source.startswith("https://") and domain in entry.source
    assert set(entry.flops) <= set(PRECISIONS) and all(v > 0 for v in entry.flops.values())
    # 16-bit matrix units are never slower than fp32, nor 8-bit than 16-bit
    sixteen = entry.peak("bf16") or entry.peak("fp16")
    assert sixteen >= (entry.peak("fp32") or 0)
    if entry.peak("int8"):
        assert entry.peak("int8") >= sixteen
    assert entry.ridge[precision] == pytest.approx(tflops * TERA / (gbs * GB_S))


@pytest.mark.parametrize("name", ["NVIDIA L40S", "NVIDIA GeForce RTX 4090", "", "Intel Xeon", "TPU v3"])
def test_unknown_devices_get_no_roof(name):
    assert peaks_for(name) is None


def test_dtypes_map_to_precisions():
    assert precision_of("c10::BFloat16") == "bf16" and precision_of("float") == "fp32"
    assert precision_of("c10::Half") == "fp16" and precision_of("c10::Float8_e4m3fn") == "fp8"
    assert precision_of("long int") is None and precision_of(None) is None


@pytest.mark.parametrize("key,expected", [
    (("AMD", (9, 4), 304, 192 << 30), "AMD Instinct MI300X"),
    (("AMD", (9, 5), 256, 288 << 30), "AMD Instinct MI355X"),
    (("AMD", (9, 0), 220, 128 << 30), "AMD Instinct MI250X"),
    (("AMD", (9, 0), 208, 128 << 30), "AMD Instinct MI250"),
    (("Nvidia", (8, 0), 108, 40 << 30), "NVIDIA A100"),
    (("Nvidia", (8, 0), 108, 80 << 30), "NVIDIA A100 80GB"),
    (("Nvidia", (9, 0), 132, 80 << 30), "NVIDIA H100"),
    (("Nvidia", (9, 0), 132, 141 << 30), "NVIDIA H200"),
    (("Nvidia", (7, 0), 80, 32 << 30), "NVIDIA V100"),
    (("Nvidia", (7, 5), 40, 16 << 30), "NVIDIA T4"),
    (("Nvidia", (8, 9), 58, 24 << 30), "NVIDIA L4"),
    (("Nvidia", (10, 0), 148, 180 << 30), "NVIDIA B200"),
])
def test_unnamed_devices_are_named_from_what_they_record(key, expected):
    from tb_plugin_advisor.analysis.accelerator_peaks import INFERRED_MODELS, infer_model

    vendor, capability, cores, memory = key
    assert (vendor.lower(), capability, cores) in INFERRED_MODELS
    name = infer_model(vendor, capability, cores, memory)
    assert name == expected and peaks_for(name) is not None
    assert infer_model(vendor, capability, cores + 1, memory) is None
