"""The per-host part of a diff: each host's step time and input wait in both runs, and which hosts
became or stopped being stragglers — a pooled diff can hide one host that got much slower."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tb_plugin_advisor.report.document import HostRow, ReportDocument


def _pct(delta: Optional[float], base: Optional[float]) -> Optional[float]:
    if delta is None or not base:
        return None
    return round(delta * 100.0 / base, 2)


def _stragglers(report: ReportDocument) -> List[str]:
    return sorted({s.host for s in report.stragglers})


def diff_hosts(baseline: ReportDocument, candidate: ReportDocument) -> Optional[Dict[str, Any]]:
    """None when neither report has several hosts; else rows matched by host name and straggler changes."""
    b = {h.host: h for h in baseline.per_host}
    c = {h.host: h for h in candidate.per_host}
    if not b and not c:
        return None
    rows = []
    none = HostRow({})
    for host in sorted(set(b) | set(c)):
        bh, ch = b.get(host, none), c.get(host, none)
        b_step, c_step = bh.step_time_ms, ch.step_time_ms
        delta = None if b_step is None or c_step is None else round(c_step - b_step, 4)
        b_in, c_in = bh.input_pct, ch.input_pct
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
                "baseline_straggler": bh.straggler,
                "candidate_straggler": ch.straggler,
            }
        )
    before, after = _stragglers(baseline), _stragglers(candidate)
    return {
        "hosts": rows,
        "stragglers": {
            "baseline": [s.message for s in baseline.stragglers],
            "candidate": [s.message for s in candidate.stragglers],
            "new": [h for h in after if h not in before],
            "resolved": [h for h in before if h not in after],
        },
    }
