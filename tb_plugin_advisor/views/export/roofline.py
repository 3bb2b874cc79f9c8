"""The roofline section of a report as text, Markdown and HTML (registered in deep.py's section tables).

The summary names the device (an AMD one by product and gfx target, never a "compute capability"),
the model FLOPs per step and what share of compute time has known FLOPs — the share the MFU covers —
and the ops whose time no rule costs."""

from __future__ import annotations

from typing import List, Optional

from tb_plugin_advisor.formatting import fixed, significant
from tb_plugin_advisor.report.document import ReportDocument, Roofline
from tb_plugin_advisor.views.export.charts import chart_canvas
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.tables import (
    html_findings,
    html_table,
    md_findings,
    md_table,
    opt,
    text_findings,
    text_table,
)

HEADERS = ("op", "source", "precision", "calls", "ms", "time %", "FLOP/byte", "TFLOP/s", "GB/s", "bound",
           "% of roof")
TOP_OPS = 25  # rows in the exports (the JSON holds up to findings.ROOFLINE_TOP_OPS)
TOP_UNCOSTED = 5  # ops named in the "no known FLOPs" line


def _g(value: Optional[float], digits: int = 2) -> str:
    """`digits` decimals, or two significant digits under 0.1 so that a tiny MFU does not read as 0."""
    v = value or 0.0
    return significant(v, 2) if 0 < abs(v) < 0.1 else fixed(v, digits)


def _gflop(value: Optional[float]) -> str:
    return f"{significant((value or 0.0) / 1e9, 4)} GFLOP"


def device_name(r: Roofline) -> str:
    """The costed device as a person reads it: "AMD Instinct MI300X (gfx942)"."""
    name = r.device or r.device_model or "unknown"
    return f"{name} ({r.gfx_target})" if r.gfx_target else name


def _peaks(r: Roofline) -> str:
    if r.cpu_only:
        return "CPU only: no CPU peak is known, so no roof and no MFU"
    if r.peak_tflops is not None:
        return (f"{device_name(r)}: {opt(r.peak_tflops, 1)} TFLOP/s {r.peak_precision} peak, "
                f"{opt(r.bandwidth_gbps, 0)} GB/s, "
                f"ridge {opt(r.ridge_flops_per_byte, 1)} FLOP/byte")
    return f"device {device_name(r)} is not in the peak table: no roof, no MFU"


def _achieved(r: Roofline) -> str:
    basis = "per step" if r.basis == "steps" else "over the span of the costed ops (no steps)"
    where = "on the CPU" if r.cpu_only else "per device"
    line = f"{_g(r.achieved_tflops)} TFLOP/s of model FLOPs {where} {basis}"
    if r.model_flops_per_step is not None:
        line += f" ({_gflop(r.model_flops_per_step)} per step)"
    if r.mfu_pct is not None:
        line += (f", MFU {_g(r.mfu_pct, 1)} % over the {opt(r.costed_time_pct, 0)} % of compute "
                 "time with known FLOPs")
        if r.mfu_lower_bound:
            line += " (a lower bound: most compute time has no known FLOPs)"
    return line


def summary(r: Roofline) -> Optional[str]:
    if not r.ops:
        return None
    what = "op time on the CPU" if r.cpu_only else "compute time"
    with_flops = 0 if r.ops_with_flops is None else r.ops_with_flops
    parts = [f"{with_flops} ops with known FLOPs ({', '.join(r.sources)}), "
             f"{opt(r.costed_time_pct, 0)} % of {what}", _peaks(r)]
    if r.achieved_tflops is not None:
        parts.append(_achieved(r))
    elif r.mfu_impossible:
        parts.append(IMPOSSIBLE)
    return "; ".join(parts)


IMPOSSIBLE = ("no FLOP rate or MFU: the FLOPs counted would run the device above its fastest peak, which "
              "is impossible (the recorded shapes or FLOP counts are wrong)")


def uncosted_line(r: Roofline) -> Optional[str]:
    """The largest ops whose time no rule costs (what the MFU leaves out)."""
    ops = r.uncosted_ops[:TOP_UNCOSTED]
    if not ops or not r.ops:
        return None
    listed = ", ".join(f"{op.name} {opt(op.time_pct, 1)} %" for op in ops)
    what = "op time on the CPU" if r.cpu_only else "compute time"
    return f"No known FLOPs (share of {what}): {listed}"


def rows(r: Roofline) -> List[List[str]]:
    return [[op.name, op.source, op.precision, "" if op.calls is None else str(op.calls),
             opt(op.total_ms, 3), opt(op.time_pct, 1), opt(op.intensity, 2),
             opt(op.achieved_tflops, 3), opt(op.achieved_gbps, 1),
             op.bound or ("impossible" if op.impossible else "—"),
             opt(op.roof_pct, 1)] for op in r.ops[:TOP_OPS]]


def text(report: ReportDocument, width: int = 100) -> List[str]:
    r = report.roofline
    line = summary(r)
    if not line:
        return []
    uncosted = uncosted_line(r)
    return (["", "Roofline:", f"  {line}"] + ([f"  {uncosted}"] if uncosted else [])
            + text_findings(r.findings) + text_table(HEADERS, rows(r), max(24, width - 80)))


def markdown(report: ReportDocument) -> List[str]:
    r = report.roofline
    line = summary(r)
    if not line:
        return []
    found = md_findings(r.findings)
    source = [f"Peaks: {md(r.peaks_source)}", ""] if r.peaks_source else []
    uncosted = uncosted_line(r)
    head = (["", "## Roofline", "", md(line), ""] + ([md(uncosted), ""] if uncosted else []) + source + found
            + ([""] if found else []))
    return head + md_table(HEADERS, rows(r), numeric_from=3)


def html(report: ReportDocument, charts: bool = False) -> str:
    """The section; with `charts`, followed by the tab's roofline chart (drawn by the embedded
    bundle) when an op can sit on it."""
    r = report.roofline
    line = summary(r)
    if not line:
        return ""
    source = f'<p class="muted">Peaks from {esc(r.peaks_source)}</p>' if r.peaks_source else ""
    uncosted = uncosted_line(r)
    extra = f'<p class="muted">{esc(uncosted)}</p>' if uncosted else ""
    return (f'<h2 id="roofline">Roofline</h2><p>{esc(line)}</p>{extra}{source}{html_findings(r.findings)}'
            + html_table(HEADERS, rows(r)) + (_chart(r) if charts else ""))


def _chart(r: Roofline) -> str:
    placed = [op for op in r.ops if (op.intensity or 0) > 0 and (op.achieved_tflops or 0) > 0]
    return chart_canvas("roofline") if placed and r.roofs and r.bandwidth_gbps else ""
