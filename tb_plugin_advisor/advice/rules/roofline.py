"""Findings of the roofline view (analysis/deep/roofline.py): hot ops far below their roof (the
memory-bound and the compute-bound ones need different fixes), and a low model FLOPs utilisation.
Each check reads the view's JSON of one host; their thresholds are in analysis/thresholds.py."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Tuple

from tb_plugin_advisor.advice.gains import without_estimate
from tb_plugin_advisor.advice.rule import Fired, Rule, subject_name
from tb_plugin_advisor.analysis.thresholds import (
    LOW_MFU_PCT,
    ROOFLINE_FAR_BELOW_PCT,
    ROOFLINE_MIN_COSTED_PCT,
    ROOFLINE_MIN_TIME_PCT,
)
from tb_plugin_advisor.formatting import fixed, significant

Roofline = Dict[str, Any]  # the view's JSON (docs/deep-views.md)
OP_NAME_CHARS = 100  # an op's name in the evidence is cut to this


def far_below_roof(r: Roofline) -> Iterator[Fired]:
    """Each op with a visible share of device time that reaches only a small part of its roof."""
    for op in r.get("ops") or []:
        pct, share = op.get("roof_pct"), op.get("time_pct")
        if pct is None or share is None or share < ROOFLINE_MIN_TIME_PCT or pct >= ROOFLINE_FAR_BELOW_PCT:
            continue
        memory = op["bound"] == "memory"
        reached = (f"{fixed(op['achieved_gbps'], 1)} GB/s of {fixed(r['bandwidth_gbps'], 0)} GB/s" if memory
                   else f"{fixed(op['achieved_tflops'], 2)} of {fixed(op['roof_tflops'], 1)} TFLOP/s")
        yield Fired("medium", (
            f"{subject_name(op['name'], OP_NAME_CHARS)}: {fixed(share, 1)} % of device time, "
            f"{op['bound']}-bound (intensity {fixed(op['intensity'], 2)} FLOP/byte, "
            f"ridge {fixed(op['ridge_flops_per_byte'], 1)} at {op['peak_precision']}), "
            f"reaches {fixed(pct, 1)} % of its roof ({reached}); FLOPs from {op['source']}"
        ), subject=subject_name(op["name"]), case="memory" if memory else "compute")


FAR_BELOW_ROOF = Rule(
    id="roofline.far_below_roof",
    title="A hot op is far below its roof: {subject}",
    message="It moves bytes far slower than the memory can: fuse it with its neighbours so "
    "intermediates stay on chip (XLA fusion, torch.compile), avoid layout copies, and give it larger "
    "contiguous tensors.",
    messages={"compute": "It computes far below the matrix units' peak: use a 16-bit or fp8 precision "
              "the units run at full rate, shapes that are multiples of 8/16 (128 on TPUs), and larger "
              "batched matmuls instead of many small ones."},
    check=far_below_roof,
    gain=without_estimate("how close an op can get to its roof depends on its implementation"),
    evidence=("slowest_kernel",),
)


def _two_digits(value: float) -> str:
    """One decimal, or two significant digits for values under 0.1 (a TPU running only adds: 0.00053 %)."""
    return significant(value, 2) if 0 < abs(value) < 0.1 else fixed(value, 1)


def low_mfu(r: Roofline) -> Iterator[Fired]:
    mfu = r.get("mfu_pct")
    covered = r.get("costed_time_pct") or 0.0
    if mfu is not None and mfu < LOW_MFU_PCT and covered >= ROOFLINE_MIN_COSTED_PCT:
        basis = "per step" if r.get("basis") == "steps" else "over the profiled span (no steps found)"
        yield Fired("low", (
            f"{_two_digits(r['achieved_tflops'])} TFLOP/s achieved {basis} against "
            f"{fixed(r['peak_tflops'], 1)} TFLOP/s "
            f"{r['peak_precision']} peak of the {r['device']} ({r['devices']} device(s), "
            f"{fixed(covered, 0)} % of compute time has known FLOPs)"
        ), subject=_two_digits(mfu))


LOW_MFU = Rule(
    id="roofline.low_mfu",
    title="Model FLOPs utilisation is {subject} %",
    message="The device runs the model's FLOPs at a small fraction of its peak. The hot ops above and "
    "the step breakdown say where the time goes instead (input, host, communication, memory-bound ops).",
    check=low_mfu,
    gain=without_estimate("a utilisation figure, not a single fix: the other recommendations estimate "
                          "theirs"),
    evidence=("slowest_kernel",),
)

RULES: Tuple[Rule[Roofline], ...] = (FAR_BELOW_ROOF, LOW_MFU)
