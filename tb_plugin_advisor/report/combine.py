"""Every way the hosts of one run are combined into the run's report, each a named `Pooling`: how a
report key's per-host values become one (report/sections.py names the pooling of every key).

A run's report pools its hosts once, here: steps pooled over hosts (one entry per host and step),
categories averaged over the pooled steps, shares weighted by each host's compute time, one host
chosen where a section describes one thing (the input pipeline of the host that waits longest), op
tables and recommendations merged, the deeper views merged by kernel, allocator, collective type and
op. A one-host report is the trivial pooling: that host's own values, never passed through here.

What it does not own: the analyses (analysis/), the advice (advice/), and which keys a report has or
how they are written (sections.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, List, Optional, Tuple, TypeVar

import numpy as np

from tb_plugin_advisor.advice import recommend as rec
from tb_plugin_advisor.advice.facts import SEVERITIES, Recommendation
from tb_plugin_advisor.advice.findings import collective_findings
from tb_plugin_advisor.advice.rules.collectives import STRAGGLER
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.deep.collectives import skew_of
from tb_plugin_advisor.analysis.evidence.span import EvidenceSpan
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.ops import OpRow
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.step_time.verdict import Verdict, decide_verdict
from tb_plugin_advisor.analysis.thresholds import KERNEL_STATS_TOP, ROOFLINE_TOP_OPS
from tb_plugin_advisor.analysis.validity.clock_offset import HostClocks, host_clocks
from tb_plugin_advisor.analysis.validity.matrix import Validity, ValidityRow
from tb_plugin_advisor.analysis.validity.rules import ANALYSES, MULTI_HOST, RUN_RULES
from tb_plugin_advisor.formatting import rounded
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.report.host import HostReport
from tb_plugin_advisor.report.stragglers import Straggler, find_stragglers

T = TypeVar("T")
U = TypeVar("U")


class Pool:
    """The hosts of one run being pooled, and what several poolings share (the pooled steps and
    breakdown, the compute-time weights), each computed once per report."""

    def __init__(self, reports: List[HostReport]):
        self.reports = reports
        self._once: Dict[Callable[..., Any], Any] = {}

    def once(self, pooled: Callable[[List[HostReport]], U]) -> U:
        """`pooled(self.reports)`, computed the first time it is asked for."""
        if pooled not in self._once:
            self._once[pooled] = pooled(self.reports)
        return self._once[pooled]


@dataclass(frozen=True)
class Pooling(Generic[T]):
    """How several hosts' values of a report key become the run's value: `pool(values, hosts)`, the
    values in host order. `said` says it in words (docs and tests quote it)."""

    said: str
    pool: Callable[[List[T], Pool], T]


@dataclass
class RunSteps:
    """A run's steps: the one host's, or every host's pooled, with each host's own steps and breakdown
    (each host's per-step rows are timed from its own first step)."""

    steps: Steps
    hosts: List[HostReport] = field(default_factory=list)


@dataclass(frozen=True)
class Found(Generic[T]):
    """A section's analysis and the advice engine's findings over it."""

    view: T
    findings: List[Recommendation]


# -- the shared intermediates --------------------------------------------------------------------------


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


def compute_weights(reports: List[HostReport]) -> List[float]:
    """Each host's compute time (its Tensor Core analysis', else its precision analysis'): what the
    shares of compute time are weighted by."""
    return [float(r.tensor_core_result.compute_ns or r.precision_result.compute_ns) for r in reports]


def stragglers_of(reports: List[HostReport]) -> List[Straggler]:
    return find_stragglers([r.figures() for r in reports])


def slowest_input(reports: List[HostReport]) -> HostReport:
    """The host whose steps wait longest for input."""
    return max(reports, key=lambda r: r.breakdown.mean_ms()["input"])


def _argmax(values: List[float]) -> int:
    return int(np.argmax(values)) if values else 0


# -- steps, breakdown, verdict ------------------------------------------------------------------------


def _run_steps(values: List[RunSteps], hosts: Pool) -> RunSteps:
    return RunSteps(hosts.once(pooled_steps), list(hosts.reports))


def _verdict(values: List[Verdict], hosts: Pool) -> Verdict:
    reports = hosts.reports
    device_kind = next((r.signals.device_kind for r in reports if r.signals.device_kind), "")
    pipeline = hosts.once(slowest_input).input_pipeline
    return decide_verdict(hosts.once(pooled_breakdown), hosts.once(pooled_steps), pipeline, device_kind)


STEPS = Pooling("every host's steps in one list, each step naming its host", _run_steps)
BREAKDOWN = Pooling("each category averaged over every host's steps pooled",
                    lambda values, hosts: hosts.once(pooled_breakdown))
VERDICT = Pooling("decided again on the pooled steps and breakdown, worded from the input pipeline of the "
                  "host that waits longest for input", _verdict)
INPUT_PIPELINE = Pooling("the host that waits longest for input",
                         lambda values, hosts: hosts.once(slowest_input).input_pipeline)


# -- precision and Tensor Cores ------------------------------------------------------------------------


def _weighted_pct(parts: List[Dict[str, float]], hosts: Pool) -> Dict[str, float]:
    weights = hosts.once(compute_weights)
    total = sum(weights)
    keys = list(PRECISIONS) + sorted({k for p in parts for k in p} - set(PRECISIONS))
    if total <= 0:
        return {k: _r(sum(p.get(k, 0.0) for p in parts) / max(len(parts), 1), 2) for k in keys}
    return {k: _r(sum(p.get(k, 0.0) * w for p, w in zip(parts, weights)) / total, 2) for k in keys}


def _tensor_cores(parts: List[Dict[str, Any]], hosts: Pool) -> Dict[str, Any]:
    reports, weights = hosts.reports, hosts.once(compute_weights)
    total = sum(weights) or 1.0
    kernels: Dict[str, Dict[str, Any]] = {}
    for part in parts:
        for k in part.get("kernels") or []:
            entry = kernels.setdefault(k.get("name"), dict(k, time_ms=0.0))
            entry["time_ms"] = entry["time_ms"] + float(k.get("time_ms") or 0.0) / len(reports)
    eligible = [dict(e, host=r.host) for r, part in zip(reports, parts)
                for e in part.get("eligible_not_using") or []]
    eligible.sort(key=lambda e: -float(e.get("time_ms") or 0.0))
    return {
        "device_time_pct": _r(
            sum(float(p.get("device_time_pct") or 0.0) * w for p, w in zip(parts, weights)) / total, 2),
        "eligible_time_pct": _r(
            sum(float(p.get("eligible_time_pct") or 0.0) * w for p, w in zip(parts, weights)) / total, 2),
        "kernels": sorted(kernels.values(), key=lambda k: -k["time_ms"])[: th.TOP_KERNELS],
        "eligible_not_using": eligible[: th.TOP_KERNELS],
    }


PRECISION_PCT = Pooling("each host's shares weighted by its compute time", _weighted_pct)
PRECISION = Pooling("the host with the most compute time",
                    lambda values, hosts: values[_argmax(hosts.once(compute_weights))])
TENSOR_CORES = Pooling("shares weighted by each host's compute time; kernels merged by name (their mean "
                       "time over hosts); every host's eligible ops not on Tensor Cores", _tensor_cores)


# -- advice and op tables -----------------------------------------------------------------------------

# Spans a recommendation pooled over hosts keeps.
POOLED_SPANS = 8


def _recommendations(values: List[List[Recommendation]], hosts: Pool) -> List[Recommendation]:
    by_id: Dict[str, List[Tuple[str, Recommendation]]] = {}
    for r, recommendations in zip(hosts.reports, values):
        for x in recommendations:
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


def _per_step_rows(limit: int) -> Callable[[List[List[OpRow]], Pool], List[OpRow]]:
    """Per-step time over the pooled steps: each host's per-step rows weighted by its steady steps."""

    def merged(tables: List[List[OpRow]], hosts: Pool) -> List[OpRow]:
        weights = [max(r.steady_count, 1) for r in hosts.reports]
        total = sum(weights)
        slots: Dict[Tuple[str, str], List[float]] = {}
        for rows, w in zip(tables, weights):
            for row in rows:
                slot = slots.setdefault((row.name, row.category), [0.0, 0.0])
                slot[0] += row.time_ms * w
                slot[1] += row.count * w
        out = [OpRow(n, c, t / total, k / total) for (n, c), (t, k) in slots.items()]
        out.sort(key=lambda o: (-o.time_ms, o.name))
        return out[:limit]

    return merged


RECOMMENDATIONS = Pooling("one per rule: its most severe host's, naming every host it fired on",
                          _recommendations)
OPS = Pooling("time per step over the pooled steps (each host weighted by its steady steps), the top "
              f"{th.TOP_OPS}", _per_step_rows(th.TOP_OPS))
KERNELS = Pooling("time per step over the pooled steps (each host weighted by its steady steps), the top "
                  f"{th.TOP_KERNELS}", _per_step_rows(th.TOP_KERNELS))


# -- one host chosen, or every host's -----------------------------------------------------------------


def _concatenated(values: List[List[T]], hosts: Pool) -> List[T]:
    return [item for part in values for item in part]


def _largest(values: List[Optional[int]], hosts: Pool) -> Optional[int]:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _by_host_allocator(values: List[Dict[str, int]], hosts: Pool) -> Dict[str, int]:
    return {f"{r.host}:{k}": v for r, peaks in zip(hosts.reports, values) for k, v in peaks.items()}


def _most(share: Callable[[T], float]) -> Callable[[List[T], Pool], T]:
    return lambda values, hosts: max(values, key=share)


def _first_known(values: List[Optional[T]], hosts: Pool) -> Optional[T]:
    return next((v for v in values if v), None)


def _prefixed(values: List[List[str]], hosts: Pool) -> List[str]:
    return [f"{r.host}: {w}" for r, warnings in zip(hosts.reports, values) for w in warnings]


DEVICES = Pooling("every host's devices, each naming its host", _concatenated)
DEVICE_PEAK = Pooling("the largest device-allocator peak of any host", _largest)
ALLOCATOR_PEAKS = Pooling("every host's allocators, keyed host:allocator", _by_host_allocator)
FRAMEWORK = Pooling("the first host's (the hosts of one run run one framework)",
                    lambda values, hosts: values[0])
PREPROCESSING = Pooling("the host whose input preprocessing takes the largest share of its step",
                        _most(lambda p: p.share_pct))
HOST_SYNC = Pooling("the host whose synchronisations take the largest share of its step",
                    _most(lambda s: s.time_pct))
CPU_16BIT = Pooling("the first host that computes mostly in 16 bits on its CPU", _first_known)
PROFILE_FILES = Pooling("every host's file, in host order", _concatenated)
WARNINGS = Pooling("every host's warnings, each prefixed by its host", _prefixed)
PER_HOST = Pooling("one row per host, its stragglers marked", lambda values, hosts: (
    list(hosts.reports), tuple(s.host for s in hosts.once(stragglers_of))))
STRAGGLERS = Pooling("the hosts whose step time or input wait stands out from the median host",
                     lambda values, hosts: hosts.once(stragglers_of))


# -- the deeper views ---------------------------------------------------------------------------------
# Merged as the JSON of each host's section (the section's analysis as JSON, ending with its findings).


def _mean(values: List[Optional[float]]) -> Optional[float]:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 2) if known else None


def _weighted(pairs: List[Tuple[float, float]]) -> float:
    total = sum(w for _, w in pairs)
    return round(sum(v * w for v, w in pairs) / total, 2) if total else 0.0


def _summary_of(section: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in section.items() if k not in ("kernels", "findings")}


def _merged_kernels(sections: List[Dict[str, Any]], hosts: Pool) -> Dict[str, Any]:
    per_host = [(r.host, s) for r, s in zip(hosts.reports, sections)]
    rows: Dict[str, Dict[str, Any]] = {}
    for host, out in per_host:
        for k in out["kernels"]:
            row = rows.get(k["name"])
            if row is None:
                rows[k["name"]] = dict(k, hosts=[host])
                continue
            total = row["total_ms"] + k["total_ms"]
            for key in ("occupancy_pct", "tensor_core_pct"):
                if row.get(key) is not None and k.get(key) is not None and total > 0:
                    row[key] = round((row[key] * row["total_ms"] + k[key] * k["total_ms"]) / total, 2)
            row["launches"] += k["launches"]
            row["total_ms"] = round(total, 4)
            row["min_us"] = min(row["min_us"], k["min_us"])
            row["max_us"] = max(row["max_us"], k["max_us"])
            row["mean_us"] = round(1e3 * total / row["launches"], 3) if row["launches"] else 0.0
            row["devices"] += k["devices"]
            row["hosts"].append(host)
            for key in ("per_step_ms", "launches_per_step"):  # per step on each host: the mean over hosts
                if row.get(key) is not None and k.get(key) is not None:
                    n = len(row["hosts"])
                    row[key] = round((row[key] * (n - 1) + k[key]) / n, 4)
    summaries = [out for _, out in per_host]
    grand = sum(s["total_ms"] for s in summaries) or 1.0
    merged = sorted(rows.values(), key=lambda r: (-r["total_ms"], r["name"]))
    for row in merged:
        row["time_pct"] = round(100.0 * row["total_ms"] / grand, 3)
    occupancy = [(s["occupancy_pct"], s["total_ms"]) for s in summaries if s["occupancy_pct"] is not None]
    occ_time = sum(t for _, t in occupancy)
    return {
        "launches": sum(s["launches"] for s in summaries),
        "distinct": len(rows),
        "total_ms": round(sum(s["total_ms"] for s in summaries), 4),
        "steps": sum(s["steps"] for s in summaries),
        "launches_per_step": _mean([s["launches_per_step"] for s in summaries]),
        "tiny_launch_pct": _weighted([(s["tiny_launch_pct"], s["launches"]) for s in summaries]),
        "tiny_time_pct": _weighted([(s["tiny_time_pct"], s["total_ms"]) for s in summaries]),
        "occupancy_pct": round(sum(o * t for o, t in occupancy) / occ_time, 2) if occ_time else None,
        "tensor_core_time_pct": _weighted([(s["tensor_core_time_pct"], s["total_ms"]) for s in summaries]),
        "kernels": merged[:KERNEL_STATS_TOP],
        "findings": [dict(f, host=host) for host, out in per_host for f in out["findings"]],
        "per_host": [dict(host=host, **_summary_of(out)) for host, out in per_host],
    }


def _merged_memory(sections: List[Dict[str, Any]], hosts: Pool) -> Dict[str, Any]:
    per_host = [(r.host, s) for r, s in zip(hosts.reports, sections)]
    allocators = [dict(a, host=host) for host, out in per_host for a in out["allocators"]]
    allocators.sort(key=lambda a: (a["kind"] != "device", -a["peak_bytes"], a["host"], a["allocator"]))
    main = allocators[0] if allocators else None
    return {
        "allocators": allocators,
        "main_allocator": f"{main['host']}:{main['allocator']}" if main else None,
        "peak_bytes": main["peak_bytes"] if main else None,
        "findings": [dict(f, host=host) for host, out in per_host for f in out["findings"]],
    }


def _collective_summary(c: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in c.items() if k not in ("types", "per_device", "findings")}


def _merged_collectives(sections: List[Dict[str, Any]], hosts: Pool) -> Dict[str, Any]:
    parts = [(r.host, s) for r, s in zip(hosts.reports, sections)]
    active = [(h, c) for h, c in parts if c["calls"]]
    types: Dict[str, Dict[str, Any]] = {}
    for _, c in active:
        for t in c["types"]:
            empty = {"type": t["type"], "calls": 0, "total_ms": 0.0, "exposed_ms": 0.0}
            row = types.setdefault(t["type"], empty)
            row["calls"] += t["calls"]
            row["total_ms"] = round(row["total_ms"] + t["total_ms"], 4)
            row["exposed_ms"] = round(row["exposed_ms"] + t["exposed_ms"], 4)
            for key in ("per_step_ms", "exposed_per_step_ms", "calls_per_step", "algbw_gbps", "busbw_gbps",
                        "mean_message_bytes", "group_size"):
                row.setdefault(f"_{key}", []).append(t.get(key))
    for row in types.values():
        for key in [k for k in row if k.startswith("_")]:
            row[key[1:]] = _mean(row.pop(key))
        row["hidden_pct"] = (round(100.0 * (row["total_ms"] - row["exposed_ms"]) / row["total_ms"], 2)
                             if row["total_ms"] else None)
    total = sum(c["total_ms"] for _, c in active)
    exposed = sum(c["exposed_ms"] for _, c in active)
    ranks = [(f"{h}:{d['device']}", d["compute_per_step_ms"], d["per_step_ms"])
             for h, c in active for d in c["per_device"] if d.get("compute_per_step_ms") is not None]
    merged = {
        "calls": sum(c["calls"] for _, c in active),
        "total_ms": round(total, 4),
        "exposed_ms": round(exposed, 4),
        "hidden_pct": round(100.0 * (total - exposed) / total, 2) if total else None,
        "steps": sum(c["steps"] for _, c in parts),
        "devices_with_collectives": sum(c["devices_with_collectives"] for _, c in parts),
        "per_step_ms": _mean([c["per_step_ms"] for _, c in active]),
        "exposed_per_step_ms": _mean([c["exposed_per_step_ms"] for _, c in active]),
        "exposed_step_pct": _mean([c["exposed_step_pct"] for _, c in active]),
        "types": sorted(types.values(), key=lambda t: -t["total_ms"]),
        "per_device": [dict(d, host=h) for h, c in parts for d in c["per_device"]],
        "skew": skew_of(ranks),
        "per_host": [dict(host=h, **_collective_summary(c)) for h, c in parts],
    }
    host_findings = [dict(f, host=h) for h, c in parts for f in c["findings"]
                     if f["id"] != STRAGGLER.id]
    run_straggler = [f.to_finding_json() for f in collective_findings({"skew": merged["skew"]})]
    merged["findings"] = host_findings + run_straggler
    return merged


def _merged_roofline(sections: List[Dict[str, Any]], hosts: Pool) -> Dict[str, Any]:
    """FLOPs and time summed, MFU recomputed over every device of the run; each op row and finding
    names its host (ops are not merged: hosts may hold different devices)."""
    parts = [(r.host, s) for r, s in zip(hosts.reports, sections) if s]
    active = [(h, r) for h, r in parts if r["ops"]]
    if not active:
        return parts[0][1] if parts else {}
    first = active[0][1]
    out = {k: v for k, v in first.items() if k not in ("ops", "findings", "per_step")}
    devices = sum(r["devices"] for _, r in active)
    flops = sum(r["model_flops"] or 0.0 for _, r in active)
    # each host's achieved FLOP/s × its devices = its FLOP/s; the run's mean per device over all of them
    rate = sum((r["achieved_tflops"] or 0.0) * r["devices"] for _, r in active)
    achieved = rate / devices if devices else None
    peak = first.get("peak_tflops")
    # each host left out a rate above its device's fastest peak; their mean is then no figure either
    impossible = any(r.get("mfu_impossible") for _, r in active)
    if impossible:
        achieved = None
    out.update({
        "devices": devices,
        "hosts": len(active),
        "model_flops": rounded(flops, 0),
        "hardware_flops": rounded(sum(r["hardware_flops"] or 0.0 for _, r in active), 0),
        "achieved_tflops": rounded(achieved, 6),
        "mfu_pct": rounded(100.0 * achieved / peak if achieved is not None and peak else None, 4),
        "mfu_impossible": impossible,
        "ops": sorted([dict(op, host=h) for h, r in active for op in r["ops"]],
                      key=lambda op: -op["total_ms"])[: ROOFLINE_TOP_OPS],
        "uncosted_ops": sorted([dict(op, host=h) for h, r in active for op in r.get("uncosted_ops") or []],
                               key=lambda op: -op["total_ms"])[: ROOFLINE_TOP_OPS],
        "per_step": [],
        "per_host": [dict(host=h, **{k: v for k, v in r.items() if k not in ("ops", "findings", "per_step",
                                                                             "roofs", "uncosted_ops")})
                     for h, r in parts],
        "findings": [dict(f, host=h) for h, r in parts for f in r["findings"]],
    })
    return out


def _as_json(merge: Callable[[List[Dict[str, Any]], Pool], Dict[str, Any]]
             ) -> Callable[[List[Found[Any]], Pool], Dict[str, Any]]:
    return lambda values, hosts: merge([found_json(v) for v in values], hosts)


def found_json(found: Found[Any]) -> Dict[str, Any]:
    """A deeper view's JSON: its analysis', ending with its findings."""
    out = found.view.to_json()
    out["findings"] = [f.to_finding_json() for f in found.findings]
    return out


KERNEL_STATS = Pooling("kernels merged by name over hosts (time and launches summed, per-step figures "
                       "the mean over hosts)", _as_json(_merged_kernels))
MEMORY = Pooling("every host's allocators, each naming its host, device allocators by peak first",
                 _as_json(_merged_memory))
COLLECTIVES = Pooling("types summed over hosts, per-step figures the mean over the hosts that run "
                      "collectives, the skew across every rank of the run", _as_json(_merged_collectives))
ROOFLINE = Pooling("FLOPs and time summed, the MFU over every device of the run; ops listed per host",
                   _as_json(_merged_roofline))


# -- what the traces support ---------------------------------------------------------------------------


@dataclass
class PooledValidity:
    """The run's validity matrix: per analysis the most severe status of any host, each reason once
    after the hosts it holds on; and every host's own matrix."""

    rows: List[ValidityRow]
    hosts: List[Tuple[str, Validity]]
    clocks: HostClocks
    run_problems: List[Dict[str, Any]]

    def to_json(self) -> Dict[str, Any]:
        offsets = self.clocks.offsets_us
        return {
            "rows": [r.to_json() for r in self.rows],
            "facts": None,
            "problems": [dict(p, host=host) for host, v in self.hosts for p in v.to_json()["problems"]]
            + [dict(p, host=None) for p in self.run_problems],
            "hosts": [dict(v.to_json(), host=host) for host, v in self.hosts],
            "clock_offset_us": {h: _r(v, 1) if v is not None else None for h, v in offsets.items()},
            "clock_skew_us": _r(self.clocks.skew_us, 1) if self.clocks.skew_us is not None else None,
        }


def _pooled_validity(values: List[Validity], hosts: Pool) -> PooledValidity:
    rows = {a: ValidityRow(a) for a in ANALYSES}
    for analysis, row in rows.items():
        said: Dict[Tuple[str, str], List[str]] = {}  # (rule, reason) → the hosts it holds on
        for report, validity in zip(hosts.reports, values):
            own = next(r for r in validity.rows if r.analysis == analysis)
            for reason, rule in zip(own.reasons, own.rules):
                said.setdefault((rule, reason), []).append(report.host)
            if own.rules:
                row.worsen(own.status, "", "; ".join(own.fixes), own.rules[0])
        row.reasons = [f"{', '.join(names)}: {reason}" for (_, reason), names in said.items()]
        row.rules = list(dict.fromkeys(rule for rule, _ in said))
    clocks = host_clocks([r.host for r in hosts.reports], [r.deep.collectives.ends_ns for r in hosts.reports])
    run_row, problems = ValidityRow(MULTI_HOST), []
    framework = hosts.reports[0].signals.framework
    for rule in RUN_RULES:
        if rule.holds(clocks):
            reason, fix = rule.reason(clocks), rule.fix_for(framework)
            run_row.worsen(rule.affects[MULTI_HOST], reason, fix, rule.id)
            problems.append({"rule": rule.id, "reason": reason, "fix": fix, "affects": dict(rule.affects)})
    return PooledValidity([*rows.values(), run_row], [(r.host, v) for r, v in zip(hosts.reports, values)],
                          clocks, problems)


VALIDITY = Pooling("per analysis the most severe status of any host, each reason once after the hosts it "
                   "holds on; every host's own matrix under `hosts`", _pooled_validity)
