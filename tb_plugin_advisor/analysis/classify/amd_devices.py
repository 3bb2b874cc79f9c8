"""What an AMD GPU is: its gfx target and, where CU count and memory pin it down, the product.

ROCm names devices unreliably. Kineto's deviceProperties may say "AMD Radeon Graphics" for an Instinct
part (the marketing-name lookup fails in many containers), or "AMD Instinct MI250X / MI250" for both
parts; ROCm's XSpace planes record no name at all. Both report hipDeviceProp's major.minor, which is
not a compute capability: 9.0 covers gfx906, gfx908 and gfx90a alike. What does pin a device down:

- the gfx target: the ISA tag that rocBLAS/hipBLASLt (Tensile) kernels carry in their names (`ISA90a`,
  `ISA942`; other libraries write `gfx942`), else major.minor where only one target reports it
  (9.4 → gfx942, 9.5 → gfx950), else the CU count where only one target has it;
- the product: (gfx target, CUs, memory) in AMD_PRODUCTS, one row per device as ROCm enumerates it.
  An MI250/MI250X is two devices (GCDs), each with half the CUs and memory, so its row is the GCD.
  Where rows tie (an MI210 and an MI250 GCD: 104 CUs, 64 GiB, the same clocks and HBM), the name the
  profile records decides, then the clock; else the label names every candidate and the peaks are the
  first's (rows are ordered so the first has the higher peaks: an MFU against them is a lower bound).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from tb_plugin_advisor.formatting import fixed
from tb_plugin_advisor.model import Device


@dataclass(frozen=True)
class AmdProduct:
    """One AMD device as ROCm enumerates it (an MI250's GCD, a whole MI300X)."""

    gfx: str
    cus: int
    memory_gib: Tuple[float, float]  # [low, high) as reported: HBM less what firmware reserves
    clock_mhz: int  # peak engine clock: tells an MI355X from an MI350X
    label: str
    name_pattern: str  # matches the names ROCm gives this product
    peaks_key: str  # its per-device entry in device_peaks.PEAKS


AMD_PRODUCTS: Tuple[AmdProduct, ...] = (
    AmdProduct("gfx908", 120, (28, 36), 1502, "AMD Instinct MI100", r"MI100", "mi100"),
    AmdProduct("gfx90a", 104, (56, 72), 1700, "AMD Instinct MI250 (one GCD)", r"MI250(?!X)", "mi250-gcd"),
    AmdProduct("gfx90a", 104, (56, 72), 1700, "AMD Instinct MI210", r"MI210", "mi250-gcd"),
    AmdProduct("gfx90a", 110, (56, 72), 1700, "AMD Instinct MI250X (one GCD)", r"MI250X", "mi250x-gcd"),
    AmdProduct("gfx942", 304, (240, 264), 2100, "AMD Instinct MI325X", r"MI325X", "mi325x"),
    AmdProduct("gfx942", 304, (176, 200), 2100, "AMD Instinct MI300X", r"MI300X", "mi300x"),
    AmdProduct("gfx942", 228, (96, 136), 2100, "AMD Instinct MI300A", r"MI300A", "mi300a"),
    AmdProduct("gfx950", 256, (264, 296), 2400, "AMD Instinct MI355X", r"MI355X", "mi355x"),
    AmdProduct("gfx950", 256, (264, 296), 2200, "AMD Instinct MI350X", r"MI350X", "mi350x"),
)
# hipDeviceProp major.minor → the one gfx target that reports it (9.0 is three targets: not here).
GFX_BY_VERSION: Dict[Tuple[int, int], str] = {(9, 4): "gfx942", (9, 5): "gfx950"}
# `ISA90a` (Tensile) or `gfx942` in a kernel name → the target
KERNEL_TARGET = re.compile(r"(?:ISA|gfx)(9[0-9][0-9a-f])(?![0-9a-f])")
CLOCK_TOLERANCE = 0.03  # a recorded clock within 3 % of a product's peak clock
GIB = float(1 << 30)


@dataclass(frozen=True)
class AmdIdentity:
    """What the profile says an AMD device is; product fields are None when not pinned down."""

    gfx: Optional[str]
    product: Optional[str]  # "AMD Instinct MI300X", or "AMD Instinct MI250 (one GCD) or MI210"
    peaks_key: Optional[str]
    how: str  # a phrase: what identified it, e.g. "gfx90a, 104 CUs and 64 GiB"


def gfx_from_kernels(names: Iterable[str]) -> Optional[str]:
    """The gfx target most kernel names carry as an ISA tag, or None."""
    found = Counter(m.group(1) for name in names for m in [KERNEL_TARGET.search(name)] if m)
    return f"gfx{found.most_common(1)[0][0]}" if found else None


def _gfx(version: Optional[Tuple[int, int]], cus: Optional[int], kernels: Optional[str]) -> Optional[str]:
    if kernels:
        return kernels
    if version is not None and tuple(version) in GFX_BY_VERSION:
        return GFX_BY_VERSION[tuple(version)]
    targets = {p.gfx for p in AMD_PRODUCTS if p.cus == cus}
    return targets.pop() if version is not None and version[0] == 9 and len(targets) == 1 else None


def _label(rows: List[AmdProduct]) -> str:
    """"AMD Instinct MI250 (one GCD) or MI210": the candidates, their shared prefix said once."""
    first = rows[0].label
    prefix = "AMD Instinct "
    rest = [r.label[len(prefix):] if r.label.startswith(prefix) else r.label for r in rows[1:]]
    return " or ".join([first] + rest)


def identify_amd(model: str, version: Optional[Tuple[int, int]], cus: Optional[int],
                 memory_bytes: Optional[int], clock_khz: Optional[float],
                 kernel_gfx: Optional[str] = None) -> AmdIdentity:
    """Identify one AMD device from what its profile records (see the module docstring)."""
    gfx = _gfx(version, cus, kernel_gfx)
    named = [p for p in AMD_PRODUCTS if model and re.search(p.name_pattern, model, re.IGNORECASE)]
    if cus is None:  # nothing to check a name against: the name alone
        rows = [p for p in named if gfx is None or p.gfx == gfx]
        how = "the device name"
    else:
        memory = memory_bytes / GIB if memory_bytes else None
        rows = [p for p in AMD_PRODUCTS if p.cus == cus and (gfx is None or p.gfx == gfx)
                and (memory is None or p.memory_gib[0] <= memory < p.memory_gib[1])]
        rows = [p for p in rows if p in named] or rows
        how = ", ".join(filter(None, [gfx, f"{cus} CUs"]))
        how += f" and {fixed(memory, 0)} GiB" if memory else ""
    if clock_khz and len(rows) > 1:
        mhz = clock_khz / 1000
        rows = [p for p in rows if abs(mhz - p.clock_mhz) <= CLOCK_TOLERANCE * p.clock_mhz] or rows
    if not rows:
        return AmdIdentity(gfx, None, None, how)
    gfx = gfx or rows[0].gfx
    return AmdIdentity(gfx, _label(rows), rows[0].peaks_key, how)


def amd_identity(device: Device) -> Optional[AmdIdentity]:
    """identify_amd for a profile's device (None for other vendors), computed once per device."""
    if not (device.vendor or "").lower().startswith("amd"):
        return None
    if "amd_identity" not in device.derived:
        device.derived["amd_identity"] = identify_amd(
            device.model, device.compute_capability, device.core_count, device.memory_bytes,
            device.clock_rate_khz, gfx_from_kernels(device.kernels.names))
    return device.derived["amd_identity"]
