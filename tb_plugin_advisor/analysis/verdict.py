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
from tb_plugin_advisor.analysis.breakdown import Breakdown
from tb_plugin_advisor.analysis.inputs import InputPipeline
from tb_plugin_advisor.analysis.steps import Steps

# How categories read in sentences.
LABELS = {
    "input": "input",
    "device_compute": "device compute",
    "host_compute": "host compute",
    "kernel_launch": "kernel launch",
    "memcpy": "memory copies",
    "communication": "communication",
    "idle": "idle",
    "other": "other host work (Python, framework)",
}
BOTTLENECKS = ("input", "device", "host", "launch", "memcpy", "communication", "balanced", "unknown")
_OVERHEADS = (("kernel_launch", "launch"), ("communication", "communication"), ("memcpy", "memcpy"))


@dataclass
class Verdict:
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
    summary = _summary(bottleneck, pct, level, input_pipeline, device_kind)
    if steps.source == "none":
        summary += " (no steps were found; these shares are of the whole profiled time)"
    return Verdict(bottleneck, level, input_pct, summary, _evidence(breakdown, steps, pct, device_kind))


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
        text = f"Input-bound: {pct['input']:.0f} % of each step waits for the input pipeline"
        if pipeline is not None and pipeline.dominant_stage not in ("unknown", "other"):
            text += f", mostly in its {pipeline.dominant_stage} stage"
    elif bottleneck == "device":
        text = f"{device}-bound: {pct['device_compute']:.0f} % of each step is {device} compute"
    elif bottleneck == "host":
        host = pct["host_compute"] + pct["other"]
        doing = _host_activity(pct)
        if device_kind:
            text = f"Host-bound: for {host:.0f} % of each step the host {doing} while the {device} idles"
        else:
            text = f"Compute-bound on the CPU: for {host:.0f} % of each step the host {doing}"
    elif bottleneck == "launch":
        text = (
            f"Launch-bound: for {pct['kernel_launch']:.0f} % of each step the host is launching work "
            f"while the {device} is idle"
        )
    elif bottleneck == "memcpy":
        text = f"Copy-bound: {pct['memcpy']:.0f} % of each step is spent in device memory copies"
    elif bottleneck == "communication":
        text = f"Communication-bound: {pct['communication']:.0f} % of each step is collectives (all-reduce …)"
    else:
        parts = [(v, k) for k, v in pct.items() if k != "idle" and v >= 1.0]
        listed = ", ".join(f"{LABELS[k]} {v:.0f} %" for v, k in sorted(parts, reverse=True)[:4])
        text = f"No single bottleneck: {listed}" if listed else "No single bottleneck"
    if bottleneck != "input" and level == "moderate":
        text += f"; the input pipeline still holds up {pct['input']:.0f} % of each step (moderate)"
    if pct["idle"] >= th.IDLE_NOTE_PCT:
        text += (
            f"; {pct['idle']:.0f} % of each step has no recorded activity (an unprofiled thread, "
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
            f"{steps.count} steps ({steps.source}); over {steady} steady step{'s' if steady != 1 else ''}: "
            f"mean {stats['mean_ms']:.1f} ms, median {stats['median_ms']:.1f} ms, "
            f"p90 {stats['p90_ms']:.1f} ms."
        )
    means = breakdown.mean_ms()
    ranked = sorted(((pct[c], c) for c in pct if pct[c] >= 0.5), reverse=True)
    out.append(
        "Per step: "
        + ", ".join(f"{LABELS[c]} {means[c]:.1f} ms ({p:.0f} %)" for p, c in ranked)
        + "."
    )
    for name, thread, ms in breakdown.input_evidence[:3]:
        out.append(f"Input wait: {name} on {thread}: {ms:.1f} ms per step.")
    busy = [f"{name} {value:.0f} %" for name, value in breakdown.device_busy_pct.items() if value > 0]
    if busy:
        out.append(
            f"{device_kind or 'Device'} busy (kernels or copies) during the steps: " + ", ".join(busy) + "."
        )
    return out
