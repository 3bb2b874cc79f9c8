"""bf16/fp16 on a CPU: fast only where the CPU has native 16-bit math, emulated (several times slower
than fp32) elsewhere. Pure: the profile's precision shares plus, when known, the flags of the CPU the
report runs on (read by sources/local_cpu.py) and that host's name.

The bundled sample's run3 (mixed_bfloat16 on a 2-core EPYC without AVX512-BF16) is 8× slower per
step than its float32 run2 (ARCHITECTURE.md §5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.formatting import format_pct

# CPU flags (Linux /proc/cpuinfo, `lscpu`) that give native math per 16-bit type.
NATIVE_16BIT_FLAGS: Dict[str, Tuple[str, ...]] = {
    "bf16": ("amx_bf16", "avx512_bf16"),
    "fp16": ("amx_fp16", "avx512_fp16"),
}
LSCPU_CHECK = "lscpu | grep -o -w -E 'amx_bf16|avx512_bf16|amx_fp16|avx512_fp16'"


@dataclass
class CpuSixteenBit:
    """A CPU-only profile whose compute is dominated by one 16-bit type, and whether that is native."""

    dtype: str  # bf16 | fp16
    share_pct: float  # of host compute with a known type
    checked: str  # this_host | other_host | unreadable
    native: Optional[bool]  # None: could not be checked
    native_flags: List[str] = field(default_factory=list)  # the flags this CPU has, of those that count
    evidence: str = ""

    def to_json(self) -> Dict[str, Any]:
        return {
            "dtype": self.dtype,
            "share_pct": round(self.share_pct, 2),
            "checked": self.checked,
            "native": self.native,
            "native_flags": list(self.native_flags),
            "needed_flags": list(NATIVE_16BIT_FLAGS[self.dtype]),
            "how_to_check": LSCPU_CHECK,
            "evidence": self.evidence,
        }


def assess_cpu_16bit(
    precision: PrecisionResult,
    device_kind: str,
    profile_host: str,
    local_host: Optional[str],
    local_flags: Optional[FrozenSet[str]],
) -> Optional[CpuSixteenBit]:
    """None unless the profile is CPU-only and bf16 or fp16 holds most of its typed compute."""
    if device_kind or precision.basis != "host":
        return None
    known = precision.compute_ns - precision.time_ns["unknown"]
    if known <= 0:
        return None
    dtype = max(NATIVE_16BIT_FLAGS, key=lambda p: precision.time_ns[p])
    share = 100.0 * precision.time_ns[dtype] / known
    if share < th.CPU_16BIT_DOMINANT_PCT:
        return None
    needed = NATIVE_16BIT_FLAGS[dtype]
    base = f"{dtype} holds {format_pct(share)} of host compute with a known type on a CPU-only profile"
    if local_host is None or local_host != profile_host:
        return CpuSixteenBit(
            dtype, share, "other_host", None,
            evidence=f"{base}; it was captured on host {profile_host!r}, not on this one "
            f"({local_host!r}), so its CPU flags could not be checked: look for {' / '.join(needed)} "
            f"with `{LSCPU_CHECK}` on {profile_host!r}.",
        )
    if local_flags is None:
        return CpuSixteenBit(
            dtype, share, "unreadable", None,
            evidence=f"{base}; this is host {profile_host!r} but its CPU flags could not be read: "
            f"look for {' / '.join(needed)} with `{LSCPU_CHECK}`.",
        )
    present = [flag for flag in needed if flag in local_flags]
    if present:
        return CpuSixteenBit(
            dtype, share, "this_host", True, present,
            evidence=f"{base}; this host ({profile_host!r}) has {', '.join(present)}: {dtype} math is "
            "native here, so 16-bit compute is fine.",
        )
    return CpuSixteenBit(
        dtype, share, "this_host", False,
        evidence=f"{base}; this host ({profile_host!r}) has none of {', '.join(needed)} in its CPU "
        f"flags: {dtype} math is emulated and runs several times slower than fp32.",
    )
