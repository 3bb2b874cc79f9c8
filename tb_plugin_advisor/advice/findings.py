"""Findings of the deeper views (kernels, memory, collectives, roofline): their wording, one place
(their thresholds are in analysis/thresholds.py).

A finding is the engine's one advice type (facts.Recommendation, written as a finding's JSON): a
stable id (scripts test for it, like recommendation ids), a severity, a title, a message saying what
to do, and evidence with the numbers that fired it. The rules are small functions over the views'
results, run after the analyses (report/deep.py), so that every threshold is asserted on both sides
by a test.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional

from tb_plugin_advisor.advice.expected_gain import ExpectedGain
from tb_plugin_advisor.advice.facts import Recommendation
from tb_plugin_advisor.advice.gains import fixed_interval, no_estimate
from tb_plugin_advisor.analysis.deep.kernel_stats import KernelStats
from tb_plugin_advisor.analysis.thresholds import (
    COLLECTIVES_EXPOSED_HIGH_PCT,
    COLLECTIVES_EXPOSED_PCT,
    COLLECTIVES_SKEW_PCT,
    COLLECTIVES_SMALL_MESSAGE_BYTES,
    COLLECTIVES_SMALL_MIN_PER_STEP,
    HOT_KERNEL_PCT,
    LIBRARY_TILED_FAMILIES,
    LOW_MFU_PCT,
    LOW_OCCUPANCY_PCT,
    MEMORY_FRAGMENTATION_PCT,
    MEMORY_LOW_HEADROOM_PCT,
    ROOFLINE_FAR_BELOW_PCT,
    ROOFLINE_MIN_COSTED_PCT,
    ROOFLINE_MIN_TIME_PCT,
    TINY_KERNEL_US,
    TINY_LAUNCH_SHARE_PCT,
    TINY_MIN_LAUNCHES,
    TINY_MIN_LAUNCHES_PER_STEP,
)
from tb_plugin_advisor.formatting import fixed, format_ms, format_pct, plain, significant

# ---------------------------------------------------------------------------------------------------
# Kernels

FUSE_SNIPPET = (
    "# TF/Keras: compile the step with XLA\n"
    "model.compile(..., jit_compile=True)   # or @tf.function(jit_compile=True)\n"
    "# JAX: jit the whole step, not its pieces\n"
    "step = jax.jit(train_step)\n"
    "# PyTorch: fuse and capture in a CUDA graph\n"
    "model = torch.compile(model, mode=\"reduce-overhead\")"
)


def kernel_findings(stats: KernelStats) -> List[Recommendation]:
    out: List[Recommendation] = []
    if not stats.launches:
        return out
    total = stats.total_ns or 1
    tiny_launches = stats.sums.tiny_launches
    share = 100.0 * tiny_launches / stats.launches
    per_step = stats.sums.tiny_steady_launches / stats.steps if stats.steps else None
    if per_step is not None:
        numerous = per_step >= TINY_MIN_LAUNCHES_PER_STEP
    else:
        numerous = tiny_launches >= TINY_MIN_LAUNCHES
    if share >= TINY_LAUNCH_SHARE_PCT and numerous:
        count_text = (f"{fixed(per_step, 0)} per step" if per_step is not None
                      else f"{tiny_launches} in the profile")
        out.append(Recommendation(
            "kernels.tiny_launches", "medium", "Tiny kernels dominate the launches",
            "Most launches are kernels shorter than the time it takes to launch one, so the GPU waits on "
            "the host between them. Fuse them (XLA / torch.compile) or capture the step in a CUDA graph.",
            f"{format_pct(share)} of {stats.launches} launches are kernels under {plain(TINY_KERNEL_US)} µs "
            f"({count_text}); they are {format_pct(100.0 * stats.sums.tiny_ns / total)} of "
            "kernel time",
            FUSE_SNIPPET,
        ))
    for k in stats.kernels:
        pct = 100.0 * k.total_ns / total
        if pct < HOT_KERNEL_PCT:
            break
        if k.occupancy_pct is None or k.occupancy_pct >= LOW_OCCUPANCY_PCT:
            continue
        if k.family in LIBRARY_TILED_FAMILIES:
            continue
        why = f", limited by {k.limiter.replace('_', ' ')}" if k.limiter else ""
        out.append(Recommendation(
            "kernels.low_occupancy", "medium", f"Low occupancy in a hot kernel: {_short(k.name)}",
            "This kernel keeps few warps resident per SM, so memory latency is poorly hidden. Fewer "
            "registers per thread (__launch_bounds__, -maxrregcount), less shared memory per block, or "
            "larger blocks raise it; for framework kernels, a different batch/feature size often does.",
            f"{k.name}: {format_pct(pct)} of kernel time, occupancy {format_pct(k.occupancy_pct)} "
            f"({(k.occupancy_source or '').replace('_', ' ')}{why}); block {k.threads_per_block} threads, "
            f"{k.details.registers_per_thread} registers/thread, {k.shared_bytes or 0} B shared memory",
        ))
    return with_gain_reasons(out)


def _short(name: str, limit: int = 60) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------------
# Memory

SHRINK_MEMORY_SNIPPET = (
    "# TF/Keras: bf16/fp16 activations halve their memory\n"
    "keras.mixed_precision.set_global_policy(\"mixed_bfloat16\")\n"
    "# PyTorch: autocast, and recompute activations instead of storing them\n"
    "with torch.autocast(\"cuda\", dtype=torch.bfloat16): loss = model(x)\n"
    "torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)\n"
    "# JAX: rematerialise a block's activations\n"
    "block = jax.checkpoint(block)"
)


def memory_findings(timeline: Any) -> List[Recommendation]:
    out: List[Recommendation] = []
    for a in timeline.allocators:
        if a.kind != "device":
            continue
        headroom = a.headroom_pct
        if headroom is not None and headroom < MEMORY_LOW_HEADROOM_PCT:
            out.append(Recommendation(
                "memory.low_headroom", "high", f"Peak memory is close to the limit of {a.allocator}",
                "A larger batch, a longer sequence or a fragmentation spike will run out of memory. Reduce "
                "activation memory (mixed precision, activation checkpointing) before scaling up.",
                f"peak {_gib(a.peak_bytes)} of {_gib(a.capacity_bytes)} "
                f"({a.capacity_source.replace('_', ' ')}): {format_pct(headroom)} headroom"
                + (f"; at the peak: {a.peak_op}" if a.peak_op else ""),
                SHRINK_MEMORY_SNIPPET,
            ))
        if a.fragmentation_pct is not None and a.fragmentation_pct >= MEMORY_FRAGMENTATION_PCT:
            out.append(Recommendation(
                "memory.fragmentation", "low", f"The allocator {a.allocator} is fragmented at the peak",
                "Free memory is split into pieces too small for the next large tensor. Allocating "
                "long-lived tensors first, fixed shapes, or PyTorch's "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reduce it.",
                f"fragmentation {format_pct(a.fragmentation_pct)} "
                f"({(a.fragmentation_source or '').replace('_', ' ')}) at the peak of {_gib(a.peak_bytes)}",
            ))
    return with_gain_reasons(out)


def _gib(value: Optional[int]) -> str:
    if value is None:
        return "unknown"
    if value >= 1 << 30:
        return f"{fixed(value / (1 << 30), 2)} GiB"
    return f"{fixed(value / (1 << 20), 1)} MiB"


# ---------------------------------------------------------------------------------------------------
# Collectives

OVERLAP_SNIPPET = (
    "# PyTorch DDP: larger gradient buckets overlap better with the backward pass\n"
    "model = DDP(model, bucket_cap_mb=100, gradient_as_bucket_view=True)\n"
    "# FSDP: prefetch the next all-gather during the current layer\n"
    "FSDP(model, backward_prefetch=BackwardPrefetch.BACKWARD_PRE, forward_prefetch=True)\n"
    "# JAX / XLA on GPU: let the scheduler hide collectives behind compute\n"
    "XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true"
)


def collective_findings(c: Dict[str, Any]) -> List[Recommendation]:
    """On the collectives JSON of one host (or of the run, for the skew across hosts)."""
    out: List[Recommendation] = []
    share = c.get("exposed_step_pct")
    if share is not None and share >= COLLECTIVES_EXPOSED_PCT:
        out.append(Recommendation(
            "collectives.exposed", "high" if share >= COLLECTIVES_EXPOSED_HIGH_PCT else "medium",
            "Communication is not hidden behind compute",
            "While these collectives run no compute kernel runs on the device, so they add to the step. "
            "Overlap them with the backward pass (gradient buckets, prefetching, async collectives).",
            f"{format_ms(c.get('exposed_per_step_ms'))} of {format_ms(c.get('per_step_ms'))} collective time "
            "per step "
            f"is exposed: {format_pct(share)} of the step; {format_pct(c.get('hidden_pct') or 0)} is hidden",
            OVERLAP_SNIPPET,
            expected_gain=_exposed_gain(c, share),
        ))
    for t in c.get("types") or []:
        mean, per_step = t.get("mean_message_bytes"), t.get("calls_per_step")
        if mean is None or per_step is None:
            continue
        if mean < COLLECTIVES_SMALL_MESSAGE_BYTES and per_step >= COLLECTIVES_SMALL_MIN_PER_STEP:
            out.append(Recommendation(
                "collectives.small_messages", "medium", f"Many small {t['type'].replace('_', '-')} messages",
                "Small messages are latency-bound: each call pays the same setup cost whatever its size. "
                "Fewer, larger buckets (DDP bucket_cap_mb, FSDP wrapping larger units, XLA combiner "
                "thresholds) move the same bytes in fewer calls.",
                f"{fixed(per_step, 0)} calls per step, {_gib(mean)} on average"
                + (f", {fixed(t['busbw_gbps'], 1)} GB/s bus bandwidth"
                   if t.get("busbw_gbps") is not None else ""),
            ))
    skew = c.get("skew") or {}
    if skew.get("compute_skew_pct") is not None and skew["compute_skew_pct"] >= COLLECTIVES_SKEW_PCT:
        out.append(Recommendation(
            "collectives.straggler", "medium", f"{skew['slowest']} is a straggler",
            "One rank computes longer than the others, which then wait inside their collectives. Look "
            "for uneven data (sequence lengths, batch shapes), a slower device, or work only that rank does.",
            f"{skew['slowest']} computes {format_ms(skew['slowest_compute_per_step_ms'])} per step against "
            "a median "
            f"of {format_ms(skew['median_compute_per_step_ms'])} (+{format_pct(skew['compute_skew_pct'])}) "
            f"over {skew['ranks']} ranks",
            expected_gain=_straggler_gain(c, skew),
        ))
    return with_gain_reasons(out)


def _step_of(c: Dict[str, Any]) -> float:
    """The step time the collectives' shares are of (exposed ms ÷ exposed share)."""
    exposed, share = c.get("exposed_per_step_ms"), c.get("exposed_step_pct")
    return 100.0 * exposed / share if exposed and share else 0.0


def _exposed_gain(c: Dict[str, Any], share: float) -> ExpectedGain:
    exposed = float(c.get("exposed_per_step_ms") or 0.0)
    return fixed_interval(_step_of(c), 0.5 * exposed, exposed,
                          f"the {fixed(exposed, 1)} ms of exposed collective time per step, hidden behind "
                          "compute; at the low end half of it (the backward pass may be shorter than the "
                          "communication)")


def _straggler_gain(c: Dict[str, Any], skew: Dict[str, Any]) -> ExpectedGain:
    extra = float(skew["slowest_compute_per_step_ms"]) - float(skew["median_compute_per_step_ms"])
    step = _step_of(c)
    if step <= 0:
        return no_estimate(step, "the step time of the ranks is not known here")
    return fixed_interval(step, 0.5 * extra, extra, f"the {fixed(extra, 1)} ms per step the other ranks wait "
                          "for the slowest one; at the low end half of it (some imbalance stays)")


# ---------------------------------------------------------------------------------------------------
# Roofline

MEMORY_BOUND_ADVICE = (
    "It moves bytes far slower than the memory can: fuse it with its neighbours so intermediates stay "
    "on chip (XLA fusion, torch.compile), avoid layout copies, and give it larger contiguous tensors."
)
COMPUTE_BOUND_ADVICE = (
    "It computes far below the matrix units' peak: use a 16-bit or fp8 precision the units run at full "
    "rate, shapes that are multiples of 8/16 (128 on TPUs), and larger batched matmuls instead of many "
    "small ones."
)


def roofline_findings(r: Dict[str, Any]) -> List[Recommendation]:
    """On the roofline JSON of one host: hot ops far below their roof, low MFU."""
    out: List[Recommendation] = []
    for op in r.get("ops") or []:
        pct, share = op.get("roof_pct"), op.get("time_pct")
        if pct is None or share is None or share < ROOFLINE_MIN_TIME_PCT or pct >= ROOFLINE_FAR_BELOW_PCT:
            continue
        memory = op["bound"] == "memory"
        reached = (f"{fixed(op['achieved_gbps'], 1)} GB/s of {fixed(r['bandwidth_gbps'], 0)} GB/s" if memory
                   else f"{fixed(op['achieved_tflops'], 2)} of {fixed(op['roof_tflops'], 1)} TFLOP/s")
        out.append(Recommendation(
            "roofline.far_below_roof", "medium", f"A hot op is far below its roof: {_short(op['name'])}",
            MEMORY_BOUND_ADVICE if memory else COMPUTE_BOUND_ADVICE,
            f"{_short(op['name'], 100)}: {fixed(share, 1)} % of device time, {op['bound']}-bound (intensity "
            f"{fixed(op['intensity'], 2)} FLOP/byte, ridge {fixed(op['ridge_flops_per_byte'], 1)} at "
            f"{op['peak_precision']}), reaches {fixed(pct, 1)} % "
            f"of its roof ({reached}); FLOPs from {op['source']}",
        ))
    mfu = r.get("mfu_pct")
    covered = r.get("costed_time_pct") or 0.0
    if mfu is not None and mfu < LOW_MFU_PCT and covered >= ROOFLINE_MIN_COSTED_PCT:
        basis = "per step" if r.get("basis") == "steps" else "over the profiled span (no steps found)"
        out.append(Recommendation(
            "roofline.low_mfu", "low", f"Model FLOPs utilisation is {_sig(mfu)} %",
            "The device runs the model's FLOPs at a small fraction of its peak. The hot ops above and the "
            "step breakdown say where the time goes instead (input, host, communication, memory-bound ops).",
            f"{_sig(r['achieved_tflops'])} TFLOP/s achieved {basis} against "
            f"{fixed(r['peak_tflops'], 1)} TFLOP/s "
            f"{r['peak_precision']} peak of the {r['device']} ({r['devices']} device(s), "
            f"{fixed(covered, 0)} % of compute time has known FLOPs)",
        ))
    return with_gain_reasons(out)


def _sig(value: float) -> str:
    """One decimal, or two significant digits for values under 0.1 (a TPU running only adds: 0.00053 %)."""
    return f"{significant(value, 2)}" if 0 < abs(value) < 0.1 else f"{fixed(value, 1)}"


# Why a finding has no estimate of the step time it saves (the others carry an interval).
NO_ESTIMATE: Dict[str, str] = {
    "kernels.tiny_launches": "fusing tiny kernels saves launches whose cost the kernels' own time does "
    "not show; the launch-bound recommendations estimate it from the idle time",
    "kernels.low_occupancy": "what more occupancy buys depends on what limits the kernel (memory, "
    "latency, registers), which the profile does not say",
    "memory.low_headroom": "memory headroom, not speed: it decides whether a larger batch fits",
    "memory.fragmentation": "memory, not speed: fragmentation wastes reserved memory",
    "collectives.small_messages": "fewer, larger messages save per-call latency the profile cannot "
    "separate from bandwidth",
    "roofline.far_below_roof": "how close an op can get to its roof depends on its implementation",
    "roofline.low_mfu": "a utilisation figure, not a single fix: the other recommendations estimate theirs",
}


def with_gain_reasons(findings: List[Recommendation]) -> List[Recommendation]:
    """Each finding without an estimate says why (NO_ESTIMATE)."""
    return [f if f.expected_gain is not None or f.id not in NO_ESTIMATE
            else replace(f, expected_gain=no_estimate(0.0, NO_ESTIMATE[f.id])) for f in findings]
