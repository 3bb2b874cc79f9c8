"""Peak dense FLOP/s per precision and memory bandwidth of common accelerators: the roofline's ceilings.

One table, one entry per device, each with the vendor's public datasheet it was read from. Figures are
*dense* (datasheets often quote 2× "with sparsity": those are halved here) and for the matrix units
where the device has them (Tensor Cores, Matrix Cores, the TPU MXU); fp32 is the non-tensor peak on
NVIDIA (PyTorch's default fp32 matmul does not use TF32) and the matrix peak on AMD. A precision the
vendor publishes no figure for is absent (TPUs quote bf16 and int8 only). Entries are matched from
the device model the profile records (Device.model: CUDA's device name, ROCm's marketing name, the
TPU's "TPU v6 Lite") by the first regular expression that matches, case-insensitively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

T = 1e12  # TFLOP/s → FLOP/s
GBS = 1e9  # GB/s → bytes/s


@dataclass(frozen=True)
class DevicePeaks:
    key: str  # short stable name, e.g. "a100-sxm-80gb"
    label: str  # what a person reads, e.g. "NVIDIA A100 SXM 80GB"
    pattern: str  # regex over Device.model
    flops: Dict[str, float]  # precision (patterns.PRECISIONS) → dense peak FLOP/s
    bandwidth: float  # bytes/s
    source: str  # vendor datasheet URL

    def peak(self, precision: str) -> Optional[float]:
        return self.flops.get(precision)


def _p(**tflops: float) -> Dict[str, float]:
    return {k: v * T for k, v in tflops.items()}


_NV_AMPERE = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"  # noqa: E501
_NV_HOPPER = "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet"

# Order matters: the more specific pattern of a family comes first (80GB before 40GB, PCIe before SXM).
PEAKS: Tuple[DevicePeaks, ...] = (
    DevicePeaks("v100-pcie", "NVIDIA V100 PCIe", r"V100.*PCIE",
                _p(fp64=7, fp32=14, fp16=112), 900 * GBS,
                "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"),
    DevicePeaks("v100-sxm", "NVIDIA V100 SXM2", r"V100",
                _p(fp64=7.8, fp32=15.7, fp16=125), 900 * GBS,
                "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"),
    DevicePeaks("t4", "NVIDIA T4", r"(?<![A-Z0-9])T4(?![0-9])",
                _p(fp32=8.1, fp16=65, int8=130), 320 * GBS,
                "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf"),
    DevicePeaks("a100-pcie-80gb", "NVIDIA A100 PCIe 80GB", r"A100.*80GB.*PCIE|A100.*PCIE.*80GB",
                _p(fp64=9.7, fp32=19.5, tf32=156, bf16=312, fp16=312, int8=624), 1935 * GBS, _NV_AMPERE),
    DevicePeaks("a100-sxm-80gb", "NVIDIA A100 SXM 80GB", r"A100.*80GB|A100-PG509-210",
                _p(fp64=9.7, fp32=19.5, tf32=156, bf16=312, fp16=312, int8=624), 2039 * GBS, _NV_AMPERE),
    DevicePeaks("a100-40gb", "NVIDIA A100 40GB", r"A100",
                _p(fp64=9.7, fp32=19.5, tf32=156, bf16=312, fp16=312, int8=624), 1555 * GBS, _NV_AMPERE),
    DevicePeaks("l4", "NVIDIA L4", r"(?<![A-Z0-9])L4(?![0-9])",
                _p(fp32=30.3, tf32=60, bf16=121, fp16=121, fp8=242.5, int8=242.5), 300 * GBS,
                "https://www.nvidia.com/en-us/data-center/l4/"),
    DevicePeaks("h100-pcie", "NVIDIA H100 PCIe", r"H100.*PCIE",
                _p(fp64=26, fp32=51, tf32=378, bf16=756, fp16=756, fp8=1513, int8=1513), 2000 * GBS,
                _NV_HOPPER),
    DevicePeaks("h100-sxm", "NVIDIA H100 SXM", r"H100",
                _p(fp64=34, fp32=67, tf32=494.5, bf16=989.5, fp16=989.5, fp8=1979, int8=1979), 3350 * GBS,
                _NV_HOPPER),
    DevicePeaks("h200", "NVIDIA H200 SXM", r"H200",
                _p(fp64=34, fp32=67, tf32=494.5, bf16=989.5, fp16=989.5, fp8=1979, int8=1979), 4800 * GBS,
                "https://www.nvidia.com/en-us/data-center/h200/"),
    DevicePeaks("b200", "NVIDIA B200 (HGX)", r"B200",
                _p(fp64=40, fp32=75, tf32=1125, bf16=2250, fp16=2250, fp8=4500, int8=4500), 8000 * GBS,
                "https://www.nvidia.com/en-us/data-center/hgx/"),
    DevicePeaks("mi250x", "AMD Instinct MI250X", r"MI250X",
                _p(fp64=95.7, fp32=95.7, bf16=383, fp16=383, int8=383), 3276.8 * GBS,
                "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html"),
    DevicePeaks("mi250", "AMD Instinct MI250", r"MI250",
                _p(fp64=90.5, fp32=90.5, bf16=362.1, fp16=362.1, int8=362.1), 3276.8 * GBS,
                "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250.html"),
    DevicePeaks("mi300x", "AMD Instinct MI300X", r"MI300X",
                _p(fp64=163.4, fp32=163.4, tf32=653.7, bf16=1307.4, fp16=1307.4, fp8=2614.9, int8=2614.9),
                5300 * GBS, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"),
    DevicePeaks("mi355x", "AMD Instinct MI355X", r"MI355X",
                _p(fp64=78.6, fp32=157.3, bf16=2516.6, fp16=2516.6, fp8=5033.2, int8=5033.2), 8000 * GBS,
                "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html"),
    DevicePeaks("tpu-v4", "Google TPU v4", r"TPU v4",
                _p(bf16=275, int8=275), 1200 * GBS, "https://cloud.google.com/tpu/docs/v4"),
    DevicePeaks("tpu-v5e", "Google TPU v5e", r"TPU v5 ?(lite|e)",
                _p(bf16=197, int8=394), 819 * GBS, "https://cloud.google.com/tpu/docs/v5e"),
    DevicePeaks("tpu-v5p", "Google TPU v5p", r"TPU v5 ?p?$|TPU v5p",
                _p(bf16=459, int8=918), 2765 * GBS, "https://cloud.google.com/tpu/docs/v5p"),
    DevicePeaks("tpu-v6e", "Google TPU v6e (Trillium)", r"TPU v6 ?(lite|e)",
                _p(bf16=918, int8=1836), 1640 * GBS, "https://cloud.google.com/tpu/docs/v6e"),
)
_COMPILED = tuple((re.compile(p.pattern, re.IGNORECASE), p) for p in PEAKS)

# A precision without a published peak falls back to the first of these the device has: an upper
# bound for the roof (fp32 on a TPU runs as bf16 passes on the MXU).
FALLBACK_PRECISIONS = ("bf16", "fp16", "fp32")


# Devices whose profile records no name (ROCm's XSpace planes, for one) are named from what it does
# record: (vendor, compute capability, SM/CU count) → a name peaks_for() matches. gfx942 with 304 CUs
# is an MI300X (the MI300A has 228); gfx950 with 256 CUs an MI350-series part, taken as the MI355X
# (the MI350X has as many CUs at lower clocks). The report says the name was inferred.
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
    """A name for a device the profile does not name, or None. A compute-capability-8.0 GPU with over
    60 GiB is the A100 80GB; a 9.0 one with over 100 GiB the H200."""
    if capability is None or cores is None:
        return None
    name = INFERRED_MODELS.get(((vendor or "").lower(), tuple(capability), int(cores)))
    if name == "NVIDIA A100" and memory_bytes and memory_bytes > 60 * 2**30:
        return "NVIDIA A100 80GB"
    if name == "NVIDIA H100" and memory_bytes and memory_bytes > 100 * 2**30:
        return "NVIDIA H200"
    return name


def peaks_for(model: str) -> Optional[DevicePeaks]:
    """The table entry for a device model name, or None when the device is not in the table."""
    if not model:
        return None
    for rx, entry in _COMPILED:
        if rx.search(model):
            return entry
    return None


def peak_flops(entry: DevicePeaks, precision: str) -> Tuple[Optional[float], str]:
    """(peak FLOP/s, the precision it is for): the op's own precision, else the fallback."""
    if precision in entry.flops:
        return entry.flops[precision], precision
    for other in FALLBACK_PRECISIONS:
        if other in entry.flops:
            return entry.flops[other], other
    return None, precision
