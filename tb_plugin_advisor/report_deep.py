"""The deeper views of a report — kernel statistics, memory over time, collectives, roofline — as JSON.

report.py runs `analyze_deep` per host and puts `deep_json` (one host) or `combined_deep_json` (several
hosts) into the report under the keys of SECTIONS. Kept apart from report.py so that the diagnosis
and the deeper views can grow without one module doing both jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from tb_plugin_advisor.analysis.findings import KERNEL_STATS_TOP
from tb_plugin_advisor.analysis.kernel_stats import KernelStats, kernel_stats
from tb_plugin_advisor.analysis.memory_timeline import MemoryTimeline, memory_timeline
from tb_plugin_advisor.analysis.steps import Steps
from tb_plugin_advisor.model import Profile

# `tb-advisor report --section NAME` → the report key it shows.
SECTIONS: Dict[str, str] = {"kernels": "kernel_stats", "memory": "memory"}


@dataclass
class DeepViews:
    kernel_stats: KernelStats
    memory: MemoryTimeline


def analyze_deep(profile: Profile, steps: Optional[Steps]) -> DeepViews:
    return DeepViews(kernel_stats=kernel_stats(profile, steps), memory=memory_timeline(profile, steps))


def deep_json(views: DeepViews) -> Dict[str, Any]:
    return {"kernel_stats": views.kernel_stats.to_json(), "memory": views.memory.to_json()}


def combined_deep_json(hosts: List[Tuple[str, DeepViews]]) -> Dict[str, Any]:
    """Several hosts: kernels merged by name over hosts; every host's allocators, each naming its host."""
    per_host = [(host, deep_json(views)) for host, views in hosts]
    return {
        "kernel_stats": _merged_kernels(per_host),
        "memory": _merged_memory(per_host),
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


def _summary_of(section: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in section.items() if k not in ("kernels", "findings")}


def _mean(values: List[Optional[float]]) -> Optional[float]:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 2) if known else None


def _weighted(pairs: List[Tuple[float, float]]) -> float:
    total = sum(w for _, w in pairs)
    return round(sum(v * w for v, w in pairs) / total, 2) if total else 0.0
