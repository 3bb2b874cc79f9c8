"""Findings of the memory view (analysis/deep/memory_timeline.py), one device allocator at a time:
a peak close to the device's capacity, and an allocator fragmented at its peak. Each check reads one
`AllocatorMemory`; their thresholds are in analysis/thresholds.py. Both are about memory, not
speed: neither estimates a gain."""

from __future__ import annotations

from typing import Iterator, Tuple

from tb_plugin_advisor.advice.gains import without_estimate
from tb_plugin_advisor.advice.rule import Fired, Rule, Snippets
from tb_plugin_advisor.analysis.deep.memory_timeline import AllocatorMemory
from tb_plugin_advisor.analysis.thresholds import MEMORY_FRAGMENTATION_PCT, MEMORY_LOW_HEADROOM_PCT
from tb_plugin_advisor.formatting import format_memory, format_pct


def low_headroom(a: AllocatorMemory) -> Iterator[Fired]:
    headroom = a.headroom_pct
    if a.kind == "device" and headroom is not None and headroom < MEMORY_LOW_HEADROOM_PCT:
        yield Fired("high", (
            f"peak {format_memory(a.peak_bytes)} of {format_memory(a.capacity_bytes)} "
            f"({a.capacity_source.replace('_', ' ')}): {format_pct(headroom)} headroom"
            + (f"; at the peak: {a.peak_op}" if a.peak_op else "")
        ), subject=a.allocator)


LOW_HEADROOM = Rule(
    id="memory.low_headroom",
    title="Peak memory is close to the limit of {subject}",
    message="A larger batch, a longer sequence or a fragmentation spike will run out of memory. Reduce "
    "activation memory (mixed precision, activation checkpointing) before scaling up.",
    check=low_headroom,
    gain=without_estimate("memory headroom, not speed: it decides whether a larger batch fits"),
    evidence=("worst_step",),
    snippets=Snippets(every=(
        "# TF/Keras: bf16/fp16 activations halve their memory\n"
        "keras.mixed_precision.set_global_policy(\"mixed_bfloat16\")\n"
        "# PyTorch: autocast, and recompute activations instead of storing them\n"
        "with torch.autocast(\"cuda\", dtype=torch.bfloat16): loss = model(x)\n"
        "torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)\n"
        "# JAX: rematerialise a block's activations\n"
        "block = jax.checkpoint(block)"
    )),
)


def fragmentation(a: AllocatorMemory) -> Iterator[Fired]:
    share = a.fragmentation_pct
    if a.kind == "device" and share is not None and share >= MEMORY_FRAGMENTATION_PCT:
        yield Fired("low", (
            f"fragmentation {format_pct(share)} ({(a.fragmentation_source or '').replace('_', ' ')}) "
            f"at the peak of {format_memory(a.peak_bytes)}"
        ), subject=a.allocator)


FRAGMENTATION = Rule(
    id="memory.fragmentation",
    title="The allocator {subject} is fragmented at the peak",
    message="Free memory is split into pieces too small for the next large tensor. Allocating "
    "long-lived tensors first, fixed shapes, or PyTorch's "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reduce it.",
    check=fragmentation,
    gain=without_estimate("memory, not speed: fragmentation wastes reserved memory"),
    evidence=("worst_step",),
)

RULES: Tuple[Rule[AllocatorMemory], ...] = (LOW_HEADROOM, FRAGMENTATION)
