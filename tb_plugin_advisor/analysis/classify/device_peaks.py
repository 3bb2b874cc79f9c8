"""Peak dense FLOP/s per precision and memory bandwidth of common accelerators: the roofline's ceilings.

One table, one entry per device, each with the vendor's public datasheet it was read from. Figures are
*dense* (datasheets often quote 2× "with sparsity": those are halved here) and for the matrix units
where the device has them (Tensor Cores, Matrix Cores, the TPU MXU); fp32 is the non-tensor peak on
NVIDIA (PyTorch's default fp32 matmul does not use TF32) and the matrix peak on AMD. A precision the
vendor publishes no figure for is absent (TPUs quote bf16 and int8 only). Entries are matched from
the device model the profile records (Device.model: CUDA's device name, ROCm's marketing name, the
TPU's "TPU v6 Lite") by the first regular expression that matches, case-insensitively; AMD devices
are matched by key from their gfx target, CUs and memory first (amd_devices.py), since ROCm's names
are often generic ("AMD Radeon Graphics") or shared by two products ("AMD Instinct MI250X / MI250").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

T = 1e12  # TFLOP/s → FLOP/s
GBS = 1e9  # GB/s → bytes/s


@dataclass(frozen=True)
class DevicePeaks:
    """A device's datasheet peaks (FLOP/s per precision, memory bandwidth), and the model names
    they apply to."""

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
    # AMD: per device as ROCm enumerates it — an MI250/MI250X is two devices (GCDs), each half the
    # package's datasheet figures; an MI210 is one MI250 GCD's peers (same CUs, clocks and HBM).
    DevicePeaks("mi100", "AMD Instinct MI100", r"MI100",
                _p(fp64=11.5, fp32=46.1, bf16=92.3, fp16=184.6, int8=184.6), 1228.8 * GBS,
                "https://www.amd.com/en/products/accelerators/instinct/mi100.html"),
    DevicePeaks("mi250x-gcd", "AMD Instinct MI250X (one GCD)", r"MI250X",
                _p(fp64=47.9, fp32=47.9, bf16=191.5, fp16=191.5, int8=191.5), 1638.4 * GBS,
                "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html"),
    DevicePeaks("mi250-gcd", "AMD Instinct MI250 (one GCD) / MI210", r"MI250|MI210",
                _p(fp64=45.3, fp32=45.3, bf16=181.0, fp16=181.0, int8=181.0), 1638.4 * GBS,
                "https://www.amd.com/en/products/accelerators/instinct/mi200/mi210.html"),
    DevicePeaks("mi300a", "AMD Instinct MI300A", r"MI300A",
                _p(fp64=122.6, fp32=122.6, tf32=490.3, bf16=980.6, fp16=980.6, fp8=1961.2, int8=1961.2),
                5300 * GBS, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300a.html"),
    DevicePeaks("mi300x", "AMD Instinct MI300X", r"MI300X",
                _p(fp64=163.4, fp32=163.4, tf32=653.7, bf16=1307.4, fp16=1307.4, fp8=2614.9, int8=2614.9),
                5300 * GBS, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"),
    DevicePeaks("mi325x", "AMD Instinct MI325X", r"MI325X",
                _p(fp64=163.4, fp32=163.4, tf32=653.7, bf16=1307.4, fp16=1307.4, fp8=2614.9, int8=2614.9),
                6000 * GBS, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html"),
    DevicePeaks("mi350x", "AMD Instinct MI350X", r"MI350X",
                _p(fp64=72.1, fp32=144.2, bf16=2307.2, fp16=2307.2, fp8=4614.4, int8=4614.4), 8000 * GBS,
                "https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html"),
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


# NVIDIA GPUs whose profile records no name (XSpace planes of some CUPTI versions) are named from what
# it does record: (compute capability, SM count) → a name peaks_for() matches. AMD devices are named by
# their gfx target instead (amd_devices.py): ROCm's major.minor is no compute capability.
INFERRED_MODELS: Dict[Tuple[Tuple[int, int], int], str] = {
    ((8, 0), 108): "NVIDIA A100",
    ((9, 0), 132): "NVIDIA H100",
    ((7, 0), 80): "NVIDIA V100",
    ((7, 5), 40): "NVIDIA T4",
    ((8, 9), 58): "NVIDIA L4",
    ((10, 0), 148): "NVIDIA B200",
}


def infer_model(vendor: str, capability: Optional[Tuple[int, int]], cores: Optional[int],
                memory_bytes: Optional[int] = None) -> Optional[str]:
    """A name for an NVIDIA GPU the profile does not name, or None. A compute-capability-8.0 GPU with
    over 60 GiB is the A100 80GB; a 9.0 one with over 100 GiB the H200."""
    if capability is None or cores is None or not (vendor or "").lower().startswith("nvidia"):
        return None
    name = INFERRED_MODELS.get((tuple(capability), int(cores)))
    if name == "NVIDIA A100" and memory_bytes and memory_bytes > 60 * 2**30:
        return "NVIDIA A100 80GB"
    if name == "NVIDIA H100" and memory_bytes and memory_bytes > 100 * 2**30:
        return "NVIDIA H200"
    return name


def peaks_by_key(key: str) -> Optional[DevicePeaks]:
    """The table entry with this key (amd_devices.py names AMD products by key)."""
    return next((p for p in PEAKS if p.key == key), None)


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
