"""Which trace events show each piece of advice: the span kinds its rule's record names
(`Rule.evidence`, analysis/evidence/span.py's kinds, best first), and the one function that attaches
the spans a profile has. An id no rule has (an older report's) shows the worst steps."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Sequence, Tuple

from tb_plugin_advisor.advice.facts import Recommendation
from tb_plugin_advisor.advice.registry import rule_of
from tb_plugin_advisor.analysis.evidence.span import EvidenceSpan

FALLBACK: Tuple[str, ...] = ("worst_step",)


def kinds_for(advice_id: str) -> Tuple[str, ...]:
    """The evidence kinds of an id: its rule's, else the fallback."""
    rule = rule_of(advice_id)
    return rule.evidence if rule is not None else FALLBACK


def spans_for(advice_id: str, spans: Dict[str, List[EvidenceSpan]]) -> Tuple[EvidenceSpan, ...]:
    """The first kind with spans gives all of its spans; each later kind adds its first span (the
    worst step beside the waits, so the wait is seen in its step)."""
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
