"""What changed in the roofline between two reports: MFU, achieved FLOP/s per device, FLOPs per step,
and per op (matched by name) its achieved FLOP/s and share of its roof. Inputs are report dicts like
the rest of the diff; diff_deep.py adds the result to the diff.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tb_plugin_advisor.formatting import format_pct

# A change is named in the diff's summary only past these (the tables show every number).
ROOFLINE_EXPLAIN = {
    "mfu_min_points": 2.0,  # MFU moved by ≥ 2 points …
    "mfu_min_rel_pct": 10.0,  # … and by ≥ 10 % of the baseline's MFU
}
SUMMARY_KEYS = ("mfu_pct", "achieved_flops_per_s", "flops_per_step")
TOP_OPS = 10  # op rows in the diff, largest move of the share of roof first


def _num(value: Any) -> Optional[float]:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out == out else None


def _pair(b: Any, c: Any) -> Dict[str, Optional[float]]:
    b, c = _num(b), _num(c)
    delta = None if b is None or c is None else c - b
    pct = None if delta is None or not b else round(100.0 * delta / b, 2)
    return {"baseline": b, "candidate": c, "delta": delta, "delta_pct": pct}


def roofline_diff(base: Dict[str, Any], cand: Dict[str, Any]) -> Dict[str, Any]:
    """Summary pairs and rows for ops either run counted ({} when neither counted any FLOPs)."""
    b, c = base.get("roofline") or {}, cand.get("roofline") or {}
    if not (b.get("ops_with_flops") or c.get("ops_with_flops")):
        return {}
    out: Dict[str, Any] = {key: _pair(b.get(key), c.get(key)) for key in SUMMARY_KEYS}
    out["mfu_precision"] = {"baseline": b.get("mfu_precision"), "candidate": c.get("mfu_precision")}
    b_ops = {o["name"]: o for o in b.get("ops") or []}
    c_ops = {o["name"]: o for o in c.get("ops") or []}
    rows: List[Dict[str, Any]] = []
    for name in sorted(set(b_ops) | set(c_ops)):
        bo, co = b_ops.get(name, {}), c_ops.get(name, {})
        achieved = _pair(bo.get("achieved_flops_per_s"), co.get("achieved_flops_per_s"))
        rows.append({"name": name, "achieved_flops_per_s": achieved,
                     "roof_pct": _pair(bo.get("roof_pct"), co.get("roof_pct"))})
    rows.sort(key=lambda r: (-abs(r["roof_pct"]["delta"] or 0.0), r["name"]))
    out["ops"] = rows[:TOP_OPS]
    return out


def roofline_sentence(diff: Dict[str, Any]) -> Optional[str]:
    """One sentence when MFU moved beyond the thresholds."""
    mfu = (diff.get("roofline") or {}).get("mfu_pct") or {}
    moved, base = mfu.get("delta"), mfu.get("baseline")
    if moved is None or abs(moved) < ROOFLINE_EXPLAIN["mfu_min_points"]:
        return None
    if base and abs(moved) < base * ROOFLINE_EXPLAIN["mfu_min_rel_pct"] / 100:
        return None
    word = "rose" if moved > 0 else "fell"
    return f"MFU {word}: {format_pct(base)} \u2192 {format_pct(mfu['candidate'])} of the device's peak."
