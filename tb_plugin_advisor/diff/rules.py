"""The diff's rules as data: every threshold that decides a verdict or a sentence, and the words used
for bottlenecks and verdict changes (the categories' words are analysis/step_time/categories.py's).
One place, read by compare.py, parts.py and explain.py (and the views that print diffs)."""

from __future__ import annotations

from typing import Tuple

from tb_plugin_advisor.analysis.thresholds import TOP_OPS

EXPLAIN = {
    "category_min_pct": 2.0,  # a category is named when |Δ| ≥ this % of the baseline step
    "max_categories": 3,
    "share_min_points": 5.0,  # precision / Tensor Core shares moving by ≥ this many points are named
    "max_shares": 2,
    "op_min_pct": 1.0,  # an op is named when |Δ| ≥ this % of the baseline step
    "max_ops": 3,
    "memory_min_pct": 5.0,  # peak memory is mentioned when it moved by ≥ this %
}
# When the 16-bit share grew but the compute that runs it got significantly slower, the hardware is
# emulating 16-bit math (CPUs without AVX512-BF16/AMX, GPUs without Tensor Cores): say so.
SLOWER_16BIT = (
    "The 16-bit ops got slower, not faster: this {where} does not run {kinds} natively (CPUs need "
    "AVX512-BF16 or AMX, GPUs Tensor Cores), so keep float32 here and use mixed precision where it is "
    "supported."
)

SENTENCE_NAME_CHARS = 80  # op names in the summary are shortened to this (tables show more)

REPORT_LIST_LIMIT = TOP_OPS  # reports list their top ops / kernels only (analysis/thresholds.py)

BOTTLENECK_LABELS = {
    "input": "input pipeline",
    "device": "device compute",
    "host": "host compute",
    "launch": "kernel launch",
    "memcpy": "memory copies",
    "communication": "communication",
    "balanced": "balanced",
    "unknown": "unknown",
}

INPUT_BOUND = ("high", "moderate")  # input_bound levels that put the input pipeline on the critical path

# What a verdict change means, first match wins: (id, before levels, after levels, phrase).
INPUT_INTERPRETATIONS: Tuple[Tuple[str, Tuple[str, ...], Tuple[str, ...], str], ...] = (
    ("input_resolved", INPUT_BOUND, ("low",), "the input pipeline is no longer on the critical path"),
    ("input_regressed", ("low",), INPUT_BOUND, "the input pipeline is now on the critical path"),
    ("input_eased", ("high",), ("moderate",), "the input pipeline is still on the critical path, less so"),
    ("input_worsened", ("moderate",), ("high",), "the input pipeline weighs more on the critical path"),
)

MINUS = "\u2212"  # typographic minus, as in "−38 %"
ARROW = "\u2192"

