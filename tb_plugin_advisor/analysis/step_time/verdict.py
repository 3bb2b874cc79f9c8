"""The one-line answer: what bounds the step, how input-bound it is, and the numbers behind it.

Input-bound levels follow the built-in tab (thresholds.py): ≥ 20 % of the step waiting for input is
high, ≥ 5 % moderate. The bottleneck is input when input is high; otherwise an overhead category
(launch, copies, collectives) at ≥ 15 %; otherwise the compute side (device or host) that fills at
least half the step; otherwise "balanced".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.categories import in_words
from tb_plugin_advisor.analysis.step_time.inputs import InputPipeline
from tb_plugin_advisor.analysis.step_time.steps import STEP_SOURCE_WORDS, Steps
from tb_plugin_advisor.formatting import fixed, format_ms, format_pct, rounded

# How categories read in sentences.
BOTTLENECKS = ("input", "device", "host", "launch", "memcpy", "communication", "balanced", "unknown")
_HOST_WORDS = {"host_compute": "ops", "other": "Python and framework code"}
_OVERHEADS = (("kernel_launch", "launch"), ("communication", "communication"), ("memcpy", "memcpy"))


@dataclass
class Verdict:
    """The answer to "input-bound or compute-bound?", and the figures it rests on."""

    bottleneck: str
    input_bound: str  # high | moderate | low | unknown
    input_pct: float
    summary: str
    evidence: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {
            "bottleneck": self.bottleneck,
            "input_bound": self.input_bound,
            "input_pct": round(self.input_pct, 2),
            "summary": self.summary,
            "evidence": list(self.evidence),
        }


def input_level(input_pct: float) -> str:
    if input_pct >= th.INPUT_HIGH_PCT:
        return "high"
    if input_pct >= th.INPUT_MODERATE_PCT:
        return "moderate"
    return "low"


def decide_verdict(
    breakdown: Breakdown,
    steps: Steps,
    input_pipeline: Optional[InputPipeline] = None,
    device_kind: str = "",
) -> Verdict:
    """`device_kind` is "GPU"/"TPU"/… for wording, "" for CPU-only profiles."""
    pct = breakdown.pct()
    if sum(pct.values()) <= 0:
        return Verdict(
            "unknown",
            "unknown",
            0.0,
            "No steps and no recorded activity: nothing to diagnose in this profile.",
            list(steps.notes),
        )
    input_pct = pct["input"]
    level = input_level(input_pct)
    bottleneck = _bottleneck(pct)
    # The words quote the shares as the JSON carries them (2 decimals) and the tab formats them, so a
    # 49.496 % share reads "50 %" in the summary as it does beside it, not "49 %".
    shown = {k: rounded(v, 2) for k, v in pct.items()}
    summary = _summary(bottleneck, shown, level, input_pipeline, device_kind)
    if steps.source == "none":
        summary += " (no steps were found; these shares are of the whole profiled time)"
    return Verdict(bottleneck, level, input_pct, summary, _evidence(breakdown, steps, shown, device_kind))


def _bottleneck(pct: Dict[str, float]) -> str:
    if pct["input"] >= th.INPUT_HIGH_PCT:
        return "input"
    overheads = [(pct[c], name) for c, name in _OVERHEADS if pct[c] >= th.OVERHEAD_HIGH_PCT]
    if overheads:
        return max(overheads)[1]
    # the host side is its op execution plus whatever else the step's own thread does (Python)
    compute = max((pct["device_compute"], "device"), (pct["host_compute"] + pct["other"], "host"))
    if compute[0] >= th.COMPUTE_BOUND_PCT:
        return compute[1]
    return "balanced"


def _summary(
    bottleneck: str, pct: Dict[str, float], level: str, pipeline: Optional[InputPipeline], device_kind: str
) -> str:
    device = device_kind or "device"
    if bottleneck == "input":
        text = f"Input-bound: {format_pct(pct['input'])} of each step waits for the input pipeline"
        if pipeline is not None and pipeline.dominant_stage not in ("unknown", "other"):
            text += f", mostly in its {pipeline.dominant_stage} stage"
    elif bottleneck == "device":
        text = f"{device}-bound: {format_pct(pct['device_compute'])} of each step is {device} compute"
    elif bottleneck == "host":
        # The shares the breakdown table shows: the larger host category, then the other one.
        doing = _host_activity(pct)
        main, rest = ("host_compute", "other")
        if pct["other"] > pct["host_compute"]:
            main, rest = rest, main
        also = ""
        if pct[rest] >= 0.5:
            also = f", plus {_HOST_WORDS[rest]} for another {format_pct(pct[rest])}"
        if device_kind:
            text = (
                f"Host-bound: for {format_pct(pct[main])} of each step the host {doing}{also} "
                f"while the {device} idles"
            )
        else:
            share = format_pct(pct[main])
            text = f"Compute-bound on the CPU: for {share} of each step the host {doing}{also}"
    elif bottleneck == "launch":
        text = (
            f"Launch-bound: for {format_pct(pct['kernel_launch'])} of each step the host is launching work "
            f"while the {device} is idle"
        )
    elif bottleneck == "memcpy":
        text = f"Copy-bound: {format_pct(pct['memcpy'])} of each step is spent in device memory copies"
    elif bottleneck == "communication":
        share = format_pct(pct["communication"])
        text = f"Communication-bound: {share} of each step is collectives (all-reduce …)"
    else:
        parts = [(v, k) for k, v in pct.items() if k != "idle" and v >= 1.0]
        listed = ", ".join(f"{in_words(k)} {format_pct(v)}" for v, k in sorted(parts, reverse=True)[:4])
        text = f"No single bottleneck: {listed}" if listed else "No single bottleneck"
    if bottleneck != "input" and level == "moderate":
        text += f"; the input pipeline still holds up {format_pct(pct['input'])} of each step (moderate)"
    if pct["idle"] >= th.IDLE_NOTE_PCT:
        text += (
            f"; {format_pct(pct['idle'])} of each step has no recorded activity (an unprofiled thread, "
            "a sync or a sleep)"
        )
    return text + "."


def _host_activity(pct: Dict[str, float]) -> str:
    if pct["other"] > pct["host_compute"]:
        return "runs Python and framework code outside any op"
    return "runs ops on its threads"


def _evidence(breakdown: Breakdown, steps: Steps, pct: Dict[str, float], device_kind: str) -> List[str]:
    out: List[str] = []
    stats = steps.stats_ms()
    if steps.count:
        steady = int(steps.steady.sum())
        out.append(
            f"{steps.count} steps ({STEP_SOURCE_WORDS.get(steps.source, steps.source)}); over {steady} "
            f"steady step{'s' if steady != 1 else ''}: mean {format_ms(stats['mean_ms'])}, "
            f"median {format_ms(stats['median_ms'])}, p90 {format_ms(stats['p90_ms'])}."
        )
    means = breakdown.mean_ms()
    ranked = sorted(((pct[c], c) for c in pct if pct[c] >= 0.5), reverse=True)
    out.append(
        "Per step: "
        + ", ".join(f"{in_words(c)} {format_ms(means[c])} ({format_pct(p)})" for p, c in ranked)
        + "."
    )
    for name, thread, ms in breakdown.input_evidence[:3]:
        out.append(f"Input wait: {name} on {thread}: {fixed(ms, 1)} ms per step.")
    busy = [f"{name} {format_pct(value)}" for name, value in breakdown.device_busy_pct.items() if value > 0]
    if busy:
        out.append(
            f"{device_kind or 'Device'} busy (kernels or copies) during the steps: " + ", ".join(busy) + "."
        )
    return out
