"""Why a series changed: the breakdown categories that moved with the step across a change point,
and under them the ops (or, for device compute, the kernels) that moved most; or, when nearly every
op moved by the step's own factor, the machine (diff/uniform.py)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES, in_words
from tb_plugin_advisor.diff.explain import fmt_ms, fmt_signed_ms
from tb_plugin_advisor.diff.rules import ARROW
from tb_plugin_advisor.diff.stats import shift_test
from tb_plugin_advisor.diff.uniform import uniform_change
from tb_plugin_advisor.formatting import rounded
from tb_plugin_advisor.trend.rules import CAUSE
from tb_plugin_advisor.trend.series import Capture


def _mean_of(values: Sequence[Optional[float]]) -> Optional[float]:
    known = [v for v in values if v is not None]
    return float(np.mean(known)) if known else None


def _names_mean(maps: Sequence[Dict[str, float]]) -> Dict[str, float]:
    """Mean ms per step per name over captures (a name absent from a capture counts as 0 there)."""
    names = set().union(*maps) if maps else set()
    return {n: float(np.mean([m.get(n, 0.0) for m in maps])) for n in names}


def _moved(before: Dict[str, float], after: Dict[str, float], direction: float, floor: float,
           kind: str) -> List[Dict[str, Any]]:
    rows = []
    for name in set(before) | set(after):
        b, a = before.get(name, 0.0), after.get(name, 0.0)
        if (a - b) * direction > 0 and abs(a - b) >= floor:
            rows.append({"name": name, "kind": kind, "before_ms": rounded(b), "after_ms": rounded(a),
                         "delta_ms": rounded(a - b)})
    rows.sort(key=lambda r: (-abs(r["delta_ms"]), r["name"]))
    return rows[: int(CAUSE["max_ops"])]


def attribute(before: Sequence[Capture], after: Sequence[Capture]) -> Dict[str, Any]:
    """The cause of a shift between the captures `before` and `after` a change point."""
    step_b = _mean_of([c.step_ms for c in before])
    step_a = _mean_of([c.step_ms for c in after])
    shift = (step_a or 0.0) - (step_b or 0.0)
    direction = 1.0 if shift >= 0 else -1.0
    pytorch = all(c.framework == "pytorch" for c in (*before, *after))

    categories = []
    for key in CATEGORIES:
        left = [c.categories.get(key) for c in before if c.categories.get(key) is not None]
        right = [c.categories.get(key) for c in after if c.categories.get(key) is not None]
        if not left or not right:
            continue
        mb = float(np.mean([x.mean() for x in left if x.size])) if any(x.size for x in left) else 0.0
        ma = float(np.mean([x.mean() for x in right if x.size])) if any(x.size for x in right) else 0.0
        test = shift_test(np.concatenate(left), np.concatenate(right))
        categories.append({"category": key, "before_ms": rounded(mb), "after_ms": rounded(ma),
                           "delta_ms": rounded(ma - mb), "p_value": test.p_value})
    named = [
        row for row in sorted(categories, key=lambda r: -abs(r["delta_ms"]))
        if row["delta_ms"] * direction > 0 and shift
        and abs(row["delta_ms"]) >= CAUSE["category_min_share"] * abs(shift)
    ][: int(CAUSE["max_categories"])]

    ops_b = _names_mean([c.ops for c in before])
    ops_a = _names_mean([c.ops for c in after])
    uniform = uniform_change(
        [(ops_b[n], ops_a[n]) for n in set(ops_b) & set(ops_a)], step_b, step_a
    )
    floor = CAUSE["op_min_pct"] / 100.0 * (step_b or 0.0)
    kinds = {c.op_categories.get(n) for c in (*before, *after) for n in c.op_categories}
    ops: List[Dict[str, Any]] = []
    for row in named:
        if row["category"] == "device_compute":
            ops += _moved(_names_mean([c.kernels for c in before]), _names_mean([c.kernels for c in after]),
                          direction, floor, "kernel")
        else:
            wanted = {
                n for c in (*before, *after) for n, k in c.op_categories.items() if k == row["category"]
            }
            pick = {n: v for n, v in ops_b.items() if n in wanted or not kinds - {""}}
            pick_a = {n: v for n, v in ops_a.items() if n in wanted or not kinds - {""}}
            ops += _moved(pick, pick_a, direction, floor, "op")

    wait_b = _mean_of([c.dataloader_wait_ms for c in before])
    wait_a = _mean_of([c.dataloader_wait_ms for c in after])

    def words(key: str) -> str:
        return "DataLoader wait" if pytorch and key == "input" else in_words(key)

    if uniform is not None:
        summary = uniform["reason"]
    elif named:
        summary = ", ".join(f"{words(r['category'])} {fmt_signed_ms(r['delta_ms'])} ms" for r in named)
        if ops:
            summary += " (" + ", ".join(
                f"{short_name(o['name'], 60)} {fmt_signed_ms(o['delta_ms'])} ms" for o in ops[:3]) + ")"
        if pytorch and named[0]["category"] == "input" and wait_b is not None and wait_a is not None:
            iters = sorted({c.dataloader_iterator for c in (*before, *after) if c.dataloader_iterator})
            summary += f" (next() on the DataLoader: {fmt_ms(wait_b)} {ARROW} {fmt_ms(wait_a)} ms per step"
            summary += f"; iterators {' / '.join(iters)})" if len(iters) > 1 else ")"
    else:
        summary = "spread over several categories, none moving by a quarter of the shift"
    return {
        "category": named[0]["category"] if named and uniform is None else ("machine" if uniform else None),
        "categories": named,
        "ops": ops,
        "dataloader_wait_ms": (
            {"before": rounded(wait_b), "after": rounded(wait_a)} if wait_b is not None or wait_a is not None
            else None
        ),
        "uniform": uniform,
        "summary": summary,
    }
