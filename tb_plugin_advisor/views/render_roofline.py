"""The roofline section of a report (FLOPs, MFU, ops against their roof) as text, Markdown and HTML.

The HTML export draws the roofline itself as an inline SVG (log-log, no script), so the one-file page
shows the same picture as the tab.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from tb_plugin_advisor.views.render_tables import (
    esc,
    fmt_bytes,
    html_findings,
    html_table,
    md,
    md_findings,
    md_table,
    num,
    text_findings,
    text_table,
)

HEADERS = ("op", "calls", "ms", "% time", "precision", "FLOP/byte", "achieved", "roof", "% of roof", "bound",
           "FLOPs from")
TOP_OPS = 25


def rate(value: Any) -> str:
    """FLOP/s in the unit a person reads (T/G/MFLOP/s)."""
    if value is None:
        return "—"
    v = num(value)
    for unit, size in (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9)):
        if v >= size:
            return f"{v / size:.2f} {unit}"
    return f"{v / 1e6:.2f} MFLOP/s"


def _f(value: Any, digits: int = 1) -> str:
    return "—" if value is None else f"{num(value):.{digits}f}"


def summary(r: Dict[str, Any]) -> Optional[str]:
    if not r or not r.get("ops_with_flops"):
        return None
    acc = r.get("accelerator") or {}
    total = num(r.get("flops_total")) / 1e12
    parts = [f"{r['ops_with_flops']} ops with FLOP counts, {total:.3f} TFLOP in all"]
    if r.get("flops_per_step") is not None:
        parts.append(f"{num(r['flops_per_step']) / 1e12:.3f} TFLOP per step, "
                     f"{rate(r.get('achieved_flops_per_s'))} per device")
    if r.get("mfu_pct") is not None:
        basis = "" if r.get("mfu_basis", "steps") == "steps" else f", over the {r.get('mfu_basis')}"
        bound = "at most " if r.get("mfu_upper_bound") else ""
        precision = r.get("mfu_precision")
        parts.append(f"MFU {bound}{num(r['mfu_pct']):.1f} % of the {acc.get('name')} {precision} peak "
                     f"({rate((acc.get('peak_flops') or {}).get(precision))}{basis})")
    elif r.get("device_model") and not acc:
        parts.append(f"no peak known for {r['device_model']}: FLOP/s without roofs")
    sources = r.get("flops_sources") or {}
    if sources:
        parts.append("FLOPs from " + ", ".join(f"{k} ({v} calls)" for k, v in sources.items()))
    return "; ".join(parts)


def rows(r: Dict[str, Any], limit: int = TOP_OPS) -> List[List[str]]:
    return [[str(o["name"]), str(o.get("calls", "")), _f(o.get("time_ms"), 3), _f(o.get("time_pct")),
             _precision(o),
             _f(o.get("intensity_flops_per_byte"), 2),
             ("≤ " if o.get("flops_upper_bound") else "") + rate(o.get("achieved_flops_per_s")),
             rate(o.get("roof_flops_per_s")), _f(o.get("roof_pct")), str(o.get("bound") or "—"),
             str(o.get("source") or "")] for o in (r.get("ops") or [])[:limit]]


def _precision(o: Dict[str, Any]) -> str:
    known = o.get("precision_source")
    suffix = " (assumed)" if known == "assumed" else " (inferred)" if known and known != "dtype" else ""
    return str(o.get("precision") or "—") + suffix


def text(report: Dict[str, Any], width: int = 100) -> List[str]:
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return []
    return ["", "Roofline and MFU:", f"  {line}"] + text_findings(r) + text_table(HEADERS, rows(r),
                                                                                max(24, width - 110))


def markdown(report: Dict[str, Any]) -> List[str]:
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return []
    found = md_findings(r)
    return ["", "## Roofline and MFU", "", md(line), ""] + found + ([""] if found else []) + md_table(
        HEADERS, rows(r))


def roofline_svg(r: Dict[str, Any], width: int = 640, height: int = 320) -> str:
    """Log-log chart: the roofs of the MFU precision's peak and the memory bandwidth, ops as points."""
    acc = r.get("accelerator") or {}
    ops = [o for o in r.get("ops") or []
           if o.get("intensity_flops_per_byte") and o.get("achieved_flops_per_s")]
    peak = (acc.get("peak_flops") or {}).get(r.get("mfu_precision") or "")
    bandwidth = acc.get("memory_bandwidth")
    if not ops or not peak or not bandwidth:
        return ""
    xs = [math.log10(num(o["intensity_flops_per_byte"])) for o in ops] + [math.log10(peak / bandwidth)]
    ys = [math.log10(num(o["achieved_flops_per_s"])) for o in ops] + [math.log10(peak)]
    x0, x1 = math.floor(min(xs)) - 1, math.ceil(max(xs)) + 1
    y0, y1 = math.floor(min(ys)) - 1, math.ceil(max(ys)) + 0.3

    def px(lx: float) -> float:
        return (lx - x0) / (x1 - x0) * width

    def py(ly: float) -> float:
        return height - (ly - y0) / (y1 - y0) * height

    ridge = math.log10(peak / bandwidth)
    roof = (f"{px(x0):.1f},{py(x0 + math.log10(bandwidth)):.1f} {px(ridge):.1f},{py(math.log10(peak)):.1f} "
            f"{px(x1):.1f},{py(math.log10(peak)):.1f}")
    dots = "".join(_dot(o, px, py) for o in ops)
    return (f'<svg role="img" aria-label="roofline" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}"><polyline fill="none" stroke="#555" stroke-width="1.5" '
            f'points="{roof}"/>{dots}</svg>'
            f'<div class="muted">log-log: FLOP/byte 1e{x0} to 1e{x1} across, FLOP/s up; the roof is '
            f"{esc(rate(peak))} ({esc(r.get('mfu_precision'))}) and {esc(fmt_bytes(bandwidth))}/s; "
            "red: memory-bound, blue: compute-bound</div>")


def _dot(o: Dict[str, Any], px, py) -> str:
    intensity, achieved = num(o["intensity_flops_per_byte"]), num(o["achieved_flops_per_s"])
    colour = "#c62828" if o.get("bound") == "memory" else "#1565c0"
    tip = f"{o['name']}: {rate(achieved)}, {intensity:.2f} FLOP/byte"
    return (f'<circle cx="{px(math.log10(intensity)):.1f}" cy="{py(math.log10(achieved)):.1f}" r="4" '
            f'fill="{colour}"><title>{esc(tip)}</title></circle>')


def html(report: Dict[str, Any]) -> str:
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return ""
    return (f'<h2 id="roofline">Roofline and MFU</h2><p>{esc(line)}</p>{roofline_svg(r)}{html_findings(r)}'
            + html_table(HEADERS, rows(r, TOP_OPS * 2), name_cols=(0, 4, 9, 10)))
