"""The validity matrix of one profile: one row per analysis, its status the most severe any rule
gives it (analysis/validity/rules.py), its reason and fix those of the rules that hold.

A row is {`analysis`, `status` (supported | degraded | unsupported), `reason`, `fix`, `rules` (the ids
of the rules that hold for it)}; the report writes it as `validity` (docs/ARCHITECTURE.md §2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.validity.rules import ANALYSES, RULES, STATUSES, SUPPORTED
from tb_plugin_advisor.analysis.validity.trace_facts import TraceFacts, measure_trace
from tb_plugin_advisor.model import Profile


@dataclass
class ValidityRow:
    """How far one analysis can be trusted on this trace, with the reasons and the fixes."""

    analysis: str
    status: str = SUPPORTED
    reasons: List[str] = field(default_factory=list)
    fixes: List[str] = field(default_factory=list)
    rules: List[str] = field(default_factory=list)

    def worsen(self, status: str, reason: str, fix: str, rule_id: str) -> None:
        if STATUSES.index(status) > STATUSES.index(self.status):
            self.status = status
        self.reasons.append(reason)
        if fix and fix not in self.fixes:
            self.fixes.append(fix)
        self.rules.append(rule_id)

    def to_json(self) -> Dict[str, Any]:
        return {"analysis": self.analysis, "status": self.status, "reason": " ".join(self.reasons),
                "fix": "; ".join(self.fixes), "rules": list(self.rules)}


@dataclass
class Validity:
    """One profile's matrix: its rows (in ANALYSES order), the facts they were decided on, and the
    problems, one per rule that holds (its reason and fix, for the notes a person reads). Plain data
    only: a host's report crosses process boundaries (report/hostpool.py)."""

    rows: List[ValidityRow]
    facts: TraceFacts
    problems: List[Dict[str, Any]]

    @property
    def held(self) -> Tuple[str, ...]:
        """The ids of the rules that hold."""
        return tuple(p["rule"] for p in self.problems)

    def to_json(self) -> Dict[str, Any]:
        return {"rows": [r.to_json() for r in self.rows], "facts": self.facts.to_json(),
                "problems": [dict(p, affects=dict(p["affects"])) for p in self.problems]}


def assess_validity(profile: Profile, steps: Steps, framework: str, gpu_planes: int) -> Validity:
    """The matrix of one profile (`framework` and `gpu_planes` as analysis/step_time/signals.py found
    them)."""
    return matrix_of(measure_trace(profile, steps, framework, gpu_planes))


def matrix_of(facts: TraceFacts) -> Validity:
    """The rows the rules give these facts."""
    rows = {a: ValidityRow(a) for a in ANALYSES}
    problems: List[Dict[str, Any]] = []
    for rule in RULES:
        if not rule.holds(facts):
            continue
        reason, fix = rule.reason(facts), rule.fix_for(facts.framework)
        problems.append({"rule": rule.id, "reason": reason, "fix": fix, "affects": dict(rule.affects)})
        for analysis, status in rule.affects.items():
            rows[analysis].worsen(status, reason, fix, rule.id)
    return Validity(list(rows.values()), facts, problems)
