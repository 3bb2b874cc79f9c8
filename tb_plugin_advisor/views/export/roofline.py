"""The roofline section of a report as text, Markdown and HTML (registered in deep.py's section tables)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tb_plugin_advisor.formatting import fixed, significant
from tb_plugin_advisor.views.export.charts import chart_canvas
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.tables import (
    html_findings,
    html_table,
    md_findings,
    md_table,
    num,
    text_findings,
    text_table,
)

HEADERS = ("op", "source", "precision", "calls", "ms", "time %", "FLOP/byte", "TFLOP/s", "GB/s", "bound",
           "% of roof")
TOP_OPS = 25  # rows in the exports (the JSON holds up to findings.ROOFLINE_TOP_OPS)


def _f(value: Any, digits: int = 2) -> str:
    return "—" if value is None else fixed(num(value), digits)


def _g(value: Any, digits: int = 2) -> str:
    """`digits` decimals, or two significant digits under 0.1 so that a tiny MFU does not read as 0."""
    v = num(value)
    return significant(v, 2) if 0 < abs(v) < 0.1 else fixed(v, digits)


def summary(r: Dict[str, Any]) -> Optional[str]:
    if not r or not r.get("ops"):
        return None
    parts = [f"{r.get('ops_with_flops', 0)} ops with known FLOPs ({', '.join(r.get('sources') or [])}), "
             f"{_f(r.get('costed_time_pct'), 0)} % of compute time"]
    if r.get("peak_tflops") is not None:
        parts.append(f"{r['device']}: {_f(r['peak_tflops'], 1)} TFLOP/s {r['peak_precision']} peak, "
                     f"{_f(r.get('bandwidth_gbps'), 0)} GB/s, ridge {_f(r.get('ridge_flops_per_byte'), 1)} "
                     "FLOP/byte")
    else:
        parts.append(f"device {r.get('device_model') or 'unknown'} is not in the peak table: no roof, no MFU")
    if r.get("achieved_tflops") is not None:
        basis = "per step" if r.get("basis") == "steps" else "over the span of the costed ops (no steps)"
        mfu = f", MFU {_g(r['mfu_pct'], 1)} %" if r.get("mfu_pct") is not None else ""
        if mfu and r.get("mfu_lower_bound"):
            mfu += " (a lower bound: most compute time has no known FLOPs)"
        parts.append(f"{_g(r['achieved_tflops'])} TFLOP/s of model FLOPs per device {basis}{mfu}")
    return "; ".join(parts)


def rows(r: Dict[str, Any]) -> List[List[str]]:
    return [[str(op["name"]), str(op.get("source", "")), str(op.get("precision", "")),
             str(op.get("calls", "")),
             _f(op.get("total_ms"), 3), _f(op.get("time_pct"), 1), _f(op.get("intensity"), 2),
             _f(op.get("achieved_tflops"), 3), _f(op.get("achieved_gbps"), 1), op.get("bound") or "—",
             _f(op.get("roof_pct"), 1)] for op in (r.get("ops") or [])[:TOP_OPS]]


def text(report: Dict[str, Any], width: int = 100) -> List[str]:
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return []
    return (["", "Roofline:", f"  {line}"] + text_findings(r)
            + text_table(HEADERS, rows(r), max(24, width - 80)))


def markdown(report: Dict[str, Any]) -> List[str]:
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return []
    found = md_findings(r)
    source = [f"Peaks: {md(r['peaks_source'])}", ""] if r.get("peaks_source") else []
    head = ["", "## Roofline", "", md(line), ""] + source + found + ([""] if found else [])
    return head + md_table(HEADERS, rows(r), numeric_from=3)


def html(report: Dict[str, Any], charts: bool = False) -> str:
    """The section; with `charts`, followed by the tab's roofline chart (drawn by the embedded
    bundle) when an op can sit on it."""
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return ""
    source = (f'<p class="muted">Peaks from {esc(r["peaks_source"])}</p>' if r.get("peaks_source") else "")
    return (f'<h2 id="roofline">Roofline</h2><p>{esc(line)}</p>{source}{html_findings(r)}'
            + html_table(HEADERS, rows(r)) + (_chart(r) if charts else ""))


def _chart(r: Dict[str, Any]) -> str:
    placed = [op for op in r.get("ops") or []
              if (op.get("intensity") or 0) > 0 and (op.get("achieved_tflops") or 0) > 0]
    return chart_canvas("roofline") if placed and r.get("roofs") and r.get("bandwidth_gbps") else ""
