"""The advice engine: any rule of advice/registry.py run over what it reads, each time it fires
turned into the one advice type (`Recommendation`) with its words, the snippets for the run's
framework and its expected gain.

`recommend` runs the recommendation rules over a host's `Facts` and ranks what fires; the deeper
views' findings run through the same `advise` (advice/findings.py). Rules see computed numbers, never
the Profile, so each is tested on both sides of its condition (tests/advice/test_recommend.py). Ids are
stable (docs/ARCHITECTURE.md §2): scripts may test for them.
"""

from __future__ import annotations

from typing import List, Tuple, TypeVar

from tb_plugin_advisor.advice.facts import SEVERITIES, Facts, Recommendation
from tb_plugin_advisor.advice.registry import RECOMMENDATIONS
from tb_plugin_advisor.advice.rule import Rule

Subject = TypeVar("Subject")

RULE_IDS = tuple(rule.id for rule in RECOMMENDATIONS)


def advise(rule: Rule[Subject], subject: Subject, framework: str = "unknown") -> List[Recommendation]:
    """Each time `rule` fires on `subject`, as advice for a run of `framework`."""
    out: List[Recommendation] = []
    for fired in rule.check(subject):
        snippet, snippet_jax, label = rule.snippets_for(subject).shown(framework)
        out.append(Recommendation(
            rule.id, fired.severity, rule.title_for(fired), rule.message_for(fired), fired.evidence,
            snippet, snippet_jax, label, expected_gain=rule.gain(subject),
        ))
    return out


def recommend(facts: Facts) -> List[Recommendation]:
    """Every recommendation rule that fires, ranked (`rank`)."""
    out = [advice for rule in RECOMMENDATIONS for advice in advise(rule, facts, facts.framework)]
    out.sort(key=rank)
    return out


def rank(advice: Recommendation) -> Tuple[int, float]:
    """Most severe first; within a severity, the largest expected gain first (no estimate last), and
    ties in the order the rules are registered."""
    gain = advice.expected_gain.middle_ms if advice.expected_gain is not None else -1.0
    return SEVERITIES.index(advice.severity), -gain
