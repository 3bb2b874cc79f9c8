"""The parts of a diff, each from two reports read through report/document.py (which reads old,
partial and other-host reports defensively): step time, breakdown, precision and Tensor Core shares,
memory, and op / kernel rows matched by name."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES
from tb_plugin_advisor.diff.names import normalise_name
from tb_plugin_advisor.diff.rules import EXPLAIN, REPORT_LIST_LIMIT
from tb_plugin_advisor.diff.stats import decide, shift_test
from tb_plugin_advisor.report.document import OpRow, ReportDocument

# ---------------------------------------------------------------------------------------------------
# What the parts read of a report


def _category_series(report: ReportDocument, category: str) -> List[float]:
    out = []
    for step in report.steps.steady:
        value = step.breakdown_ms.at(category)
        out.append(value if value is not None else 0.0)
    return out


def _mean_median(report: ReportDocument, times: List[float]) -> Tuple[Optional[float], Optional[float]]:
    """The report's own mean/median (what the user saw), else computed from the per-step times."""
    steps = report.steps
    if steps.count == 0 and not times:
        return None, None  # the engine writes 0.0 for "no steps"; that is not a step time
    mean, median = steps.mean_ms, steps.median_ms
    if mean is None and times:
        mean = float(np.mean(times))
    if median is None and times:
        median = float(np.median(times))
    return mean, median


def _pct(delta: Optional[float], base: Optional[float]) -> Optional[float]:
    if delta is None or base is None or base == 0:
        return None
    return 100.0 * delta / base


def _sub(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else a - b


# ---------------------------------------------------------------------------------------------------
# The parts of the diff


def step_time_part(base: ReportDocument, cand: ReportDocument) -> Dict[str, Any]:
    bt, ct = base.steps.times, cand.steps.times
    b_mean, b_median = _mean_median(base, bt)
    c_mean, c_median = _mean_median(cand, ct)
    delta = _sub(c_mean, b_mean)
    test = shift_test(bt, ct)
    decision = decide(test, len(bt), len(ct), b_median, delta)
    noise = None
    if test.ci is not None and b_median:
        noise = 100.0 * (test.ci[1] - test.ci[0]) / 2.0 / b_median
    return {
        "baseline_ms": b_mean,
        "candidate_ms": c_mean,
        "delta_ms": delta,
        "delta_pct": _pct(delta, b_mean),
        "baseline_median_ms": b_median,
        "candidate_median_ms": c_median,
        "median_delta_pct": _pct(_sub(c_median, b_median), b_median),
        "baseline_steps": len(bt),
        "candidate_steps": len(ct),
        "shift_ms": test.shift,
        "shift_ci_ms": list(test.ci) if test.ci else None,
        "noise_pct": noise,
        "p_value": test.p_value,
        "test": test.test,
        "significant": decision.significant,
        "reason": decision.reason,
        "reason_code": decision.code,
        "min_effect_pct": test.rule["min_effect_pct"] if test.rule else None,
    }


def breakdown_part(
    base: ReportDocument, cand: ReportDocument, scale: Optional[float]
) -> Dict[str, Dict[str, Any]]:
    b_ms, c_ms = base.breakdown_ms, cand.breakdown_ms
    keys = list(CATEGORIES) + sorted((set(b_ms) | set(c_ms)) - set(CATEGORIES))
    out = {}
    for key in keys:
        b, c = (b_ms.at(key) or 0.0), (c_ms.at(key) or 0.0)
        bs, cs = _category_series(base, key), _category_series(cand, key)
        test = shift_test(bs, cs)
        decision = decide(test, len(bs), len(cs), scale, c - b)
        out[key] = {
            "baseline_ms": b,
            "candidate_ms": c,
            "delta_ms": c - b,
            "delta_pct": _pct(c - b, b),
            "baseline_pct": base.breakdown_pct.at(key),
            "candidate_pct": cand.breakdown_pct.at(key),
            "p_value": test.p_value,
            "test": test.test,
            "significant": decision.significant,
            "reason": decision.reason,
            "reason_code": decision.code,
        }
    return out


def _share_significant(delta: Optional[float], changed_verdict: bool, compute_moved: bool) -> bool:
    """A share is a ratio of times, so it moves with noise in any of them: it counts as a change only
    when it moved by at least EXPLAIN's minimum points AND the time it is a share of moved
    significantly (the rank test and minimum effect of the step times) or the verdict it drives changed.
    Two runs of the same configuration then diff to no change (fp32 81 → 71 % was reported before)."""
    if delta is None or abs(delta) < EXPLAIN["share_min_points"]:
        return False
    return changed_verdict or compute_moved


def shares_part(
    base: ReportDocument, cand: ReportDocument, breakdown: Dict[str, Dict[str, Any]]
) -> Dict[str, Any]:
    b_prec, c_prec = base.precision_pct, cand.precision_pct
    keys = list(PRECISIONS) + sorted((set(b_prec) | set(c_prec)) - set(PRECISIONS))
    precision_delta = {}
    for key in keys:
        b, c = b_prec.at(key), c_prec.at(key)
        if b is None and c is None:
            continue
        precision_delta[key] = (c or 0.0) - (b or 0.0)
    b_tc, c_tc = base.tensor_cores.device_time_pct, cand.tensor_cores.device_time_pct
    b_pv, c_pv = base.precision.verdict, cand.precision.verdict
    bases = {base.precision.basis, cand.precision.basis}
    rows = [r for r, basis in (("host_compute", "host"), ("device_compute", "device")) if basis in bases]
    # older reports do not say what the shares are of: either compute moving will do
    rows = rows or ["host_compute", "device_compute"]
    compute_moved = any(breakdown[r]["significant"] for r in rows if r in breakdown)
    device_moved = bool("device_compute" in breakdown and breakdown["device_compute"]["significant"])
    tc_delta = _sub(c_tc, b_tc)
    return {
        "precision_delta_pct": precision_delta,
        "precision_significant": {
            k: _share_significant(d, b_pv != c_pv, compute_moved) for k, d in precision_delta.items()
        },
        "precision_pct": {"baseline": dict(b_prec.raw), "candidate": dict(c_prec.raw)},
        "precision_verdict": {"baseline": b_pv, "candidate": c_pv},
        "tensor_cores_delta_pct": tc_delta,
        # (the Tensor Core share has no verdict of its own: only its compute moving counts)
        "tensor_cores_significant": _share_significant(tc_delta, False, device_moved),
        "tensor_cores_pct": {"baseline": b_tc, "candidate": c_tc},
    }


def memory_part(base: ReportDocument, cand: ReportDocument) -> Dict[str, Any]:
    b, c = base.peak_memory_bytes, cand.peak_memory_bytes
    b = int(b) if b is not None else None
    c = int(c) if c is not None else None
    delta = None if b is None or c is None else c - b
    return {"baseline": b, "candidate": c, "delta_bytes": delta, "delta_pct": _pct(delta, b)}


def match_by_name(baseline: Sequence[OpRow], candidate: Sequence[OpRow]) -> List[Dict[str, Any]]:
    """Match op (or kernel) rows of two reports by normalised name; sorted by |Δ time per step|.

    Rows sharing a normalised name are one group per side. When both sides hold exactly the same raw
    names in a group (the usual case: the same script run twice) the group is compared name by name,
    keeping per-layer detail; otherwise — instance numbers shifted, fusions renumbered — the group is
    compared as a whole under its normalised name.

    Reports list only their top REPORT_LIST_LIMIT rows. An op missing from a full list may sit below
    its cut-off, so such "new"/"vanished" rows are marked `uncertain` and not narrated.
    """
    floors = [_list_floor(baseline), _list_floor(candidate)]
    groups: Dict[str, List[Dict[str, Dict[str, Any]]]] = {}
    for side, rows in ((0, baseline), (1, candidate)):
        for row in rows:
            name = row.name
            key = normalise_name(name)
            group = groups.setdefault(key, [{}, {}])
            entry = group[side].setdefault(name, {"time_ms": 0.0, "count": 0.0, "category": row.category})
            entry["time_ms"] += row.time_ms or 0.0
            entry["count"] += row.count or 0.0

    out = []
    for key, (b_rows, c_rows) in groups.items():
        if b_rows and set(b_rows) == set(c_rows):
            for name in b_rows:
                out.append(_op_row(name, key, {name: b_rows[name]}, {name: c_rows[name]}, "exact"))
        else:
            out.append(_op_row(key, key, b_rows, c_rows, "normalised"))
    for row in out:
        missing_side = {"new": 0, "vanished": 1}.get(row["status"])
        row["uncertain"] = missing_side is not None and floors[missing_side] is not None
    out.sort(key=lambda r: (-abs(r["delta_ms"]), -max(r["baseline_ms"], r["candidate_ms"]), r["name"]))
    return out


def _list_floor(rows: Sequence[OpRow]) -> Optional[float]:
    """The smallest listed time when the list is full (so it was cut), else None."""
    if len(rows) < REPORT_LIST_LIMIT:
        return None
    return min((r.time_ms or 0.0) for r in rows)


def _op_row(
    name: str, key: str, b_rows: Dict[str, Any], c_rows: Dict[str, Any], match: str
) -> Dict[str, Any]:
    b = sum(r["time_ms"] for r in b_rows.values())
    c = sum(r["time_ms"] for r in c_rows.values())
    category = next(
        (r["category"] for r in list(b_rows.values()) + list(c_rows.values()) if r["category"]), None
    )
    status = "new" if not b_rows else "vanished" if not c_rows else "changed"
    return {
        "name": name,
        "short_name": short_name(name),
        "key": key,
        "category": category,
        "baseline_ms": b,
        "candidate_ms": c,
        "delta_ms": c - b,
        "delta_pct": _pct(c - b, b),
        "baseline_count": sum(r["count"] for r in b_rows.values()),
        "candidate_count": sum(r["count"] for r in c_rows.values()),
        "status": status,
        "match": match,
        "instances": {"baseline": len(b_rows), "candidate": len(c_rows)},
        "raw_names": sorted(set(b_rows) | set(c_rows))[:5],
    }


