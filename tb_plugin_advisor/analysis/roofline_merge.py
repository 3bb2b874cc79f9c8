"""The roofline of a multi-host run from each host's roofline JSON (report_deep.combined_deep_json).

Ops with the same name, FLOP source and precision are summed over hosts and held against the roof of
the first host's accelerator (a run's hosts share one kind of device); MFU is the mean of the hosts'
MFUs weighted by their device counts, which equals the run's FLOPs over (step time × all devices ×
peak) when the hosts' steps take equally long.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from tb_plugin_advisor.analysis import findings as fd
from tb_plugin_advisor.analysis.accelerator_peaks import peaks_for
from tb_plugin_advisor.analysis.roofline import OpRow, Roofline


def merged_roofline(per_host: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, Any]:
    parts = [(host, out["roofline"]) for host, out in per_host]
    active = [(h, r) for h, r in parts if r.get("ops_with_flops")]
    model = next((r["device_model"] for _, r in active if r.get("device_model")), "")
    rows: Dict[tuple, OpRow] = {}
    for _, r in active:
        for o in r["ops"]:
            precision = o["precision"] if o.get("precision_source") == "dtype" else None
            key = (o["name"], o["source"], precision)
            row = rows.setdefault(key, OpRow(*key))
            row.calls += o["calls"]
            row.flops += o["flops"]
            row.time_ns += int(round(o["time_ms"] * 1e6))
            if o.get("bytes") is None:
                row.bytes_known = False
            else:
                row.bytes += o["bytes"]
    kernel_ns = sum(_kernel_ns(r) for _, r in active)
    default = next((o["precision"] for _, r in active for o in r["ops"]
                    if o.get("precision_source") == "assumed"), None)
    source = next((r.get("device_model_source") for _, r in active if r.get("device_model")), None)
    merged = Roofline(model=model, model_source=source, peak=peaks_for(model) if model else None,
                      devices=sum(r.get("devices") or 0 for _, r in parts), default_precision=default,
                      ops=sorted(rows.values(), key=lambda x: (-x.time_ns, x.name)), kernel_ns=kernel_ns,
                      steps=0, step_flops=[], step_ms=[])
    out = merged.to_json()
    weights = [(r["mfu_pct"], r.get("devices") or 0) for _, r in active if r.get("mfu_pct") is not None]
    devices = sum(w for _, w in weights)
    out["mfu_pct"] = round(sum(m * w for m, w in weights) / devices, 2) if devices else None
    out["mfu_upper_bound"] = any(r.get("mfu_upper_bound") for _, r in active)
    bases = {r.get("mfu_basis") for _, r in active}
    out["mfu_basis"] = bases.pop() if len(bases) == 1 else "mixed"
    out["mfu_precision"] = next((r["mfu_precision"] for _, r in active if r.get("mfu_precision")), None)
    out["steps"] = sum(r.get("steps") or 0 for _, r in parts)
    out["flops_per_step"] = _sum_known([r.get("flops_per_step") for _, r in active])
    per_device = [(r.get("achieved_flops_per_s"), r.get("devices") or 0) for _, r in active]
    known = [(v, w) for v, w in per_device if v is not None and w]
    out["achieved_flops_per_s"] = (sum(v * w for v, w in known) / sum(w for _, w in known)) if known else None
    out["per_step"] = []
    out["per_host"] = [{"host": h, **{k: v for k, v in r.items() if k not in ("ops", "findings", "per_step")}}
                       for h, r in parts]
    out["findings"] = [f.to_json() for f in fd.roofline_findings(out)]
    return out


def _kernel_ns(r: Dict[str, Any]) -> int:
    """A host's device time, back from any op's time and share."""
    for o in r["ops"]:
        if o.get("time_pct"):
            return int(round(o["time_ms"] * 1e6 * 100.0 / o["time_pct"]))
    return 0


def _sum_known(values: List[Optional[float]]) -> Optional[float]:
    known = [v for v in values if v is not None]
    return sum(known) if known else None
