"""Peak FLOP/s per precision and peak memory bandwidth of the accelerators the roofline knows.

One table, one entry per accelerator, each with the vendor page it was read from. Figures are
dense (without 2:4 structured sparsity: where a vendor lists only sparse tensor figures, half of them)
and per device (one GPU, one TPU chip). A precision the vendor does not list is absent: the roofline
then says the roof is unknown rather than guessing one. `match` is a regular expression tried, in
table order, against the device name the profile records (CUPTI's `gpu_device_name`, Kineto's
`deviceProperties.name`, the TPU plane's device type), so more specific names come first.
tests/test_accelerator_peaks.py checks every entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

TERA = 1e12
GB_S = 1e9

PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")


@dataclass(frozen=True)
class AcceleratorPeak:
    name: str
    match: str  # regex, case-insensitive, searched in the device name
    flops: Dict[str, float]  # precision -> FLOP/s (dense)
    memory_bandwidth: float  # bytes/s
    source: str  # vendor datasheet or product page

    def peak(self, precision: str) -> Optional[float]:
        return self.flops.get(precision)

    @property
    def ridge(self) -> Dict[str, float]:
        """FLOP per byte where a precision's roof turns from memory- to compute-bound."""
        return {p: f / self.memory_bandwidth for p, f in self.flops.items()}


def _tf(**values: float) -> Dict[str, float]:
    return {k: v * TERA for k, v in values.items()}


# Tensor-core figures for fp16/bf16/fp8/int8/tf32; fp32 and fp64 are the vector (CUDA core) figures
# except where a matrix unit runs them (fp64 tensor cores on A100/H100 are listed as fp64 there).
ACCELERATOR_PEAKS: Tuple[AcceleratorPeak, ...] = (
    AcceleratorPeak(
        "NVIDIA H200 SXM", r"\bH200\b", _tf(fp64=67, fp32=67, tf32=494.5, bf16=989.5, fp16=989.5, fp8=1979,
                                             int8=1979),
        4800 * GB_S, "https://www.nvidia.com/en-us/data-center/h200/"),
    AcceleratorPeak(
        "NVIDIA H100 SXM", r"\bH100\b", _tf(fp64=67, fp32=67, tf32=494.5, bf16=989.5, fp16=989.5, fp8=1979,
                                             int8=1979),
        3350 * GB_S, "https://www.nvidia.com/en-us/data-center/h100/"),
    AcceleratorPeak(
        "NVIDIA B200 (HGX)", r"\bB200\b", _tf(fp64=37, fp32=75, tf32=1100, bf16=2250, fp16=2250, fp8=4500,
                                               int8=4500),
        7700 * GB_S, "https://www.nvidia.com/en-us/data-center/hgx/"),
    AcceleratorPeak(
        "NVIDIA A100 80GB SXM", r"\bA100\b.*80\s?GB", _tf(fp64=19.5, fp32=19.5, tf32=156, bf16=312, fp16=312,
                                                           int8=624),
        2039 * GB_S,
        "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"),
    AcceleratorPeak(
        "NVIDIA A100 40GB", r"\bA100\b", _tf(fp64=19.5, fp32=19.5, tf32=156, bf16=312, fp16=312, int8=624),
        1555 * GB_S,
        "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"),
    AcceleratorPeak(
        "NVIDIA L4", r"\bL4\b", _tf(fp32=30.3, tf32=60, bf16=121, fp16=121, fp8=242.5, int8=242.5),
        300 * GB_S, "https://www.nvidia.com/en-us/data-center/l4/"),
    AcceleratorPeak(
        "NVIDIA T4", r"\bT4\b", _tf(fp32=8.1, fp16=65, int8=130),
        320 * GB_S,
        "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/"
        "t4-tensor-core-datasheet-951643.pdf"),
    AcceleratorPeak(
        "NVIDIA V100 SXM2", r"\bV100\b", _tf(fp64=7.8, fp32=15.7, fp16=125),
        900 * GB_S,
        "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"),
    AcceleratorPeak(
        "AMD Instinct MI355X", r"MI355X?", _tf(fp64=78.6, fp32=157.3, bf16=2516.6, fp16=2516.6, fp8=5033.2,
                                                int8=5033.2),
        8000 * GB_S, "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html"),
    AcceleratorPeak(
        "AMD Instinct MI300X", r"MI300X?", _tf(fp64=163.4, fp32=163.4, tf32=653.7, bf16=1307.4, fp16=1307.4,
                                                fp8=2614.9, int8=2614.9),
        5300 * GB_S, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"),
    AcceleratorPeak(
        "AMD Instinct MI250", r"MI250", _tf(fp64=90.5, fp32=90.5, bf16=362.1, fp16=362.1, int8=362.1),
        3276.8 * GB_S, "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250.html"),
    AcceleratorPeak(
        "Google TPU v6e (Trillium)", r"TPU\s?v6\s?(e|lite)|Trillium", _tf(bf16=918, int8=1836),
        1640 * GB_S, "https://cloud.google.com/tpu/docs/v6e"),
    AcceleratorPeak(
        "Google TPU v5p", r"TPU\s?v5p?(?!\s?(e|lite))\b", _tf(bf16=459, int8=918),
        2765 * GB_S, "https://cloud.google.com/tpu/docs/v5p"),
    AcceleratorPeak(
        "Google TPU v5e", r"TPU\s?v5\s?(e|lite)", _tf(bf16=197, int8=394),
        819 * GB_S, "https://cloud.google.com/tpu/docs/v5e"),
    AcceleratorPeak(
        "Google TPU v4", r"TPU\s?v4", _tf(bf16=275, int8=275),
        1200 * GB_S, "https://cloud.google.com/tpu/docs/v4"),
)
_COMPILED = tuple((entry, re.compile(entry.match, re.IGNORECASE)) for entry in ACCELERATOR_PEAKS)


def peaks_for(device_name: str) -> Optional[AcceleratorPeak]:
    """The table entry for a recorded device name, or None (an unknown device gets no roof)."""
    for entry, rx in _COMPILED:
        if device_name and rx.search(device_name):
            return entry
    return None


# Devices whose profile records no name (ROCm's XSpace planes, for one) are named from what it does
# record: (vendor, compute capability, SM/CU count) → the name peaks_for() matches. gfx942 with 304
# CUs is an MI300X (the MI300A has 228); gfx950 with 256 CUs is an MI350-series part, taken as the
# MI355X (the MI350X shares its CU count at lower clocks): the report says the name was inferred.
INFERRED_MODELS: Dict[Tuple[str, Tuple[int, int], int], str] = {
    ("amd", (9, 4), 304): "AMD Instinct MI300X",
    ("amd", (9, 5), 256): "AMD Instinct MI355X",
    ("amd", (9, 0), 220): "AMD Instinct MI250X",
    ("amd", (9, 0), 208): "AMD Instinct MI250",
    ("nvidia", (8, 0), 108): "NVIDIA A100",
    ("nvidia", (9, 0), 132): "NVIDIA H100",
    ("nvidia", (7, 0), 80): "NVIDIA V100",
    ("nvidia", (7, 5), 40): "NVIDIA T4",
    ("nvidia", (8, 9), 58): "NVIDIA L4",
    ("nvidia", (10, 0), 148): "NVIDIA B200",
}


def infer_model(vendor: str, capability: Optional[Tuple[int, int]], cores: Optional[int],
                memory_bytes: Optional[int] = None) -> Optional[str]:
    """A device name for an unnamed device, or None. An 8.0 GPU with over 60 GiB is the A100 80GB; a
    9.0 one with over 100 GiB is an H200."""
    if capability is None or cores is None:
        return None
    name = INFERRED_MODELS.get((vendor.lower(), tuple(capability), int(cores)))
    if name == "NVIDIA A100" and memory_bytes and memory_bytes > 60 * 2**30:
        return "NVIDIA A100 80GB"
    if name == "NVIDIA H100" and memory_bytes and memory_bytes > 100 * 2**30:
        return "NVIDIA H200"
    return name


# Which peak an op's dtype runs against. fp32 matmuls may use TF32 tensor cores when the framework
# allows it (torch.backends.cuda.matmul.allow_tf32, TF's default on Ampere+); the profile does not say,
# so fp32 is held against the fp32 roof and the report names the precision it used.
DTYPE_PRECISION: Dict[str, str] = {
    "float": "fp32", "float32": "fp32", "f32": "fp32", "double": "fp64", "float64": "fp64", "f64": "fp64",
    "half": "fp16", "float16": "fp16", "f16": "fp16", "bfloat16": "bf16", "bf16": "bf16",
    "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "f8e4m3fn": "fp8", "f8e5m2": "fp8", "int8": "int8",
    "s8": "int8", "char": "int8", "signed char": "int8",
}


def precision_of(dtype: Optional[str]) -> Optional[str]:
    if not dtype:
        return None
    key = dtype.lower().replace("c10::", "").replace("torch.", "").strip()
    return DTYPE_PRECISION.get(key)
