"""bf16/fp16 on a CPU: fast only where the CPU has native 16-bit math, emulated (several times slower
than fp32) elsewhere. Pure: the profile's precision shares, the profile's own kernel names, and —
as context only — the flags of the machine running the Advisor (read by sources/local_cpu.py).

Only the profile can show what the capturing CPU did: oneDNN kernels named for AMX or AVX512-BF16/FP16
are native 16-bit math. The machine running the Advisor is not necessarily the one that captured the
profile, whatever its host name (`vm`, `localhost`, container ids are shared by many machines), so
its flags are quoted as what they are and never lower the warning. The bundled sample's run3
(mixed_bfloat16 on a 2-core EPYC without AVX512-BF16) is 8× slower per step than its float32 run2
(ARCHITECTURE.md §5); a bf16 run on a CPU with AVX512-BF16 was faster than fp32 (27.5 against 29.3
ms per step). Neither profile names a native kernel: the finding asks the user to check (the flags
of the capturing machine, or a float32 capture compared with `tb-advisor diff`) instead of pricing a
fix whose sign it cannot know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.onednn_ops import NATIVE_16BIT_KERNELS
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.formatting import format_pct
from tb_plugin_advisor.model import Profile
from tb_plugin_advisor.sources.local_cpu import is_generic_host_name

# CPU flags (Linux /proc/cpuinfo, `lscpu`) that give native math per 16-bit type.
NATIVE_16BIT_FLAGS: Dict[str, Tuple[str, ...]] = {
    "bf16": ("amx_bf16", "avx512_bf16"),
    "fp16": ("amx_fp16", "avx512_fp16"),
}
LSCPU_CHECK = "lscpu | grep -o -w -E 'amx_bf16|avx512_bf16|amx_fp16|avx512_fp16'"

KERNELS_SHOWN = 5

# Who a flag claim is about, said wherever the local flags are quoted.
LOCAL_CPU_ABOUT = "the machine running the Advisor, not necessarily the one that captured this profile"


def native_16bit_kernels(profile: Profile) -> Dict[str, List[str]]:
    """Per 16-bit type, the host event names that show native math (up to KERNELS_SHOWN each)."""
    found: Dict[str, List[str]] = {dtype: [] for dtype in NATIVE_16BIT_KERNELS}
    for plane in profile.host_planes:
        for name in plane.event_names:
            lowered = name.lower()
            if "avx512" not in lowered and "amx" not in lowered:  # what every entry names
                continue
            for dtype, pattern in NATIVE_16BIT_KERNELS.items():
                if len(found[dtype]) < KERNELS_SHOWN and name not in found[dtype] and pattern.search(name):
                    found[dtype].append(name)
    return found


@dataclass
class CpuSixteenBit:
    """A CPU-only profile whose compute is dominated by one 16-bit type, and what shows whether that
    math was native."""

    dtype: str  # bf16 | fp16
    share_pct: float  # of host compute with a known type
    checked: str  # the machine running the Advisor: same_host_name | other_host | unreadable
    native: Optional[bool]  # True only when the profile shows native kernels; None: not shown
    native_flags: List[str] = field(default_factory=list)  # flags the machine running the Advisor has
    evidence: str = ""
    profile_kernels: List[str] = field(default_factory=list)  # native 16-bit kernels in the profile
    local_host: Optional[str] = None
    flags_read: bool = False

    def to_json(self) -> Dict[str, Any]:
        return {
            "dtype": self.dtype,
            "share_pct": round(self.share_pct, 2),
            "checked": self.checked,
            "native": self.native,
            "native_source": "profile" if self.native else None,
            "profile_kernels": list(self.profile_kernels),
            "native_flags": list(self.native_flags),
            "needed_flags": list(NATIVE_16BIT_FLAGS[self.dtype]),
            "local_cpu": {
                "host": self.local_host,
                "about": LOCAL_CPU_ABOUT,
                "same_host_name": self.checked != "other_host",
                "generic_host_name": is_generic_host_name(self.local_host),
                "flags_read": self.flags_read,
                "native_flags": list(self.native_flags),
            },
            "how_to_check": LSCPU_CHECK,
            "evidence": self.evidence,
        }


def assess_cpu_16bit(
    precision: PrecisionResult,
    device_kind: str,
    profile_host: str,
    local_host: Optional[str],
    local_flags: Optional[FrozenSet[str]],
    profile_kernels: Optional[Dict[str, List[str]]] = None,
) -> Optional[CpuSixteenBit]:
    """None unless the profile is CPU-only and bf16 or fp16 holds most of its typed compute.
    `profile_kernels`: native_16bit_kernels of the profile (the only thing that makes it native)."""
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
    kernels = list((profile_kernels or {}).get(dtype, []))
    if local_host is None or local_host != profile_host:
        checked = "other_host"
    else:
        checked = "same_host_name" if local_flags is not None else "unreadable"
    present = [flag for flag in needed if local_flags is not None and flag in local_flags]
    result = CpuSixteenBit(dtype, share, checked, True if kernels else None, present, "", kernels,
                           local_host, local_flags is not None)
    base = f"{dtype} holds {format_pct(share)} of host compute with a known type on a CPU-only profile"
    if kernels:
        result.evidence = (
            f"{base}; the profile itself shows native {dtype} kernels ({', '.join(kernels[:2])}): "
            f"{dtype} math ran natively on the CPU that captured it, so 16-bit compute is fine."
        )
        return result
    result.evidence = (
        f"{base}; nothing in the profile shows native {dtype} math (no oneDNN kernel named for "
        f"{' / '.join(needed)}): on a CPU without {' or '.join(needed)}, {dtype} is emulated and runs "
        f"several times slower than fp32, while with them it is faster than fp32. "
        f"{_local_words(result, profile_host, needed)} Check the CPU that captured it with "
        f"`{LSCPU_CHECK}`, or capture the same run in float32 and compare the two with `tb-advisor diff`."
    )
    return result


def _local_words(r: CpuSixteenBit, profile_host: str, needed: Tuple[str, ...]) -> str:
    """Which CPU the flags quoted here belong to, and why they settle nothing."""
    if r.checked == "other_host":
        return (f"The profile was captured on {profile_host!r}; the CPU flags known here are those of "
                f"{LOCAL_CPU_ABOUT} ({r.local_host!r}) and say nothing about it.")
    shared = " (a name many machines share)" if is_generic_host_name(profile_host) else ""
    who = (f"The CPU flags known here are those of {LOCAL_CPU_ABOUT}: it is also named {profile_host!r}"
           f"{shared}, but a host name does not make it the capturing machine")
    if r.checked == "unreadable":
        return f"{who}, and its flags could not be read."
    if r.native_flags:
        return f"{who}: its {', '.join(r.native_flags)} show what it could run, not what ran in this profile."
    return (f"{who}; it has none of {', '.join(needed)}, so if it is the one, {r.dtype} was emulated "
            "there.")
