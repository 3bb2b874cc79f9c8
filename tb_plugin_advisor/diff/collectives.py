"""What changed in the collectives between two reports: time per step, the exposed part (what
lengthens the step), the hidden share, and per collective type its time and bus bandwidth. Inputs are
reports read through report/document.py (diff/compare.py works on what the user saw); diff/deep.py
adds the result to the diff.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tb_plugin_advisor.formatting import format_ms, format_pct, rounded
from tb_plugin_advisor.report.document import CollectiveType, ReportDocument, number

# A change is named in the diff's summary only past these (the tables show every number).
COLLECTIVES_EXPLAIN = {
    "exposed_min_ms": 0.5,  # exposed collective time per step moved by ≥ 0.5 ms …
    "exposed_min_pct": 10.0,  # … and by ≥ 10 % of the baseline's
    "hidden_min_points": 10.0,  # the hidden share moved by ≥ 10 points
}

SUMMARY_KEYS = ("per_step_ms", "exposed_per_step_ms", "hidden_pct", "exposed_step_pct")


def _pair(b: Any, c: Any) -> Dict[str, Optional[float]]:
    b, c = number(b), number(c)
    delta = None if b is None or c is None else rounded(c - b, 4)
    pct = None if delta is None or not b else rounded(100.0 * delta / b, 2)
    return {"baseline": b, "candidate": c, "delta": delta, "delta_pct": pct}


def collectives_diff(base: ReportDocument, cand: ReportDocument) -> Dict[str, Any]:
    """Summary pairs and one row per collective type either run has ({} when neither has any)."""
    b, c = base.collectives, cand.collectives
    if not (b.calls or c.calls):
        return {}
    b_types = {t.type: t for t in b.types}
    c_types = {t.type: t for t in c.types}
    none = CollectiveType({})
    rows: List[Dict[str, Any]] = []
    for kind in sorted(set(b_types) | set(c_types)):
        bt, ct = b_types.get(kind, none), c_types.get(kind, none)
        rows.append({
            "type": kind,
            "per_step_ms": _pair(bt.per_step_ms, ct.per_step_ms),
            "exposed_per_step_ms": _pair(bt.exposed_per_step_ms, ct.exposed_per_step_ms),
            "busbw_gbps": _pair(bt.busbw_gbps, ct.busbw_gbps),
        })
    rows.sort(key=lambda r: -abs(r["exposed_per_step_ms"]["delta"] or 0.0))
    out: Dict[str, Any] = {key: _pair(getattr(b, key), getattr(c, key)) for key in SUMMARY_KEYS}
    out["types"] = rows
    return out


def collectives_sentence(diff: Dict[str, Any]) -> Optional[str]:
    """One sentence when the exposed time or the hidden share moved beyond the thresholds."""
    d = diff.get("collectives") or {}
    if not d:
        return None
    parts = []
    exposed = d["exposed_per_step_ms"]
    moved, base = exposed["delta"], exposed["baseline"]
    if (moved is not None and abs(moved) >= COLLECTIVES_EXPLAIN["exposed_min_ms"]
            and (not base or abs(moved) >= base * COLLECTIVES_EXPLAIN["exposed_min_pct"] / 100)):
        parts.append(f"exposed time per step {format_ms(base)} \u2192 {format_ms(exposed['candidate'])}")
    hidden = d["hidden_pct"]
    if hidden["delta"] is not None and abs(hidden["delta"]) >= COLLECTIVES_EXPLAIN["hidden_min_points"]:
        parts.append(f"hidden behind compute {format_pct(hidden['baseline'])} \u2192 "
                     f"{format_pct(hidden['candidate'])}")
    return ("Collectives: " + "; ".join(parts) + ".") if parts else None
