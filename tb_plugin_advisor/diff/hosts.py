"""The per-host part of a diff: each host's step time and input wait in both runs, and which hosts
became or stopped being stragglers — a pooled diff can hide one host that got much slower."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


def _pct(delta: Optional[float], base: Optional[float]) -> Optional[float]:
    if delta is None or not base:
        return None
    return round(delta * 100.0 / base, 2)


def _figures(report: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {str(h.get("host")): h for h in report.get("per_host") or []}


def _stragglers(report: Dict[str, Any]) -> List[str]:
    return sorted({str(s.get("host")) for s in report.get("stragglers") or []})


def diff_hosts(baseline: Dict[str, Any], candidate: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """None when neither report has several hosts; else rows matched by host name and straggler changes."""
    b, c = _figures(baseline), _figures(candidate)
    if not b and not c:
        return None
    rows = []
    for host in sorted(set(b) | set(c)):
        bh, ch = b.get(host) or {}, c.get(host) or {}
        b_step, c_step = bh.get("step_time_ms"), ch.get("step_time_ms")
        delta = None if b_step is None or c_step is None else round(c_step - b_step, 4)
        b_in, c_in = bh.get("input_pct"), ch.get("input_pct")
        rows.append(
            {
                "host": host,
                "baseline_step_ms": b_step,
                "candidate_step_ms": c_step,
                "delta_ms": delta,
                "delta_pct": _pct(delta, b_step),
                "baseline_input_pct": b_in,
                "candidate_input_pct": c_in,
                "input_delta_points": None if b_in is None or c_in is None else round(c_in - b_in, 2),
                "baseline_straggler": bool(bh.get("straggler")),
                "candidate_straggler": bool(ch.get("straggler")),
            }
        )
    before, after = _stragglers(baseline), _stragglers(candidate)
    return {
        "hosts": rows,
        "stragglers": {
            "baseline": [s.get("message") for s in baseline.get("stragglers") or []],
            "candidate": [s.get("message") for s in candidate.get("stragglers") or []],
            "new": [h for h in after if h not in before],
            "resolved": [h for h in before if h not in after],
        },
    }
