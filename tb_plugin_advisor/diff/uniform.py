"""Did nearly every op move by the same factor as the step? Then the machine (clocks, other load,
thermal state) changed between the captures, not the code: per-step samples inside each capture are
tight, so the rank test calls such drift significant, and the diff must say what it is instead.
The thresholds are the UNIFORM table below, their one place: the trend asks the same question of a
change point through `uniform_change` (trend/cause.py; trend/ sits above diff/ and imports it)."""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional, Tuple

from tb_plugin_advisor.report.document import number

UNIFORM = {
    # At least this share of the compared op time moved by the step's own factor (within `spread`).
    "min_time_share": 0.8,
    # |log(op factor) − log(step factor)| below this is "the same factor" (about ±25 %).
    "spread": 0.22,
    # Only a step change of at least this % is examined; smaller ones are noise either way.
    "min_step_pct": 5.0,
    # Past this factor (either way) a uniform change is more likely the workload (a larger batch
    # scales every op) than the machine; it stays a change.
    "max_factor": 1.6,
    # Ops compared: those above this % of the baseline step (tiny ops are too noisy to judge).
    "op_min_pct": 0.5,
    # Fewest ops compared for the judgement to mean anything.
    "min_ops": 5,
}

UNIFORM_REASON = "uniform slowdown across all ops: the machine, not the code?"
UNIFORM_SPEEDUP_REASON = "uniform speed-up across all ops: the machine, not the code?"


def uniform_change(
    pairs: Iterable[Tuple[float, float]], step_before: Optional[float], step_after: Optional[float]
) -> Optional[Dict[str, Any]]:
    """`pairs` are (before, after) ms per step of ops present on both sides. A dict describing the
    uniform change ({factor, ops, time_share, reason}), or None when the ops did not move alike."""
    if not step_before or not step_after or step_before <= 0 or step_after <= 0:
        return None
    factor = step_after / step_before
    if abs(factor - 1.0) * 100.0 < UNIFORM["min_step_pct"]:
        return None
    if max(factor, 1.0 / factor) > UNIFORM["max_factor"]:
        return None
    floor = UNIFORM["op_min_pct"] / 100.0 * step_before
    compared = [(b, a) for b, a in pairs if b >= floor and a > 0]
    if len(compared) < UNIFORM["min_ops"]:
        return None
    total = sum(b for b, _ in compared)
    alike = sum(b for b, a in compared if abs(math.log(a / b) - math.log(factor)) <= UNIFORM["spread"])
    share = alike / total if total > 0 else 0.0
    if share < UNIFORM["min_time_share"]:
        return None
    return {
        "factor": factor,
        "ops": len(compared),
        "time_share": share,
        "reason": UNIFORM_REASON if factor > 1 else UNIFORM_SPEEDUP_REASON,
    }


def apply_uniform_guard(
    step_time: Dict[str, Any], breakdown: Dict[str, Dict[str, Any]], ops: List[Dict[str, Any]]
) -> None:
    """Mark a step whose ops all moved with it as `uniform` and keep the step time and the breakdown
    out of the significant changes (their p-values stay, for whoever wants them). Runs before the
    shares are judged: a share counts as changed only when the compute it divides moved
    (diff/parts.py `_share_significant`), so a guarded breakdown keeps the machine's drift out of the
    shares too."""
    pairs = [
        (number(r.get("baseline_ms")) or 0.0, number(r.get("candidate_ms")) or 0.0)
        for r in ops if r.get("status") == "changed"
    ]
    before, after = number(step_time.get("baseline_ms")), number(step_time.get("candidate_ms"))
    uniform = uniform_change(pairs, before, after)
    step_time["uniform"] = uniform
    if uniform is None or not step_time.get("significant"):
        return
    for row in (step_time, *breakdown.values()):
        if row.get("significant"):
            row["significant"] = False
            row["reason"] = uniform["reason"]
            row["reason_code"] = "uniform"
