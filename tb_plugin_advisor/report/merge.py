"""Several hosts, one run: steps pooled over hosts, categories and shares weighted by each host's
steady time, recommendations and op tables merged. Used by run.py for the all-hosts summary."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from tb_plugin_advisor.advice import recommend as rec
from tb_plugin_advisor.advice.facts import SEVERITIES, Recommendation
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.evidence.span import EvidenceSpan
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.ops import OpRow
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.report.host import HostReport, steps_summary


def argmax(values: List[float]) -> int:
    return int(np.argmax(values)) if values else 0


def pooled_breakdown(reports: List[HostReport]) -> Breakdown:
    pooled = Breakdown(
        window_start_ns=np.concatenate([r.breakdown.window_start_ns for r in reports]),
        window_end_ns=np.concatenate([r.breakdown.window_end_ns for r in reports]),
        per_window_ns=np.concatenate([r.breakdown.per_window_ns for r in reports]),
        steady=np.concatenate([r.breakdown.steady for r in reports]),
    )
    pooled.device_busy_pct = {
        f"{r.host}:{k}": v for r in reports for k, v in r.breakdown.device_busy_pct.items()
    }
    evidence = [
        (name, f"{r.host} {thread}", ms) for r in reports for name, thread, ms in r.breakdown.input_evidence
    ]
    pooled.input_evidence = sorted(evidence, key=lambda e: -e[2])[:5]
    pooled.has_device_activity = any(r.breakdown.has_device_activity for r in reports)
    return pooled


def pooled_steps(reports: List[HostReport]) -> Steps:
    sources = [r.steps.source for r in reports]
    clocks = {r.steps.clock for r in reports}
    notes: List[str] = []
    for r in reports:
        notes += [f"{r.host}: {n}" for n in r.steps.notes]
    aheads = [r.steps.host_ahead_ns for r in reports]
    return Steps(
        source=max(set(sources), key=sources.count),
        method="; ".join(f"{r.host}: {r.steps.method}" for r in reports),
        start_ns=np.concatenate([r.steps.start_ns for r in reports]),
        end_ns=np.concatenate([r.steps.end_ns for r in reports]),
        numbers=[n for r in reports for n in r.steps.numbers],
        step_lines=[],
        warmup=np.concatenate([r.steps.warmup for r in reports]),
        notes=notes,
        # one clock for the pool only where every host's steps are on it
        clock=clocks.pop() if len(clocks) == 1 else "mixed",
        host_start_ns=np.concatenate([r.steps.host_start_ns for r in reports]),
        host_end_ns=np.concatenate([r.steps.host_end_ns for r in reports]),
        host_ahead_ns=(None if all(a is None for a in aheads) else np.concatenate([
            a if a is not None else np.full(r.steps.count, np.nan) for a, r in zip(aheads, reports)])),
        cut_off=np.concatenate([r.steps.cut_off for r in reports]),
    )


def pooled_steps_json(reports: List[HostReport]) -> Dict[str, Any]:
    steps = pooled_steps(reports)
    per_step: List[Dict[str, Any]] = []
    for r in reports:
        for entry in r.steps_json()["per_step"]:
            per_step.append(dict(entry, host=r.host))
    return steps_summary(steps, hosts_count={r.host: r.steps.count for r in reports}, per_step=per_step)


def weighted_pct(parts: List[Dict[str, float]], weights: List[float]) -> Dict[str, float]:
    total = sum(weights)
    keys = list(PRECISIONS) + sorted({k for p in parts for k in p} - set(PRECISIONS))
    if total <= 0:
        return {k: _r(sum(p.get(k, 0.0) for p in parts) / max(len(parts), 1), 2) for k in keys}
    return {k: _r(sum(p.get(k, 0.0) * w for p, w in zip(parts, weights)) / total, 2) for k in keys}


def merged_tensor_cores(reports: List[HostReport], weights: List[float]) -> Dict[str, Any]:
    total = sum(weights) or 1.0
    kernels: Dict[str, Dict[str, Any]] = {}
    for r in reports:
        for k in r.tensor_cores.get("kernels") or []:
            entry = kernels.setdefault(k.get("name"), dict(k, time_ms=0.0))
            entry["time_ms"] = entry["time_ms"] + float(k.get("time_ms") or 0.0) / len(reports)
    eligible = [dict(e, host=r.host) for r in reports for e in r.tensor_cores.get("eligible_not_using") or []]
    eligible.sort(key=lambda e: -float(e.get("time_ms") or 0.0))
    return {
        "device_time_pct": _r(
            sum(float(r.tensor_cores.get("device_time_pct") or 0.0) * w for r, w in zip(reports, weights))
            / total,
            2,
        ),
        "eligible_time_pct": _r(
            sum(float(r.tensor_cores.get("eligible_time_pct") or 0.0) * w for r, w in zip(reports, weights))
            / total,
            2,
        ),
        "kernels": sorted(kernels.values(), key=lambda k: -k["time_ms"])[: th.TOP_KERNELS],
        "eligible_not_using": eligible[: th.TOP_KERNELS],
    }


def merged_recommendations(reports: List[HostReport]) -> List[Recommendation]:
    """One recommendation per id: the most severe instance, its evidence naming the hosts it fired on."""
    by_id: Dict[str, List[Tuple[str, Recommendation]]] = {}
    for r in reports:
        for x in r.recommendations:
            by_id.setdefault(x.id, []).append((r.host, x))
    out = []
    for rule_id in rec.RULE_IDS:
        fired = by_id.get(rule_id)
        if not fired:
            continue
        host, best = min(fired, key=lambda hx: SEVERITIES.index(hx[1].severity))
        where = ", ".join(h for h, _ in fired)
        out.append(
            Recommendation(
                best.id,
                best.severity,
                best.title,
                best.message,
                f"{best.evidence} (hosts: {where})",
                best.snippet,
                best.snippet_jax,
                best.snippet_label,
                best.expected_gain,
                _pooled_spans(best, [x for _, x in fired]),
            )
        )
    out.sort(key=rec.rank)
    return out


def _pooled_spans(best: Recommendation, fired: List[Recommendation]) -> Tuple[EvidenceSpan, ...]:
    """The most severe host's spans, then the first span of each other host it fired on (a few)."""
    out = list(best.evidence_spans)
    out += [x.evidence_spans[0] for x in fired if x is not best and x.evidence_spans]
    return tuple(out[:POOLED_SPANS])


# Spans a recommendation pooled over hosts keeps.
POOLED_SPANS = 8


def merged_rows(tables: List[List[OpRow]], reports: List[HostReport], limit: int) -> List[OpRow]:
    """Per-step time over the pooled steps: each host's per-step rows weighted by its step count."""
    weights = [max(r.steady_count, 1) for r in reports]
    total = sum(weights)
    merged: Dict[Tuple[str, str], List[float]] = {}
    for rows, w in zip(tables, weights):
        for row in rows:
            slot = merged.setdefault((row.name, row.category), [0.0, 0.0])
            slot[0] += row.time_ms * w
            slot[1] += row.count * w
    out = [OpRow(n, c, t / total, k / total) for (n, c), (t, k) in merged.items()]
    out.sort(key=lambda o: (-o.time_ms, o.name))
    return out[:limit]
