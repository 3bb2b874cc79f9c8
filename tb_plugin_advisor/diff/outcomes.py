"""The closed loop: for each recommendation of the baseline, whether the candidate acted on it, and
whether the step time it bought falls inside the interval the baseline predicted.

A fix is "acted on" when the signal its rule targets moved (the input wait mostly gone, the 16-bit
share up, fewer launches…) or the rule no longer fires. Which signal, and which breakdown category
the gain shows in, each rule's record says (advice/rule.py: `Outcome`); this module reads each kind
of signal off two reports. The realized gain is measured on the step time (baseline mean −
candidate mean) and on the breakdown category the rule targets. The verdict widens the predicted
interval by OUTCOME_NOISE_SHARE of the baseline step for run-to-run noise:
"within", "below" (bought less than predicted) or "above" (more).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

from tb_plugin_advisor.advice.registry import rule_of
from tb_plugin_advisor.advice.rule import CATEGORY_FELL, LAUNCHES_FELL, SHARE_ROSE, STOPS_FIRING, Outcome
from tb_plugin_advisor.formatting import format_number
from tb_plugin_advisor.report.document import ReportDocument, number, read_report

# Run-to-run noise allowed around a predicted interval: a share of the baseline step.
OUTCOME_NOISE_SHARE = 0.10
# A signal counts as acted on when it fell to this share of the baseline's (waits, copies, launches)…
SIGNAL_LEFT_SHARE = 0.5
# … or, for precision, when the share of compute in the target types rose by this many points.
PRECISION_POINTS = 20.0
# Launch-bound fixes: the launches per step fell by this share, or the launch and idle time by this one.
LAUNCHES_FELL_SHARE = 0.25
LAUNCH_GAPS_FELL_SHARE = 0.20

Report = ReportDocument
AnyReport = Union[Dict[str, Any], ReportDocument]  # report JSON, or the document that reads it


def _category_fell(category: str) -> Callable[[Report, Report], bool]:
    def fell(b: Report, c: Report) -> bool:
        before = b.breakdown_ms.at(category) or 0.0
        after = c.breakdown_ms.at(category) or 0.0
        return before > 0 and after <= SIGNAL_LEFT_SHARE * before
    return fell


def _share_rose(kinds: tuple) -> Callable[[Report, Report], bool]:
    def rose(b: Report, c: Report) -> bool:
        def share(r: Report) -> float:
            return sum(r.precision_pct.at(k) or 0.0 for k in kinds)
        return share(c) >= share(b) + PRECISION_POINTS
    return rose


def _launches_fell(b: Report, c: Report) -> bool:
    """Fewer launches, or less of the step spent launching and idle between kernels (a compiled
    forward pass still runs an eager backward: the launch count alone may barely move)."""
    before = b.kernel_stats.launches_per_step
    after = c.kernel_stats.launches_per_step
    if before is not None and after is not None and after <= (1 - LAUNCHES_FELL_SHARE) * before:
        return True

    def gaps(r: Report) -> float:
        return sum(r.breakdown_ms.at(k) or 0.0 for k in ("kernel_launch", "idle"))
    return gaps(b) > 0 and gaps(c) <= (1 - LAUNCH_GAPS_FELL_SHARE) * gaps(b)


def _never(b: Report, c: Report) -> bool:
    return False  # only the rule no longer firing in the candidate says it was acted on


# Each signal a rule's record can name (advice/rule.py: Outcome.signal) → its test of two reports.
SIGNAL_TESTS: Dict[str, Callable[[Outcome], Callable[[Report, Report], bool]]] = {
    CATEGORY_FELL: lambda outcome: _category_fell(str(outcome.category)),
    SHARE_ROSE: lambda outcome: _share_rose(outcome.precisions),
    LAUNCHES_FELL: lambda outcome: _launches_fell,
    STOPS_FIRING: lambda outcome: _never,
}


def outcome_of(rule_id: str) -> Outcome:
    """The outcome a rule's record declares; an id no rule has counts as acted on when it no longer
    fires."""
    rule = rule_of(rule_id)
    return rule.outcome if rule is not None else Outcome()


def recommendation_outcomes(baseline: AnyReport, candidate: AnyReport, step_time: Dict[str, Any]
                            ) -> List[Dict[str, Any]]:
    """One outcome per recommendation of the baseline (see module docstring)."""
    baseline, candidate = read_report(baseline), read_report(candidate)
    fires_after = {r.id for r in candidate.recommendations}
    b_step, c_step = number(step_time.get("baseline_ms")), number(step_time.get("candidate_ms"))
    realized = None if b_step is None or c_step is None else b_step - c_step
    noise = OUTCOME_NOISE_SHARE * (b_step or 0.0)
    out = []
    for rec in baseline.recommendations:
        rule = rec.id
        outcome = outcome_of(rule)
        category = outcome.category
        acted = rule not in fires_after or SIGNAL_TESTS[outcome.signal](outcome)(baseline, candidate)
        interval = rec.expected_gain.ms_per_step
        predicted = list(interval) if interval is not None else None
        out.append({
            "id": rule,
            "acted_on": acted,
            "predicted_ms_per_step": predicted,
            "realized_ms_per_step": None if realized is None else round(realized, 3),
            "target_category": category,
            "realized_category_ms_per_step": _category_gain(baseline, candidate, category),
            "verdict": None,
        })
    # Fixes made in one change share its step time: each is judged against their combined interval.
    judged = [o for o in out if o["acted_on"] and o["predicted_ms_per_step"]]
    if judged and realized is not None:
        low, high = combined_interval(judged, baseline)
        verdict = ("within" if low - noise <= realized <= high + noise
                   else "below" if realized < low - noise else "above")
        for o in judged:
            o["verdict"] = verdict
            if len(judged) > 1:
                o["together_with"] = [x["id"] for x in judged if x is not o]
    return out


def _category_gain(b: Report, c: Report, category: Optional[str]) -> Optional[float]:
    if category is None:
        return None
    before, after = b.breakdown_ms.at(category), c.breakdown_ms.at(category)
    return None if before is None or after is None else round(before - after, 3)


def combined_interval(judged: List[Dict[str, Any]], baseline: AnyReport) -> tuple:
    """The interval of several fixes made together: fixes of one category (four tf.data fixes of one
    input wait) overlap, so within a category the lows' largest and the highs' sum capped at the
    category's time; across categories they add."""
    baseline = read_report(baseline)
    by_category: Dict[Optional[str], List[Dict[str, Any]]] = {}
    for o in judged:
        by_category.setdefault(o["target_category"], []).append(o)
    low = high = 0.0
    for category, group in by_category.items():
        lows = [o["predicted_ms_per_step"][0] for o in group]
        highs = sum(o["predicted_ms_per_step"][1] for o in group)
        cap = baseline.breakdown_ms.at(category) if category else None
        if cap is not None and len(group) > 1:
            highs = min(highs, max(cap, max(o["predicted_ms_per_step"][1] for o in group)))
        low += max(lows) if category else sum(lows)
        high += highs
    return low, high


def outcome_sentences(outcomes: List[Dict[str, Any]], baseline: AnyReport) -> List[str]:
    """"input.parallel_map: predicted 40–55 ms per step, realized 47 ms — within", for each fix acted on."""
    judged = [o for o in outcomes if o["verdict"] is not None]
    if not judged:
        return []
    low, high = combined_interval(judged, baseline)
    names = " + ".join(o["id"] for o in judged)
    together = " together" if len(judged) > 1 else ""
    return [f"{names}: predicted {format_number(low)}–{format_number(high)} ms per step{together}, "
            f"realized {format_number(judged[0]['realized_ms_per_step'])} ms — {judged[0]['verdict']}."]
