"""The roofline section of a report as text, Markdown and HTML (registered in deep.py's section tables).

The summary names the device (an AMD one by product and gfx target, never a "compute capability"),
the model FLOPs per step and what share of compute time has known FLOPs — the share the MFU covers —
and the ops whose time no rule costs."""

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
TOP_UNCOSTED = 5  # ops named in the "no known FLOPs" line


def _f(value: Any, digits: int = 2) -> str:
    return "—" if value is None else fixed(num(value), digits)


def _g(value: Any, digits: int = 2) -> str:
    """`digits` decimals, or two significant digits under 0.1 so that a tiny MFU does not read as 0."""
    v = num(value)
    return significant(v, 2) if 0 < abs(v) < 0.1 else fixed(v, digits)


def _gflop(value: Any) -> str:
    return f"{significant(num(value) / 1e9, 4)} GFLOP"


def device_name(r: Dict[str, Any]) -> str:
    """The costed device as a person reads it: "AMD Instinct MI300X (gfx942)"."""
    name = str(r.get("device") or r.get("device_model") or "unknown")
    return f"{name} ({r['gfx_target']})" if r.get("gfx_target") else name


def _peaks(r: Dict[str, Any]) -> str:
    if r.get("cpu_only"):
        return "CPU only: no CPU peak is known, so no roof and no MFU"
    if r.get("peak_tflops") is not None:
        return (f"{device_name(r)}: {_f(r['peak_tflops'], 1)} TFLOP/s {r['peak_precision']} peak, "
                f"{_f(r.get('bandwidth_gbps'), 0)} GB/s, "
                f"ridge {_f(r.get('ridge_flops_per_byte'), 1)} FLOP/byte")
    return f"device {device_name(r)} is not in the peak table: no roof, no MFU"


def _achieved(r: Dict[str, Any]) -> str:
    basis = "per step" if r.get("basis") == "steps" else "over the span of the costed ops (no steps)"
    where = "on the CPU" if r.get("cpu_only") else "per device"
    line = f"{_g(r['achieved_tflops'])} TFLOP/s of model FLOPs {where} {basis}"
    if r.get("model_flops_per_step") is not None:
        line += f" ({_gflop(r['model_flops_per_step'])} per step)"
    if r.get("mfu_pct") is not None:
        line += (f", MFU {_g(r['mfu_pct'], 1)} % over the {_f(r.get('costed_time_pct'), 0)} % of compute "
                 "time with known FLOPs")
        if r.get("mfu_lower_bound"):
            line += " (a lower bound: most compute time has no known FLOPs)"
    return line


def summary(r: Dict[str, Any]) -> Optional[str]:
    if not r or not r.get("ops"):
        return None
    what = "op time on the CPU" if r.get("cpu_only") else "compute time"
    parts = [f"{r.get('ops_with_flops', 0)} ops with known FLOPs ({', '.join(r.get('sources') or [])}), "
             f"{_f(r.get('costed_time_pct'), 0)} % of {what}", _peaks(r)]
    if r.get("achieved_tflops") is not None:
        parts.append(_achieved(r))
    elif r.get("mfu_impossible"):
        parts.append(IMPOSSIBLE)
    return "; ".join(parts)


IMPOSSIBLE = ("no FLOP rate or MFU: the FLOPs counted would run the device above its fastest peak, which "
              "is impossible (the recorded shapes or FLOP counts are wrong)")


def uncosted_line(r: Dict[str, Any]) -> Optional[str]:
    """The largest ops whose time no rule costs (what the MFU leaves out)."""
    ops = (r.get("uncosted_ops") or [])[:TOP_UNCOSTED]
    if not ops or not r.get("ops"):
        return None
    listed = ", ".join(f"{op['name']} {_f(op.get('time_pct'), 1)} %" for op in ops)
    what = "op time on the CPU" if r.get("cpu_only") else "compute time"
    return f"No known FLOPs (share of {what}): {listed}"


def rows(r: Dict[str, Any]) -> List[List[str]]:
    return [[str(op["name"]), str(op.get("source", "")), str(op.get("precision", "")),
             str(op.get("calls", "")),
             _f(op.get("total_ms"), 3), _f(op.get("time_pct"), 1), _f(op.get("intensity"), 2),
             _f(op.get("achieved_tflops"), 3), _f(op.get("achieved_gbps"), 1),
             op.get("bound") or ("impossible" if op.get("impossible") else "—"),
             _f(op.get("roof_pct"), 1)] for op in (r.get("ops") or [])[:TOP_OPS]]


def text(report: Dict[str, Any], width: int = 100) -> List[str]:
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return []
    uncosted = uncosted_line(r)
    return (["", "Roofline:", f"  {line}"] + ([f"  {uncosted}"] if uncosted else []) + text_findings(r)
            + text_table(HEADERS, rows(r), max(24, width - 80)))


def markdown(report: Dict[str, Any]) -> List[str]:
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return []
    found = md_findings(r)
    source = [f"Peaks: {md(r['peaks_source'])}", ""] if r.get("peaks_source") else []
    uncosted = uncosted_line(r)
    head = (["", "## Roofline", "", md(line), ""] + ([md(uncosted), ""] if uncosted else []) + source + found
            + ([""] if found else []))
    return head + md_table(HEADERS, rows(r), numeric_from=3)


def html(report: Dict[str, Any], charts: bool = False) -> str:
    """The section; with `charts`, followed by the tab's roofline chart (drawn by the embedded
    bundle) when an op can sit on it."""
    r = report.get("roofline") or {}
    line = summary(r)
    if not line:
        return ""
    source = (f'<p class="muted">Peaks from {esc(r["peaks_source"])}</p>' if r.get("peaks_source") else "")
    uncosted = uncosted_line(r)
    extra = f'<p class="muted">{esc(uncosted)}</p>' if uncosted else ""
    return (f'<h2 id="roofline">Roofline</h2><p>{esc(line)}</p>{extra}{source}{html_findings(r)}'
            + html_table(HEADERS, rows(r)) + (_chart(r) if charts else ""))


def _chart(r: Dict[str, Any]) -> str:
    placed = [op for op in r.get("ops") or []
              if (op.get("intensity") or 0) > 0 and (op.get("achieved_tflops") or 0) > 0]
    return chart_canvas("roofline") if placed and r.get("roofs") and r.get("bandwidth_gbps") else ""
