"""The deeper views' findings (kernels, memory, collectives, roofline): the findings rules of
advice/registry.py run by the one engine over each view's result, after the analyses
(report/sections.py's `findings` column; over the whole run, report/combine.py). A finding is the
engine's one advice type, written as a finding's JSON (`Recommendation.to_finding_json`); the rules,
their words and thresholds are in advice/rules/.
"""

from __future__ import annotations

from typing import Any, List

from tb_plugin_advisor.advice.facts import Recommendation
from tb_plugin_advisor.advice.recommend import advise
from tb_plugin_advisor.advice.registry import FINDINGS
from tb_plugin_advisor.analysis.deep.kernel_stats import KernelStats
from tb_plugin_advisor.analysis.deep.memory_timeline import MemoryTimeline


def findings_of(view: str, subject: Any) -> List[Recommendation]:
    """What the rules of one deeper view (its report key) find in `subject`, in rule order."""
    return [finding for rule in FINDINGS[view] for finding in advise(rule, subject)]


def kernel_findings(stats: KernelStats) -> List[Recommendation]:
    return findings_of("kernel_stats", stats)


def memory_findings(timeline: MemoryTimeline) -> List[Recommendation]:
    """Allocator by allocator: each allocator's findings stay together."""
    return [f for allocator in timeline.allocators for f in findings_of("memory", allocator)]


def collective_findings(collectives: Any) -> List[Recommendation]:
    """On the collectives JSON of one host (or of the run, for the skew across hosts)."""
    return findings_of("collectives", collectives)


def roofline_findings(roofline: Any) -> List[Recommendation]:
    """On the roofline JSON of one host: hot ops far below their roof, low MFU."""
    return findings_of("roofline", roofline)
