"""The deeper views of a diff (memory, kernel statistics …) as format-neutral tables: a title, headers and
rows of strings that views/export/diff.py lays out as text, Markdown or HTML like its other tables.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from tb_plugin_advisor.formatting import fixed, format_bytes

Table = Tuple[str, List[str], List[List[str]]]


def _fmt(value: Optional[float], unit: str = "", digits: int = 1) -> str:
    if value is None:
        return "—"
    if unit == "B":
        return format_bytes(value, 2)
    return f"{fixed(value, digits)}{unit}"


def _signed(value: Optional[float], unit: str = "", digits: int = 1) -> str:
    if value is None:
        return "—"
    text = _fmt(abs(value), unit, digits)
    return ("+" if value >= 0 else "\u2212") + text


def _row(label: str, pair: Dict[str, Any], unit: str = "", digits: int = 1) -> List[str]:
    return [label, _fmt(pair.get("baseline"), unit, digits), _fmt(pair.get("candidate"), unit, digits),
            _signed(pair.get("delta"), unit, digits)]


def deep_tables(diff: Dict[str, Any]) -> List[Table]:
    tables: List[Table] = []
    m = diff.get("memory") or {}
    if m.get("baseline_allocator") or m.get("candidate_allocator"):
        names = [str(m.get(k) or "—") for k in ("baseline_allocator", "candidate_allocator")]
        rows = [["allocator", *names, ""],
                _row("peak", m["peak_bytes"], "B"), _row("live at the peak", m["live_at_peak_bytes"], "B"),
                _row("headroom %", m["headroom_pct"], "", 1)]
        moved = [(k, v) for k, v in m["by_dtype_delta_bytes"].items() if v]
        rows += [[f"live {k} at the peak", "", "", _signed(v, "B")] for k, v in moved]
        tables.append(("Memory (main allocator)", ["", "baseline", "candidate", "delta"], rows))
    ks = diff.get("kernel_stats") or {}
    distinct = ks.get("distinct") or {}
    if (distinct.get("baseline") or 0) > 0 or (distinct.get("candidate") or 0) > 0:
        rows = [_row("launches per step", ks["launches_per_step"], "", 0),
                _row("distinct kernels", ks["distinct"], "", 0),
                _row("occupancy % (time-weighted)", ks["occupancy_pct"]),
                _row("launches under 10 µs %", ks["tiny_launch_pct"]),
                _row("kernel time on Tensor Cores %", ks["tensor_core_time_pct"])]
        for r in ks.get("occupancy_changes") or []:
            rows.append([f"occupancy % of {r['name']}", _fmt(r["baseline"]), _fmt(r["candidate"]),
                         _signed(r["delta"])])
        tables.append(("Kernel statistics", ["", "baseline", "candidate", "delta"], rows))
    co = diff.get("collectives") or {}
    if co:
        rows = [_row("collectives ms per step", co["per_step_ms"], "", 2),
                _row("exposed ms per step", co["exposed_per_step_ms"], "", 2),
                _row("hidden behind compute %", co["hidden_pct"]),
                _row("exposed % of the step", co["exposed_step_pct"])]
        for t in co.get("types") or []:
            rows.append(_row(f"{t['type']} exposed ms per step", t["exposed_per_step_ms"], "", 2))
            if t["busbw_gbps"]["baseline"] is not None or t["busbw_gbps"]["candidate"] is not None:
                rows.append(_row(f"{t['type']} bus bandwidth GB/s", t["busbw_gbps"]))
        tables.append(("Collectives", ["", "baseline", "candidate", "delta"], rows))
    r = diff.get("roofline") or {}
    mfu = r.get("mfu_pct") or {}
    if mfu.get("baseline") is not None or mfu.get("candidate") is not None:
        names = [str(r.get(k) or "—") for k in ("baseline_device", "candidate_device")]
        rows = [["device (peaks)", *names, ""],
                _row("MFU %", mfu, "", 2),
                _row("achieved TFLOP/s per device", r["achieved_tflops"], "", 3),
                _row("model GFLOP per step", _scaled(r["model_flops_per_step"], 1e-9), "", 1),
                _row("step ms", r["step_ms"], "", 2),
                _row("compute time with known FLOPs %", r["costed_time_pct"])]
        for o in r.get("op_changes") or []:
            rows.append([f"TFLOP/s of {o['name']}", _fmt(o["baseline"], "", 3), _fmt(o["candidate"], "", 3),
                         _signed(o["delta"], "", 3)])
        tables.append(("Roofline", ["", "baseline", "candidate", "delta"], rows))
    return tables


def _scaled(pair: Dict[str, Any], factor: float) -> Dict[str, Any]:
    keys = ("baseline", "candidate", "delta")
    return {k: (None if pair.get(k) is None else pair[k] * factor) for k in keys}
