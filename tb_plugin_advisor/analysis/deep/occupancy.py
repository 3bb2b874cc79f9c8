"""Theoretical occupancy of a kernel launch: how many warps (wavefronts) of an SM (CU) it can keep resident.

Profiles often record occupancy (XSpace `kernel_details` `occ_pct`, CUPTI's theoretical value; Kineto's
`est. achieved occupancy %`). Where they don't, it follows from the launch (block size, registers per
thread, shared memory per block) and the per-SM limits of the device's generation — the arithmetic of
NVIDIA's CUDA Occupancy Calculator. Limits come from the device's own properties when the profile has
them (Kineto `deviceProperties`), else from the table below.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, Optional, Tuple


@dataclass(frozen=True)
class SmLimits:
    """Per-SM (per-CU) resources of one GPU generation."""

    name: str
    warp_size: int
    max_warps: int  # resident warps (wavefronts) per SM / CU
    max_blocks: int  # resident blocks (workgroups) per SM / CU
    registers: int  # 32-bit registers per SM (NVIDIA) / VGPRs per SIMD lane (AMD, see `simds`)
    register_unit: int  # registers are allocated per warp in units of this many
    shared_bytes: int  # shared memory (LDS) per SM / CU usable by blocks
    shared_unit: int  # shared memory is allocated per block in units of this many bytes
    shared_reserved: int  # bytes the driver reserves per block (1 KB from Ampere on)
    simds: int = 0  # AMD: SIMDs per CU; registers then limit waves per SIMD, not per CU
    source: str = ""


# CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" (table 21/23), and the
# CUDA Occupancy Calculator's allocation granularities. AMD: CDNA2/3/4 ISA guides (4 SIMDs per CU,
# 8 waves per SIMD on CDNA3/4 and CDNA2, 512 VGPRs per lane, allocation in units of 8, 64 KB LDS per CU;
# 160 KB on CDNA4).
_CUDA_GUIDE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#features-and-technical-specifications"
_CDNA3_ISA = "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/instruction-set-architectures/amd-instinct-mi300-cdna3-instruction-set-architecture.pdf"
_CDNA4_ISA = "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/instruction-set-architectures/amd-instinct-cdna4-instruction-set-architecture.pdf"

NVIDIA_SM_LIMITS: Tuple[Tuple[Tuple[int, int], SmLimits], ...] = (
    ((6, 0), SmLimits("Pascal", 32, 64, 32, 65536, 256, 65536, 256, 0, source=_CUDA_GUIDE)),
    ((7, 0), SmLimits("Volta", 32, 64, 32, 65536, 256, 98304, 256, 0, source=_CUDA_GUIDE)),
    ((7, 5), SmLimits("Turing", 32, 32, 16, 65536, 256, 65536, 256, 0, source=_CUDA_GUIDE)),
    ((8, 0), SmLimits("Ampere GA100", 32, 64, 32, 65536, 256, 167936, 128, 1024, source=_CUDA_GUIDE)),
    ((8, 6), SmLimits("Ampere GA10x", 32, 48, 16, 65536, 256, 102400, 128, 1024, source=_CUDA_GUIDE)),
    ((8, 7), SmLimits("Ampere Orin", 32, 48, 16, 65536, 256, 167936, 128, 1024, source=_CUDA_GUIDE)),
    ((8, 9), SmLimits("Ada", 32, 48, 24, 65536, 256, 102400, 128, 1024, source=_CUDA_GUIDE)),
    ((9, 0), SmLimits("Hopper", 32, 64, 32, 65536, 256, 233472, 128, 1024, source=_CUDA_GUIDE)),
    ((10, 0), SmLimits("Blackwell", 32, 64, 32, 65536, 256, 233472, 128, 1024, source=_CUDA_GUIDE)),
    ((12, 0), SmLimits("Blackwell GB20x", 32, 48, 32, 65536, 256, 102400, 128, 1024, source=_CUDA_GUIDE)),
)
AMD_CU_LIMITS: Tuple[Tuple[Tuple[int, int], SmLimits], ...] = (
    ((9, 0), SmLimits("CDNA2", 64, 32, 32, 512, 8, 65536, 128, 0, simds=4, source=_CDNA3_ISA)),
    ((9, 4), SmLimits("CDNA3", 64, 32, 32, 512, 8, 65536, 128, 0, simds=4, source=_CDNA3_ISA)),
    ((9, 5), SmLimits("CDNA4", 64, 32, 32, 512, 8, 163840, 128, 0, simds=4, source=_CDNA4_ISA)),
)

# Plane stats (Kineto deviceProperties as the reader names them) that override the table.
PROPERTY_STATS = {"warp_size": "warp_size", "shared_memory_per_sm": "shared_bytes"}


def sm_limits(vendor: str, capability: Optional[Tuple[int, int]],
              plane_stats: Optional[Dict[str, Any]] = None) -> Optional[SmLimits]:
    """The limits for a device (None when its generation is unknown)."""
    if capability is None:
        return None
    table = AMD_CU_LIMITS if (vendor or "").lower().startswith("amd") else NVIDIA_SM_LIMITS
    chosen = None
    for min_cc, limits in table:
        if tuple(capability) >= min_cc:
            chosen = limits
    if chosen is None:
        return None
    overrides = {}
    for stat, attr in PROPERTY_STATS.items():
        value = (plane_stats or {}).get(stat)
        if isinstance(value, (int, float)) and value >= 1:  # (0.5 would become a limit of 0)
            overrides[attr] = int(value)
    max_threads = (plane_stats or {}).get("max_threads_per_sm")
    if isinstance(max_threads, (int, float)) and max_threads > 0:
        overrides["max_warps"] = int(max_threads) // int(overrides.get("warp_size", chosen.warp_size))
    return replace(chosen, **overrides) if overrides else chosen


@dataclass(frozen=True)
class Occupancy:
    """Theoretical occupancy of one launch shape, and the resource that limits it."""

    pct: float
    blocks_per_sm: int
    limiter: str  # warps | blocks | registers | shared_memory


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit if unit > 0 else value


def theoretical_occupancy(limits: SmLimits, threads_per_block: int, registers_per_thread: Optional[int],
                          shared_bytes_per_block: Optional[int]) -> Optional[Occupancy]:
    """Resident warps / max warps for one launch configuration (None for an impossible launch, or
    limits a hostile profile made impossible)."""
    if threads_per_block <= 0 or limits.warp_size <= 0 or limits.max_warps <= 0:
        return None
    warps_per_block = -(-threads_per_block // limits.warp_size)
    limits_by = {"warps": limits.max_warps // warps_per_block, "blocks": limits.max_blocks}
    regs = registers_per_thread or 0
    if regs > 0:
        if limits.simds:  # AMD: VGPRs per lane bound the waves per SIMD
            waves_per_simd = limits.registers // _round_up(regs, limits.register_unit)
            waves = min(waves_per_simd, limits.max_warps // limits.simds) * limits.simds
            limits_by["registers"] = waves // warps_per_block
        else:
            per_warp = _round_up(regs * limits.warp_size, limits.register_unit)
            limits_by["registers"] = (limits.registers // per_warp) // warps_per_block
    shared = shared_bytes_per_block or 0
    if shared > 0:
        per_block = _round_up(shared + limits.shared_reserved, limits.shared_unit)
        limits_by["shared_memory"] = limits.shared_bytes // per_block
    limiter = min(limits_by, key=lambda k: (limits_by[k], list(limits_by).index(k)))
    blocks = limits_by[limiter]
    if blocks <= 0:
        return Occupancy(0.0, 0, limiter)
    return Occupancy(100.0 * blocks * warps_per_block / limits.max_warps, blocks, limiter)
