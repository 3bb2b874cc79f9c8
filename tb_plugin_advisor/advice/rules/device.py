"""Conditions of the recommendation rules about the host keeping an accelerator waiting: host
synchronisations that stall it, and JAX/XLA steps made of many tiny kernels with the device idle
between them. Table entries live in recommend.py; each check reads only `Facts`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import fixed, format_pct

if TYPE_CHECKING:
    from tb_plugin_advisor.advice.facts import Facts


def host_sync(f: Facts) -> Optional[Tuple[str, str]]:
    if not f.device_kind or f.host_sync_pct < th.HOST_SYNC_STEP_PCT:
        return None
    if f.host_sync_idle_pct is None or f.host_sync_idle_pct < th.HOST_SYNC_IDLE_PCT:
        return None
    severity = "high" if f.host_sync_idle_pct >= th.HOST_SYNC_IDLE_HIGH_PCT else "medium"
    calls = ", ".join(f.host_sync_calls[:4])
    return severity, (
        f"{fixed(f.host_sync_count, 0)} host synchronisations per step take {format_pct(f.host_sync_pct)} of "
        f"the step; the device is idle for {format_pct(f.host_sync_idle_pct)} of the step while the host "
        f"waits ({calls})."
    )


def launch_bound_xla(f: Facts) -> Optional[Tuple[str, str]]:
    """JAX/XLA on an accelerator whose step is launch-bound: the verdict says so (kernel launch on the
    critical path), or many tiny kernels leave the device idle between them."""
    if not f.device_kind or (f.framework != "jax" and not f.xla_compiled) or not f.step_count:
        return None
    tiny = 0 < f.median_kernel_us < th.LAUNCH_BOUND_MAX_MEDIAN_US
    many_tiny = f.kernels_per_step >= th.LAUNCH_BOUND_MIN_KERNELS and tiny
    idle = f.device_idle_pct >= th.LAUNCH_BOUND_MIN_IDLE_PCT
    if not (f.bottleneck == "launch" or (many_tiny and idle)):
        return None
    very_idle = f.device_idle_pct >= 2 * th.LAUNCH_BOUND_MIN_IDLE_PCT
    severity = "high" if f.bottleneck == "launch" or very_idle else "medium"
    launch = f.breakdown_pct.get("kernel_launch", 0.0)
    return severity, (
        f"{fixed(f.kernels_per_step, 0)} kernels per step with a median of "
        f"{fixed(f.median_kernel_us, 1)} µs; kernel "
        f"launch {format_pct(launch)} of the step and the device idle {format_pct(f.device_idle_pct)} of it."
    )


def copy_bound(f: Facts) -> Optional[Tuple[str, str]]:
    """Device copies on the critical path; host offload named when the copies move host memory."""
    if f.bottleneck != "memcpy":
        return None
    pct = f.breakdown_pct.get("memcpy", 0.0)
    severity = "high" if pct >= th.OVERHEAD_HIGH_PCT else "medium"
    offload = (
        f"; {format_pct(f.host_offload_copy_pct)} of the copy time moves arrays between device and host "
        "memory (XLA copy-start/copy-done with memory space S(5): host offload)"
        if f.host_offload_copy_pct >= 50.0 else ""
    )
    return severity, f"Device memory copies take {format_pct(pct)} of the step{offload}."
