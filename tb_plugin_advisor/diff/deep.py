"""What changed in the deeper views between two reports: memory, kernel statistics, collectives
(diff/collectives.py), roofline (MFU, achieved FLOP/s). Inputs are reports read through
report/document.py, like diff/compare.py's; compare.py adds `deep_diff`'s keys to the diff and
explain.py `deep_sentences` to its summary.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from tb_plugin_advisor.diff.collectives import collectives_diff, collectives_sentence
from tb_plugin_advisor.formatting import fixed, format_bytes, rounded
from tb_plugin_advisor.report.document import Node, ReportDocument, number

KERNEL_SUMMARY_KEYS = ("launches_per_step", "occupancy_pct", "tiny_launch_pct", "tensor_core_time_pct",
                       "distinct")

# A change is worth a sentence in the summary only past these (the tables show every number).
DEEP_EXPLAIN = {
    "memory_min_pct": 5.0,  # peak memory of the main allocator moved by ≥ 5 %
    "dtype_min_share_pct": 10.0,  # a dtype's bytes at the peak moved by ≥ 10 % of the baseline peak
    "occupancy_min_points": 5.0,  # time-weighted occupancy moved by ≥ 5 points
    "launches_min_pct": 20.0,  # launches per step moved by ≥ 20 %
    "kernel_occupancy_top": 10,  # kernels listed whose occupancy changed
    "mfu_min_points": 1.0,  # MFU moved by ≥ 1 point
    "achieved_min_pct": 10.0,  # achieved FLOP/s (run or op) moved by ≥ 10 %
    "roofline_op_top": 10,  # ops listed whose achieved FLOP/s changed
}
ROOFLINE_SUMMARY_KEYS = ("mfu_pct", "achieved_tflops", "model_flops_per_step", "step_ms", "costed_time_pct")


def _pair(b: Any, c: Any, digits: int = 3) -> Dict[str, Optional[float]]:
    b, c = number(b), number(c)
    delta = None if b is None or c is None else rounded(c - b, digits)
    pct = None if delta is None or not b else rounded(100.0 * delta / b, 2)
    return {"baseline": b, "candidate": c, "delta": delta, "delta_pct": pct}


# ---------------------------------------------------------------------------------------------------
# Memory


def memory_diff(base: ReportDocument, cand: ReportDocument) -> Dict[str, Any]:
    """The main allocator of each run (largest device allocator, else host): peak and its make-up by dtype."""
    b, c = base.memory.main, cand.memory.main
    out: Dict[str, Any] = {
        "baseline_allocator": b.allocator if b else None,
        "candidate_allocator": c.allocator if c else None,
        "peak_bytes": _pair(b and b.peak_bytes, c and c.peak_bytes, 0),
        "live_at_peak_bytes": _pair(b and b.live_at_peak_bytes, c and c.live_at_peak_bytes, 0),
        "headroom_pct": _pair(b and b.headroom_pct, c and c.headroom_pct, 2),
        "by_dtype_delta_bytes": {},
    }
    if b and c:
        bd, cd = b.live_at_peak_by_dtype, c.live_at_peak_by_dtype
        deltas = {k: int(cd.at(k) or 0) - int(bd.at(k) or 0) for k in sorted(set(bd) | set(cd))}
        out["by_dtype_delta_bytes"] = dict(sorted(deltas.items(), key=lambda kv: -abs(kv[1])))
    return out


def _signed_bytes(value: float) -> str:
    return ("+" if value >= 0 else "\u2212") + format_bytes(abs(value))


def memory_sentence(diff: Dict[str, Any]) -> Optional[str]:
    """The main allocator's peak (unless diff.py's device-peak sentence says it) and which dtypes moved."""
    m = diff.get("memory") or {}
    peak = m.get("peak_bytes") or {}
    if peak.get("delta_pct") is None or abs(peak["delta_pct"]) < DEEP_EXPLAIN["memory_min_pct"]:
        return None
    device_peak = diff.get("peak_memory_bytes") or {}
    parts = []
    if device_peak.get("delta_pct") is None:  # CPU runs: diff.py has no device peak to speak of
        sign = "+" if peak["delta_pct"] > 0 else "\u2212"
        parts.append(f"Peak memory of {m['candidate_allocator']} {format_bytes(peak['baseline'])} \u2192 "
                     f"{format_bytes(peak['candidate'])} ({sign}{fixed(abs(peak['delta_pct']), 0)} %)")
    floor = DEEP_EXPLAIN["dtype_min_share_pct"] / 100.0 * peak["baseline"]
    moved = [(k, v) for k, v in (m.get("by_dtype_delta_bytes") or {}).items() if abs(v) >= floor]
    if moved:
        parts.append("live at the peak: " + ", ".join(f"{k} {_signed_bytes(v)}" for k, v in moved[:3]))
    if not parts:
        return None
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


# ---------------------------------------------------------------------------------------------------
# Kernel statistics


def _pairs(b: Node, c: Node, keys: Sequence[str], digits: int) -> Dict[str, Any]:
    """Baseline / candidate / delta of the figures `keys` of one view in both reports."""
    return {key: _pair(getattr(b, key), getattr(c, key), digits) for key in keys}


def kernel_stats_diff(base: ReportDocument, cand: ReportDocument) -> Dict[str, Any]:
    b, c = base.kernel_stats, cand.kernel_stats
    out: Dict[str, Any] = _pairs(b, c, KERNEL_SUMMARY_KEYS, 2)
    b_rows = {k.name: k for k in b.kernels}
    changes = []
    for k in c.kernels:
        old = b_rows.get(k.name)
        if old is None or old.occupancy_pct is None or k.occupancy_pct is None:
            continue
        delta = k.occupancy_pct - old.occupancy_pct
        if abs(delta) >= DEEP_EXPLAIN["occupancy_min_points"]:
            changes.append({"name": k.name, "baseline": old.occupancy_pct, "candidate": k.occupancy_pct,
                            "delta": round(delta, 2), "time_ms": k.total_ms})
    changes.sort(key=lambda r: -(r["time_ms"] or 0.0))
    out["occupancy_changes"] = changes[: DEEP_EXPLAIN["kernel_occupancy_top"]]
    return out


def kernel_sentence(diff: Dict[str, Any]) -> Optional[str]:
    ks = diff.get("kernel_stats") or {}
    parts = []
    launches = ks.get("launches_per_step") or {}
    moved = launches.get("delta_pct")
    if moved is not None and abs(moved) >= DEEP_EXPLAIN["launches_min_pct"]:
        parts.append(f"kernel launches per step {fixed(launches['baseline'], 0)} \u2192 "
                     f"{fixed(launches['candidate'], 0)}")
    occ = ks.get("occupancy_pct") or {}
    if occ.get("delta") is not None and abs(occ["delta"]) >= DEEP_EXPLAIN["occupancy_min_points"]:
        parts.append(f"time-weighted occupancy {fixed(occ['baseline'], 0)} % \u2192 "
                     f"{fixed(occ['candidate'], 0)} %")
    return ("Kernels: " + "; ".join(parts) + ".") if parts else None


# ---------------------------------------------------------------------------------------------------
# Roofline


def roofline_diff(base: ReportDocument, cand: ReportDocument) -> Dict[str, Any]:
    """MFU and achieved FLOP/s of the runs, and the ops (by name) whose achieved FLOP/s moved."""
    b, c = base.roofline, cand.roofline
    out: Dict[str, Any] = _pairs(b, c, ROOFLINE_SUMMARY_KEYS, 4)
    out["baseline_device"], out["candidate_device"] = b.written("device"), c.written("device")
    out["peak_precision"] = {"baseline": b.written("peak_precision"),
                             "candidate": c.written("peak_precision")}
    b_ops = {(op.name, op.written("precision")): op for op in b.ops}
    changes = []
    for op in c.ops:
        old = b_ops.get((op.name, op.written("precision")))
        if old is None:
            continue
        pair = _pair(old.achieved_tflops, op.achieved_tflops, 4)
        if pair["delta_pct"] is not None and abs(pair["delta_pct"]) >= DEEP_EXPLAIN["achieved_min_pct"]:
            changes.append(dict(pair, name=op.name, precision=op.written("precision"),
                                roof_pct={"baseline": old.roof_pct, "candidate": op.roof_pct},
                                time_ms=op.total_ms))
    changes.sort(key=lambda r: -(r["time_ms"] or 0.0))
    out["op_changes"] = changes[: DEEP_EXPLAIN["roofline_op_top"]]
    return out


def roofline_sentence(diff: Dict[str, Any]) -> Optional[str]:
    r = diff.get("roofline") or {}
    mfu, achieved = r.get("mfu_pct") or {}, r.get("achieved_tflops") or {}
    parts = []
    if mfu.get("delta") is not None and abs(mfu["delta"]) >= DEEP_EXPLAIN["mfu_min_points"]:
        parts.append(f"MFU {fixed(mfu['baseline'], 1)} % \u2192 {fixed(mfu['candidate'], 1)} %")
    moved = achieved.get("delta_pct")
    if moved is not None and abs(moved) >= DEEP_EXPLAIN["achieved_min_pct"]:
        parts.append(f"{fixed(achieved['baseline'], 2)} \u2192 {fixed(achieved['candidate'], 2)} "
                     "TFLOP/s of model FLOPs per device")
    return ("Roofline: " + "; ".join(parts) + ".") if parts else None


# ---------------------------------------------------------------------------------------------------
# The whole deeper-view diff


def deep_diff(base: ReportDocument, cand: ReportDocument) -> Dict[str, Any]:
    return {
        "memory": memory_diff(base, cand),
        "kernel_stats": kernel_stats_diff(base, cand),
        "collectives": collectives_diff(base, cand),
        "roofline": roofline_diff(base, cand),
    }


def deep_sentences(diff: Dict[str, Any]) -> List[str]:
    parts = (memory_sentence(diff), kernel_sentence(diff), collectives_sentence(diff),
             roofline_sentence(diff))
    return [s for s in parts if s]
