"""Which trace events show each piece of advice: a table from a recommendation or finding id (or its
family, the part before the dot) to the kinds of evidence span (analysis/evidence/span.py) that show
it, best first, and the one function that attaches the spans a profile has. Kept as data so a new
rule names its evidence in one place; an id the table does not name shows the worst steps."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Sequence, Tuple

from tb_plugin_advisor.advice.facts import Recommendation
from tb_plugin_advisor.analysis.evidence.span import EvidenceSpan

# id or "family." → kinds, best first. The first kind with spans gives all of its spans; each later
# kind adds its first span (the worst step beside the waits, so the wait is seen in its step).
EVIDENCE_FOR: Dict[str, Tuple[str, ...]] = {
    "input.": ("input_annotation", "input_wait", "worst_step"),
    "augmentation.": ("input_annotation", "input_wait", "worst_step"),
    "host.sync": ("host_sync", "worst_step"),
    "host.": ("worst_step",),
    "compile.": ("worst_step", "slowest_kernel"),
    "precision.cpu_16bit": ("worst_step",),
    "precision.": ("fp32_matmul", "slowest_kernel", "worst_step"),
    "layout.": ("transpose_kernel", "slowest_kernel"),
    "compute.": ("slowest_kernel",),
    "device.copy_bound": ("longest_copy", "worst_step"),
    "device.": ("worst_step",),
    "optimizer.": ("worst_step",),
    "profile.warmup_step": ("early_step", "worst_step"),
    "profile.": ("worst_step",),
    "kernels.": ("slowest_kernel",),
    "roofline.": ("slowest_kernel",),
    "collectives.": ("collective", "worst_step"),
    "memory.": ("worst_step",),
}
FALLBACK: Tuple[str, ...] = ("worst_step",)


def kinds_for(advice_id: str) -> Tuple[str, ...]:
    """The evidence kinds of an id: its own entry, else its family's, else the fallback."""
    family = advice_id.split(".", 1)[0] + "."
    return EVIDENCE_FOR.get(advice_id) or EVIDENCE_FOR.get(family) or FALLBACK


def spans_for(advice_id: str, spans: Dict[str, List[EvidenceSpan]]) -> Tuple[EvidenceSpan, ...]:
    out: List[EvidenceSpan] = []
    for kind in kinds_for(advice_id):
        found = spans.get(kind, [])
        if not found:
            continue
        out += found if not out else [s for s in found[:1] if s not in out]
    return tuple(out)


def with_evidence(advice: Sequence[Recommendation],
                  spans: Dict[str, List[EvidenceSpan]]) -> List[Recommendation]:
    """The advice, each with the spans of this profile that show it."""
    return [replace(a, evidence_spans=spans_for(a.id, spans)) for a in advice]
