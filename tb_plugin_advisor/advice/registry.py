"""Where every rule is registered: each family module of advice/rules/ lists its records in `RULES`,
and this module gathers the families, so a new rule is one record in its family and a new family one
line here. The recommendations read a host's `Facts`; each deeper view's findings read that view
(kernel statistics, one device allocator, the collectives JSON, the roofline JSON).

The order of RECOMMENDATIONS is the order among advice of the same severity and the same expected
gain (advice/recommend.py ranks by those two first).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rule import Rule
from tb_plugin_advisor.advice.rules import (
    collectives,
    compilation,
    device,
    input_pipeline,
    kernels,
    memory,
    optimizer,
    precision,
    profile,
    roofline,
)

RECOMMENDATIONS: Tuple[Rule[Facts], ...] = (
    precision.RULES + input_pipeline.RULES + device.RULES + compilation.RULES + profile.RULES
    + optimizer.RULES
)

# report key of a deeper view → the rules of its findings
FINDINGS: Dict[str, Tuple[Rule[Any], ...]] = {
    "kernel_stats": kernels.RULES,
    "memory": memory.RULES,
    "collectives": collectives.RULES,
    "roofline": roofline.RULES,
}

EVERY_RULE: Tuple[Rule[Any], ...] = RECOMMENDATIONS + tuple(r for rules in FINDINGS.values() for r in rules)
_BY_ID: Dict[str, Rule[Any]] = {rule.id: rule for rule in EVERY_RULE}


def rule_of(advice_id: str) -> Optional[Rule[Any]]:
    """The record of a recommendation or finding id; None for an id no rule has (an older report's)."""
    return _BY_ID.get(advice_id)
