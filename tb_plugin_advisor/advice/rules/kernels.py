"""Findings of the kernel statistics view (analysis/deep/kernel_stats.py): launches dominated by
kernels too short to be worth a launch, and hot kernels with low occupancy. Each check reads the
view's `KernelStats`; their thresholds are in analysis/thresholds.py."""

from __future__ import annotations

from typing import Iterator, Tuple

from tb_plugin_advisor.advice.gains import without_estimate
from tb_plugin_advisor.advice.rule import Fired, Rule, Snippets, subject_name
from tb_plugin_advisor.analysis.deep.kernel_stats import KernelStats
from tb_plugin_advisor.analysis.thresholds import (
    HOT_KERNEL_PCT,
    LIBRARY_TILED_FAMILIES,
    LOW_OCCUPANCY_PCT,
    TINY_KERNEL_US,
    TINY_LAUNCH_SHARE_PCT,
    TINY_MIN_LAUNCHES,
    TINY_MIN_LAUNCHES_PER_STEP,
)
from tb_plugin_advisor.formatting import fixed, format_pct, plain

KERNEL_EVIDENCE = ("slowest_kernel",)


def tiny_launches(stats: KernelStats) -> Iterator[Fired]:
    if not stats.launches:
        return
    total = stats.total_ns or 1
    tiny = stats.sums.tiny_launches
    share = 100.0 * tiny / stats.launches
    per_step = stats.sums.tiny_steady_launches / stats.steps if stats.steps else None
    numerous = per_step >= TINY_MIN_LAUNCHES_PER_STEP if per_step is not None else tiny >= TINY_MIN_LAUNCHES
    if share >= TINY_LAUNCH_SHARE_PCT and numerous:
        count_text = f"{fixed(per_step, 0)} per step" if per_step is not None else f"{tiny} in the profile"
        yield Fired("medium", (
            f"{format_pct(share)} of {stats.launches} launches are kernels under {plain(TINY_KERNEL_US)} µs "
            f"({count_text}); they are {format_pct(100.0 * stats.sums.tiny_ns / total)} of kernel time"
        ))


TINY_LAUNCHES = Rule(
    id="kernels.tiny_launches",
    title="Tiny kernels dominate the launches",
    message="Most launches are kernels shorter than the time it takes to launch one, so the GPU waits "
    "on the host between them. Fuse them (XLA / torch.compile) or capture the step in a CUDA graph.",
    check=tiny_launches,
    gain=without_estimate("fusing tiny kernels saves launches whose cost the kernels' own time does "
                          "not show; the launch-bound recommendations estimate it from the idle time"),
    evidence=KERNEL_EVIDENCE,
    snippets=Snippets(every=(
        "# TF/Keras: compile the step with XLA\n"
        "model.compile(..., jit_compile=True)   # or @tf.function(jit_compile=True)\n"
        "# JAX: jit the whole step, not its pieces\n"
        "step = jax.jit(train_step)\n"
        "# PyTorch: fuse and capture in a CUDA graph\n"
        "model = torch.compile(model, mode=\"reduce-overhead\")"
    )),
)


def low_occupancy(stats: KernelStats) -> Iterator[Fired]:
    """Each hot kernel (the kernels are sorted by time) with low occupancy that is not a library's
    tiled kernel (those choose their occupancy on purpose)."""
    total = stats.total_ns or 1
    for k in stats.kernels if stats.launches else ():
        pct = 100.0 * k.total_ns / total
        if pct < HOT_KERNEL_PCT:
            break
        if k.occupancy_pct is None or k.occupancy_pct >= LOW_OCCUPANCY_PCT:
            continue
        if k.family in LIBRARY_TILED_FAMILIES:
            continue
        why = f", limited by {k.limiter.replace('_', ' ')}" if k.limiter else ""
        yield Fired("medium", (
            f"{k.name}: {format_pct(pct)} of kernel time, occupancy {format_pct(k.occupancy_pct)} "
            f"({(k.occupancy_source or '').replace('_', ' ')}{why}); block {k.threads_per_block} threads, "
            f"{k.details.registers_per_thread} registers/thread, {k.shared_bytes or 0} B shared memory"
        ), subject=subject_name(k.name))


LOW_OCCUPANCY = Rule(
    id="kernels.low_occupancy",
    title="Low occupancy in a hot kernel: {subject}",
    message="This kernel keeps few warps resident per SM, so memory latency is poorly hidden. Fewer "
    "registers per thread (__launch_bounds__, -maxrregcount), less shared memory per block, or larger "
    "blocks raise it; for framework kernels, a different batch/feature size often does.",
    check=low_occupancy,
    gain=without_estimate("what more occupancy buys depends on what limits the kernel (memory, "
                          "latency, registers), which the profile does not say"),
    evidence=KERNEL_EVIDENCE,
)

RULES: Tuple[Rule[KernelStats], ...] = (TINY_LAUNCHES, LOW_OCCUPANCY)
