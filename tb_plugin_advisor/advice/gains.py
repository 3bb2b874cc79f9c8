"""What each recommendation is worth: an interval of step time it can save, derived from the profile,
with the reasoning in one sentence — or no interval and why.

Every estimate is a bound, not a forecast: the high end is the time the fix removes if it works
fully (the wait it hides, the idle it fills, the speed-up the device's peak table allows), the low
end keeps what the fix cannot remove (work that stays in the training process, the share of the step
where the device is not the limiter, memory-bound time that 16-bit math does not shorten). One
function per kind of fix, named by the `gain` of each rule's record (advice/rules/: several rules
share one where their fixes remove the same time); the diff checks the intervals against what a
change bought (diff/outcomes.py) and bench/calibrate_gains.py shows how often they held.
"""

from __future__ import annotations

from typing import Callable, Dict

from tb_plugin_advisor.advice.expected_gain import ExpectedGain
from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rules.mixed_precision import sixteen_bit_type
from tb_plugin_advisor.analysis.classify.device_peaks import peaks_for
from tb_plugin_advisor.formatting import fixed

# Parallelising a producer: the fewest workers anyone would configure (the low end of the speed-up).
MIN_WORKERS = 2
# … and the share of the wait it is sure to remove: worker processes add their own costs (IPC, copies
# that no longer overlap, collation handed back). Calibrated on real pairs: the corpus ResNet-50
# num_workers 0 → 4 kept 40 % of its wait as other host work; an H200 ResNet-50 0 → 8 removed all of it.
PRODUCER_LOW_SHARE = 0.5
# Share of a saving kept at the low end where the fix's effect depends on overlap the profile cannot
# show (pinned copies still move their bytes; a cache still reads once per epoch; fused kernels
# still launch).
PARTIAL = 0.5
# Emulated 16-bit math on a CPU without native support: 2× to 8× slower than fp32 (the bundled
# sample's bf16 run is 8× slower).
CPU_16BIT_SLOWDOWN = (2.0, 8.0)
HOST_SIDE = ("host_compute", "kernel_launch", "other")


def _interval(f: Facts, low: float, high: float, basis: str) -> ExpectedGain:
    """An interval held to 0 ≤ low ≤ high ≤ step time."""
    step = max(f.step_ms, 0.0)
    high = min(max(high, 0.0), step)
    low = min(max(low, 0.0), high)
    return ExpectedGain(low, high, step, basis)


def _none(f: Facts, why: str) -> ExpectedGain:
    return ExpectedGain(None, None, f.step_ms, why)


def _part_of(f: Facts, amount: float, missing: str, basis: str) -> ExpectedGain:
    """The common shape: at most all of `amount` (ms per step), at least PARTIAL of it (the overlap the
    profile cannot show); `missing` says why there is no estimate when there is nothing to save."""
    if amount <= 0:
        return _none(f, missing)
    return _interval(f, PARTIAL * amount, amount, basis)


def _ms(f: Facts, category: str) -> float:
    return float(f.breakdown_ms.get(category, 0.0))


def _device_critical(f: Facts) -> float:
    """The share of the device-or-host time in which the device is the limiter: device time saved
    shortens the step only there (elsewhere the host, launching work, becomes the limiter)."""
    device = _ms(f, "device_compute")
    host = sum(_ms(f, c) for c in HOST_SIDE)
    return device / (device + host) if device + host > 0 else 0.0


# -- input --------------------------------------------------------------------------------------------


def parallel_producer(f: Facts) -> ExpectedGain:
    """Batches made in parallel workers (DataLoader workers, a parallel map, a background thread)."""
    wait = _ms(f, "input")
    if wait <= 0 or f.step_ms <= 0:
        return _none(f, "no input wait in the steady steps")
    rest = f.step_ms - wait
    if not f.device_kind:
        return _interval(f, 0.0, wait, f"up to the {fixed(wait, 1)} ms input wait; on a CPU-only host the "
                         "workers take cores from the step itself, so nothing is certain")
    low = min(f.step_ms - max(rest, wait / MIN_WORKERS), PRODUCER_LOW_SHARE * wait)
    return _interval(f, low, wait, f"the {fixed(wait, 1)} ms input wait per step is hidden behind the "
                     f"{fixed(rest, 1)} ms of other work; at the low end {MIN_WORKERS} workers each as slow "
                     f"as the training process, and {fixed(100 * (1 - PRODUCER_LOW_SHARE), 0)} % of the wait "
                     "kept as the workers' own costs (IPC, copies)")


def already_parallel(f: Facts) -> ExpectedGain:
    wait = _ms(f, "input")
    if wait <= 0:
        return _none(f, "no input wait in the steady steps")
    return _interval(f, 0.0, wait, f"up to the {fixed(wait, 1)} ms input wait; the pipeline is already "
                     "parallel, so what it buys depends on free cores and the slowest stage")


def prefetch_overlap(f: Facts) -> ExpectedGain:
    wait = _ms(f, "input")
    if wait <= 0:
        return _none(f, "no input wait in the steady steps")
    rest = f.step_ms - wait
    high = min(wait, rest)
    return _interval(f, PARTIAL * high, high, f"prefetching overlaps the {fixed(wait, 1)} ms of batch "
                     f"making with the {fixed(rest, 1)} ms of the step; the producer shares the host's cores")


def cache_reads(f: Facts) -> ExpectedGain:
    wait = _ms(f, "input")
    return _part_of(f, wait, "no input wait in the steady steps", f"reading and decoding leave the "
                    f"{fixed(wait, 1)} ms input wait after the first epoch; work after the cache stays")


def pinned_copies(f: Facts) -> ExpectedGain:
    copies = f.torch_pageable_h2d_ms
    return _part_of(f, copies, "no pageable host-to-device copies measured", f"the {fixed(copies, 2)} ms "
                    "of pageable copies per step stop blocking the host; the bytes still move, overlapped "
                    "with compute")


def preprocessing_moved(f: Facts) -> ExpectedGain:
    wait = _ms(f, "input")
    work = f.preprocessing_step_threads_ms + min(wait, f.preprocessing_input_threads_ms)
    return _part_of(f, work, "no preprocessing time on the step's critical path", f"the {fixed(work, 1)} "
                    "ms of preprocessing on the step's path per step; what moves to the accelerator still "
                    "costs a little there")


# -- precision ------------------------------------------------------------------------------------------


def _matrix_speedup(f: Facts, work: Dict[str, float], target: str, basis: str) -> ExpectedGain:
    """Matrix work per precision (`work`) moved to `target`'s peak: time × (1 − peak / target peak)."""
    peaks = peaks_for(f.device_model)
    if peaks is None or target not in peaks.flops:
        return _none(f, f"the device ({f.device_model or 'unknown'}) is not in the peak table, so the "
                     f"{target} speed-up is unknown")
    saved = 0.0
    for precision, ms in work.items():
        peak = peaks.flops.get(precision)
        if ms > 0 and peak:
            saved += ms * max(0.0, 1.0 - peak / peaks.flops[target])
    if saved <= 0:
        return _none(f, "no eligible matrix work in fp32 or TF32 in the steady steps")
    share = _device_critical(f)
    return _interval(f, PARTIAL * share * saved, saved, basis.format(
        saved=fixed(saved, 1), target=target, device=peaks.label, critical=fixed(100 * share, 0)))


def mixed_precision_speedup(f: Facts) -> ExpectedGain:
    target = sixteen_bit_type(f.compute_capability) or "bf16"
    return _matrix_speedup(
        f, {"fp32": f.matrix_fp32_ms, "tf32": f.matrix_tf32_ms}, target,
        "matmuls and convolutions at the {device}'s {target} peak save {saved} ms of device time per "
        "step; the low end counts half of it (the rest memory-bound) and only where the device limits "
        "the step ({critical} %)")


def tf32_speedup(f: Facts) -> ExpectedGain:
    return _matrix_speedup(
        f, {"fp32": f.matrix_fp32_ms}, "tf32",
        "fp32 matmuls and convolutions at the {device}'s {target} peak save {saved} ms of device time "
        "per step; the low end counts half of it and only where the device limits the step ({critical} %)")


def cpu_16bit_unknown(f: Facts) -> ExpectedGain:
    """No estimate: going back to float32 saves time only where the CPU emulates 16-bit math, and is
    slower where it runs it natively; a profile without native kernels cannot say which (a bf16 run on
    a CPU with avx512_bf16 measured 27.5 ms per step against 29.3 ms in fp32)."""
    if f.cpu_16bit_native is True:
        return _none(f, "the profile shows native 16-bit kernels: float32 would not be faster")
    share = f.precision_pct.get(f.cpu_16bit_dtype or "bf16", 0.0) / 100.0
    work = _ms(f, "host_compute") * share
    if work <= 0:
        return _none(f, "no 16-bit compute time measured on the host")
    slow, fast = CPU_16BIT_SLOWDOWN
    return _none(f, f"the profile cannot show whether this CPU ran its {fixed(work, 1)} ms of 16-bit compute "
                 f"per step natively (then float32 is slower) or emulated it (then float32 saves "
                 f"{fixed(work * (1 - 1 / slow), 1)}–{fixed(work * (1 - 1 / fast), 1)} ms, for "
                 f"{fixed(slow, 0)}× to {fixed(fast, 0)}× slower emulation); a float32 capture compared with "
                 "`tb-advisor diff` measures it")


# -- device and host ----------------------------------------------------------------------------------


def launch_gaps(f: Facts) -> ExpectedGain:
    launch, idle = _ms(f, "kernel_launch"), _ms(f, "idle")
    if launch + idle <= 0:
        return _none(f, "no launch or idle time in the steady steps")
    return _interval(f, PARTIAL * launch, launch + idle, f"the {fixed(launch, 1)} ms of launches and "
                     f"{fixed(idle, 1)} ms of idle device per step between kernels; fused or captured "
                     "kernels still launch")


def host_sync_idle(f: Facts) -> ExpectedGain:
    if f.host_sync_idle_pct is not None:
        idle = f.host_sync_idle_pct * f.step_ms / 100.0
        return _interval(f, PARTIAL * idle, idle, f"the {fixed(idle, 2)} ms per step the device idles "
                         "while the host waits in synchronisations")
    held = f.host_sync_pct * f.step_ms / 100.0
    if held <= 0:
        return _none(f, "no synchronisation time measured")
    return _interval(f, 0.0, held, f"up to the {fixed(held, 2)} ms per step the host waits in "
                     "synchronisations (the device's idle time is not known)")


def exposed_copies(f: Facts) -> ExpectedGain:
    copies = _ms(f, "memcpy")
    return _part_of(f, copies, "no copy time in the steady steps", f"the {fixed(copies, 1)} ms of exposed "
                    "copies per step; the data still has to move once")


def transposes(f: Facts) -> ExpectedGain:
    moved = _ms(f, "device_compute") * f.transpose_pct / 100.0
    if moved <= 0:
        return _none(f, "no layout transposes measured")
    share = _device_critical(f)
    return _interval(f, share * moved, moved, f"the {fixed(moved, 1)} ms of layout "
                     f"transposes per step; at the low end only where the device limits the step "
                     f"({fixed(100 * share, 0)} %)")


def measurement_only(f: Facts) -> ExpectedGain:
    return _none(f, "improves the measurement, not the step")


def zero_grad_fills(f: Facts) -> ExpectedGain:
    return _none(f, "the zero-fills' own time is not separated from the optimizer's in this profile")


def fixed_interval(step_ms: float, low: float, high: float, basis: str) -> ExpectedGain:
    """An estimate made outside the Facts (the deeper views' findings), held to the same bounds."""
    return _interval(Facts(step_ms=step_ms), low, high, basis)


def no_estimate(step_ms: float, why: str) -> ExpectedGain:
    return ExpectedGain(None, None, step_ms, why)


def without_estimate(why: str) -> Callable[[object], ExpectedGain]:
    """The gain of a rule that never estimates one: always none, and why (most findings)."""
    return lambda _subject: no_estimate(0.0, why)
