"""The deeper views of a report — kernel statistics, memory over time, collectives, roofline — as JSON.

analyze.py runs `analyze_deep` per host; run.py puts `deep_json` (one host) or `combined_deep_json`
(several hosts, merged here, once) into the report under the keys of SECTIONS.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from tb_plugin_advisor.advice.facts import Recommendation
from tb_plugin_advisor.advice.findings import (
    collective_findings,
    kernel_findings,
    memory_findings,
    roofline_findings,
)
from tb_plugin_advisor.advice.rules.collectives import STRAGGLER
from tb_plugin_advisor.analysis.deep.collectives import Collectives, analyze_collectives, skew_of
from tb_plugin_advisor.analysis.deep.kernel_stats import KernelStats, kernel_stats
from tb_plugin_advisor.analysis.deep.memory_timeline import MemoryTimeline, memory_timeline
from tb_plugin_advisor.analysis.deep.roofline import Roofline, roofline
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.thresholds import KERNEL_STATS_TOP, ROOFLINE_TOP_OPS
from tb_plugin_advisor.formatting import rounded
from tb_plugin_advisor.model import Profile

# `tb-advisor report --section NAME` → the report key it shows.
SECTIONS: Dict[str, str] = {"kernels": "kernel_stats", "memory": "memory", "collectives": "collectives",
                            "roofline": "roofline"}


@dataclass
class DeepViews:
    """The deeper views of one host, and the findings the advice engine drew from each (by SECTIONS
    key); a section's JSON ends with its findings."""

    kernel_stats: KernelStats
    memory: MemoryTimeline
    collectives: Collectives
    roofline: Roofline
    findings: Dict[str, List[Recommendation]] = field(default_factory=dict)


def analyze_deep(profile: Profile, steps: Optional[Steps]) -> DeepViews:
    """The four analyses, then their findings (advice/findings.py) over the results."""
    views = DeepViews(
        kernel_stats=kernel_stats(profile, steps),
        memory=memory_timeline(profile, steps),
        collectives=analyze_collectives(profile, steps),
        roofline=roofline(profile, steps),
    )
    views.findings = {
        "kernel_stats": kernel_findings(views.kernel_stats),
        "memory": memory_findings(views.memory),
        "collectives": collective_findings(views.collectives.to_json()),
        "roofline": roofline_findings(views.roofline.to_json()),
    }
    return views


def deep_json(views: DeepViews) -> Dict[str, Any]:
    sections = {
        "kernel_stats": views.kernel_stats.to_json(),
        "memory": views.memory.to_json(),
        "collectives": views.collectives.to_json(),
        "roofline": views.roofline.to_json(),
    }
    for key, section in sections.items():
        section["findings"] = [f.to_finding_json() for f in views.findings.get(key, [])]
    return sections


def combined_deep_json(hosts: List[Tuple[str, DeepViews]]) -> Dict[str, Any]:
    """Several hosts: kernels merged by name over hosts; every host's allocators, each naming its host."""
    per_host = [(host, deep_json(views)) for host, views in hosts]
    return {
        "kernel_stats": _merged_kernels(per_host),
        "memory": _merged_memory(per_host),
        "collectives": _merged_collectives(per_host),
        "roofline": merged_roofline(per_host),
    }


def _merged_kernels(per_host: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, Any]:
    rows: Dict[str, Dict[str, Any]] = {}
    for host, out in per_host:
        for k in out["kernel_stats"]["kernels"]:
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
    summaries = [out["kernel_stats"] for _, out in per_host]
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
        "findings": [dict(f, host=host) for host, out in per_host for f in out["kernel_stats"]["findings"]],
        "per_host": [
            dict(host=host, **_summary_of(out["kernel_stats"]))
            for host, out in per_host
        ],
    }


def _merged_memory(per_host: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, Any]:
    allocators = [dict(a, host=host) for host, out in per_host for a in out["memory"]["allocators"]]
    allocators.sort(key=lambda a: (a["kind"] != "device", -a["peak_bytes"], a["host"], a["allocator"]))
    main = allocators[0] if allocators else None
    return {
        "allocators": allocators,
        "main_allocator": f"{main['host']}:{main['allocator']}" if main else None,
        "peak_bytes": main["peak_bytes"] if main else None,
        "findings": [dict(f, host=host) for host, out in per_host for f in out["memory"]["findings"]],
    }


def _merged_collectives(per_host: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, Any]:
    """Types summed over hosts; per-step figures are means over the hosts that run collectives; the skew
    is across every rank (host:device) of the run."""
    parts = [(host, out["collectives"]) for host, out in per_host]
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


def _collective_summary(c: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in c.items() if k not in ("types", "per_device", "findings")}


def _summary_of(section: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in section.items() if k not in ("kernels", "findings")}


def _mean(values: List[Optional[float]]) -> Optional[float]:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 2) if known else None


def _weighted(pairs: List[Tuple[float, float]]) -> float:
    total = sum(w for _, w in pairs)
    return round(sum(v * w for v, w in pairs) / total, 2) if total else 0.0


def merged_roofline(per_host: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, Any]:
    """Several hosts: FLOPs and time summed, MFU recomputed over every device of the run; each op row
    and finding names its host (ops are not merged: hosts may hold different devices)."""
    parts = [(host, out["roofline"]) for host, out in per_host if out.get("roofline")]
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
