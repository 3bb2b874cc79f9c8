"""Every way the hosts of one run are combined into the run's report, each a named `Pooling`: how a
report key's per-host values become one (report/sections.py names the pooling of every key).

A run's report pools its hosts once, here: steps pooled over hosts (one entry per host and step),
categories averaged over the pooled steps, shares weighted by each host's compute time, one host
chosen where a section describes one thing (the input pipeline of the host that waits longest), op
tables and recommendations merged, the deeper views merged by kernel, allocator, collective type and
op. A one-host report is the trivial pooling: that host's own values, never passed through here.
Poolings take the hosts' typed results and give typed results; nothing is rounded until the report
is written (a pooled deeper view is a typed result whose `to_json` writes it, as the host's does).

What it does not own: the analyses (analysis/), the advice (advice/), and which keys a report has or
how they are written (sections.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, List, NamedTuple, Optional, Tuple, TypeVar, Union

import numpy as np

from tb_plugin_advisor.advice import recommend as rec
from tb_plugin_advisor.advice.facts import SEVERITIES, Recommendation
from tb_plugin_advisor.advice.findings import collective_findings
from tb_plugin_advisor.advice.rules.collectives import STRAGGLER
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.deep.collectives import Collectives, TypeStats, device_rank, skew_of
from tb_plugin_advisor.analysis.deep.kernel_stats import KernelStat, KernelStats
from tb_plugin_advisor.analysis.deep.memory_timeline import AllocatorMemory, MemoryTimeline
from tb_plugin_advisor.analysis.deep.roofline import CostedOp, Roofline
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
    """A section's analysis of one host and the advice engine's findings over it (a deeper view)."""

    view: T
    findings: List[Recommendation]
    host: str = ""

    def to_json(self) -> Dict[str, Any]:
        """The view's JSON, ending with its findings."""
        out = self.view.to_json()  # type: ignore[attr-defined]
        out["findings"] = [f.to_finding_json() for f in self.findings]
        return out


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
# Each host's value is its view's analysis and the findings over it (a Found); the hosts' views pool
# into a typed result that keeps every host's own objects and writes its JSON, rounded there only.
# Every row and finding the pooled JSON takes from a host names that host.


def _mean(values: List[Optional[float]]) -> Optional[float]:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _weighted_mean(pairs: List[Tuple[float, float]]) -> Optional[float]:
    """Σ value × weight ÷ Σ weight over (value, weight) pairs; None without weight."""
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else None


def _findings_json(parts: List[Found[Any]]) -> List[Dict[str, Any]]:
    """Every host's findings in host order, each naming its host."""
    return [dict(f.to_finding_json(), host=p.host) for p in parts for f in p.findings]


@dataclass
class PooledKernel:
    """One kernel name over the hosts that list it: launches and time summed, the shortest and longest
    launch, occupancy and Tensor Core use weighted by each host's time in it, per-step figures the mean
    over those hosts (each host's per its own steps); its launch shape is the first host's."""

    name: str
    rows: List[Tuple[str, KernelStats, KernelStat]] = field(default_factory=list)  # host, its view, its row

    @property
    def total_ns(self) -> int:
        return sum(k.total_ns for _, _, k in self.rows)

    def to_json(self, run_total_ns: int) -> Dict[str, Any]:
        _, first_view, first = self.rows[0]
        kernels = [k for _, _, k in self.rows]
        launches, total = sum(k.launches for k in kernels), self.total_ns
        with_steps = [(v, k) for _, v, k in self.rows if v.steps]
        # weighted by each host's time in the kernel; the first host's where no time weighs
        occupancy = _weighted_mean([(k.occupancy_pct, k.total_ns) for k in kernels
                                    if k.occupancy_pct is not None])
        tensor_cores = _weighted_mean([(k.tensor_core_pct, k.total_ns) for k in kernels])
        return dict(
            first_view.row_json(first),
            launches=launches,
            total_ms=rounded(total / 1e6),
            time_pct=rounded(100.0 * total / (run_total_ns or 1), 3),
            mean_us=rounded(total / launches / 1e3, 3) if launches else 0.0,
            min_us=rounded(min(k.min_ns for k in kernels) / 1e3, 3),
            max_us=rounded(max(k.max_ns for k in kernels) / 1e3, 3),
            per_step_ms=rounded(_mean([k.steady_ns / 1e6 / v.steps for v, k in with_steps])),
            launches_per_step=rounded(_mean([k.steady_launches / v.steps for v, k in with_steps]), 3),
            occupancy_pct=rounded(first.occupancy_pct if occupancy is None else occupancy, 2),
            tensor_core_pct=rounded(first.tensor_core_pct if tensor_cores is None else tensor_cores, 2),
            devices=sum(k.devices for k in kernels),
            hosts=[host for host, _, _ in self.rows],
        )


@dataclass
class PooledKernelStats:
    """The run's kernel statistics: every host's listed kernels merged by name, its sums over every
    host (shares weighted by each host's launches or kernel time, per-step figures the mean over the
    hosts), each host's own summary."""

    parts: List[Found[KernelStats]]
    kernels: List[PooledKernel]  # every name a host lists, by total time descending, then name

    def to_json(self) -> Dict[str, Any]:
        views = [p.view for p in self.parts]
        launches = sum(s.launches for s in views)
        total = sum(s.total_ns for s in views)
        with_steps = [s for s in views if s.steps]
        occupancy = [(s.sums.occupancy_weighted / s.sums.occupancy_ns, s.total_ns)
                     for s in views if s.sums.occupancy_ns]
        return {
            "launches": launches,
            "distinct": len(self.kernels),
            "total_ms": rounded(total / 1e6),
            "steps": sum(s.steps for s in views),
            "launches_per_step": rounded(_mean([s.sums.steady_launches / s.steps for s in with_steps]), 2),
            "tiny_launch_pct": rounded(100.0 * sum(s.sums.tiny_launches for s in views) / launches, 2)
            if launches else 0.0,
            "tiny_time_pct": rounded(100.0 * sum(s.sums.tiny_ns for s in views) / total, 2) if total else 0.0,
            "occupancy_pct": rounded(_weighted_mean(occupancy), 2),
            "tensor_core_time_pct": rounded(sum(s.sums.tensor_core_weighted for s in views) / total, 2)
            if total else 0.0,
            "kernels": [k.to_json(total) for k in self.kernels[:KERNEL_STATS_TOP]],
            "findings": _findings_json(self.parts),
            "per_host": [dict(host=p.host, **{k: v for k, v in p.view.to_json().items() if k != "kernels"})
                         for p in self.parts],
        }


def _kernel_stats(parts: List[Found[KernelStats]], hosts: Pool) -> PooledKernelStats:
    by_name: Dict[str, PooledKernel] = {}
    for p in parts:
        for k in p.view.kernels[:KERNEL_STATS_TOP]:  # the rows the host lists
            by_name.setdefault(k.name, PooledKernel(k.name)).rows.append((p.host, p.view, k))
    kernels = sorted(by_name.values(), key=lambda k: (-k.total_ns, k.name))
    return PooledKernelStats(parts, kernels)


class HostAllocator(NamedTuple):
    host: str
    memory: AllocatorMemory
    origin_ns: int  # the host's time origin: its times are written from it


@dataclass
class PooledMemory:
    """Every host's allocators, device allocators by peak first; the run is judged by the first."""

    parts: List[Found[MemoryTimeline]]
    allocators: List[HostAllocator]

    def to_json(self) -> Dict[str, Any]:
        main = self.allocators[0] if self.allocators else None
        return {
            "allocators": [dict(a.memory.to_json(a.origin_ns), host=a.host) for a in self.allocators],
            "main_allocator": f"{main.host}:{main.memory.allocator}" if main else None,
            "peak_bytes": main.memory.peak_bytes if main else None,
            "findings": _findings_json(self.parts),
        }


def _memory(parts: List[Found[MemoryTimeline]], hosts: Pool) -> PooledMemory:
    allocators = [HostAllocator(p.host, a, p.view.origin_ns) for p in parts for a in p.view.allocators]
    allocators.sort(key=lambda a: (a.memory.kind != "device", -a.memory.peak_bytes, a.host,
                                   a.memory.allocator))
    return PooledMemory(parts, allocators)


@dataclass
class PooledCollectiveType:
    """One collective type over the hosts that run it: calls (those with a known message size too) and
    time summed, figures per step and bandwidths the mean over those hosts."""

    kind: str
    on_host: List[Tuple[Collectives, TypeStats]] = field(default_factory=list)

    @property
    def total_ns(self) -> int:
        return sum(t.total_ns for _, t in self.on_host)

    def to_json(self) -> Dict[str, Any]:
        types = [t for _, t in self.on_host]
        total, exposed = self.total_ns, sum(t.exposed_ns for t in types)

        def mean(figure: Callable[[Collectives, TypeStats], Optional[float]]) -> Optional[float]:
            return rounded(_mean([figure(c, t) for c, t in self.on_host]), 2)

        return {
            "type": self.kind,
            "calls": sum(t.calls for t in types),
            "total_ms": rounded(total / 1e6),
            "exposed_ms": rounded(exposed / 1e6),
            "per_step_ms": mean(lambda c, t: c.per_step(t.steady_ns)),
            "exposed_per_step_ms": mean(lambda c, t: c.per_step(t.steady_exposed_ns)),
            "calls_per_step": mean(lambda c, t: c.calls_per_step(t)),
            "sized_calls": sum(t.sized_calls for t in types),
            "algbw_gbps": mean(lambda c, t: t.algbw_gbps),
            "busbw_gbps": mean(lambda c, t: t.busbw_gbps),
            "mean_message_bytes": mean(lambda c, t: t.mean_message_bytes),
            "group_size": mean(lambda c, t: t.group_size),
            "hidden_pct": rounded(100.0 * (total - exposed) / total, 2) if total else None,
        }


@dataclass
class PooledCollectives:
    """The run's collectives: types summed over the hosts that run any, per-step figures the mean over
    those hosts, every host's devices, the skew across every rank of the run."""

    parts: List[Found[Collectives]]
    types: List[PooledCollectiveType]  # by total time, descending
    ranks: List[Tuple[str, float, float]]  # host:device, compute ms per step, collective ms per step
    run_findings: List[Recommendation]  # over the whole run: the straggler rank across hosts

    def to_json(self) -> Dict[str, Any]:
        views = [p.view for p in self.parts]
        active = [c for c in views if _runs_collectives(c)]
        total, exposed = sum(c.total_ns for c in active), sum(c.exposed_ns for c in active)
        return {
            "calls": sum(t.calls for c in active for t in c.types.values()),
            "total_ms": rounded(total / 1e6),
            "exposed_ms": rounded(exposed / 1e6),
            "hidden_pct": rounded(100.0 * (total - exposed) / total, 2) if total else None,
            "steps": sum(c.steps for c in views),
            "devices_with_collectives": sum(1 for c in views for d in c.devices if d.total_ns),
            "per_step_ms": rounded(_mean([c.per_step(c.steady_ns) for c in active]), 2),
            "exposed_per_step_ms": rounded(_mean([c.per_step(c.steady_exposed_ns) for c in active]), 2),
            "exposed_step_pct": rounded(_mean([c.exposed_step_pct() for c in active]), 2),
            "types": [t.to_json() for t in self.types],
            "per_device": [dict(p.view.device_json(d), host=p.host)
                           for p in self.parts for d in p.view.devices],
            "skew": skew_of(self.ranks),
            "per_host": [dict(host=p.host, **{k: v for k, v in p.view.to_json().items()
                                              if k not in ("types", "per_device")}) for p in self.parts],
            # each host's findings but its own straggler, which the run's replaces
            "findings": [dict(f.to_finding_json(), host=p.host) for p in self.parts for f in p.findings
                         if f.id != STRAGGLER.id] + [f.to_finding_json() for f in self.run_findings],
        }


def _runs_collectives(c: Collectives) -> bool:
    return sum(t.calls for t in c.types.values()) > 0


def _collectives(parts: List[Found[Collectives]], hosts: Pool) -> PooledCollectives:
    active = [p for p in parts if _runs_collectives(p.view)]
    by_kind: Dict[str, PooledCollectiveType] = {}
    for p in active:
        for t in sorted(p.view.types.values(), key=lambda t: -t.total_ns):  # as the host lists them
            by_kind.setdefault(t.kind, PooledCollectiveType(t.kind)).on_host.append((p.view, t))
    ranks = [(f"{p.host}:{name}", compute, comm) for p in active if p.view.steps
             for name, compute, comm in (device_rank(d, p.view.steps) for d in p.view.devices)]
    run_findings = collective_findings({"skew": skew_of(ranks)})
    types = sorted(by_kind.values(), key=lambda t: -t.total_ns)
    return PooledCollectives(parts, types, ranks, run_findings)


@dataclass
class PooledRoofline:
    """The run's roofline over the hosts that cost any op: FLOPs and devices summed, the achieved rate
    the mean per device over every device of the run, its MFU against the first such host's peak; op
    rows listed per host (hosts may hold different devices), the rest of the first such host's view."""

    parts: List[Found[Roofline]]
    active: List[Found[Roofline]]  # the hosts that cost an op

    def to_json(self) -> Dict[str, Any]:
        first = self.active[0].view
        out = {k: v for k, v in first.to_json().items() if k not in ("ops", "findings", "per_step")}
        views = [p.view for p in self.active]
        devices = sum(r.devices for r in views)
        # a host whose rate is above its device's fastest peak left it out; the run's mean is no figure then
        impossible = any(r.rate_impossible for r in views)
        rate = sum((r.rate or 0.0) * r.devices for r in views)
        achieved = rate / devices if devices and not impossible else None
        peak, _ = first.peak(first.dominant or "unknown")

        def listed(ops: Callable[[Roofline], List[CostedOp]],
                   row: Callable[[Roofline, CostedOp], Dict[str, Any]]) -> List[Dict[str, Any]]:
            """Every host's listed ops, the longest of the run, each written by its host."""
            rows = sorted(((p, op) for p in self.active for op in ops(p.view)),
                          key=lambda p_op: -p_op[1].time_ns)
            return [dict(row(p.view, op), host=p.host) for p, op in rows[:ROOFLINE_TOP_OPS]]

        out.update({
            "devices": devices,
            "hosts": len(self.active),
            "model_flops": rounded(sum(r.span_flops for r in views), 0),
            "hardware_flops": rounded(sum(r.hardware_flops for r in views), 0),
            "achieved_tflops": rounded(achieved / 1e12 if achieved is not None else None, 6),
            "mfu_pct": rounded(100.0 * achieved / peak if achieved is not None and peak else None, 4),
            "mfu_impossible": impossible,
            "ops": listed(Roofline.listed_ops, Roofline.op_json),
            "uncosted_ops": listed(Roofline.listed_uncosted, Roofline.uncosted_json),
            "per_step": [],
            "per_host": [dict(host=p.host, **{k: v for k, v in p.view.to_json().items() if k not in (
                "ops", "per_step", "roofs", "uncosted_ops")}) for p in self.parts],
            "findings": _findings_json(self.parts),
        })
        return out


def _roofline(parts: List[Found[Roofline]], hosts: Pool) -> Union[Found[Roofline], PooledRoofline]:
    """No host costs an op: the first host's own view."""
    active = [p for p in parts if p.view.ops]
    return PooledRoofline(parts, active) if active else parts[0]


KERNEL_STATS = Pooling("kernels merged by name over hosts (time and launches summed, per-step figures "
                       "the mean over hosts)", _kernel_stats)
MEMORY = Pooling("every host's allocators, each naming its host, device allocators by peak first", _memory)
COLLECTIVES = Pooling("types summed over hosts, per-step figures the mean over the hosts that run "
                      "collectives, the skew across every rank of the run", _collectives)
ROOFLINE = Pooling("FLOPs and time summed, the MFU over every device of the run; ops listed per host",
                   _roofline)


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
