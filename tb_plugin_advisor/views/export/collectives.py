"""The collectives section of a report as text, Markdown and HTML (registered in deep.py's section tables)."""

from __future__ import annotations

from typing import List, Optional

from tb_plugin_advisor.formatting import fixed
from tb_plugin_advisor.report.document import Collectives, ReportDocument
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.tables import (
    fmt_bytes,
    html_findings,
    html_table,
    md_findings,
    md_table,
    opt,
    text_findings,
    text_table,
)

HEADERS = ("collective", "calls", "ms/step", "exposed ms/step", "hidden %", "mean message", "algbw GB/s",
           "busbw GB/s")


def summary(c: Collectives) -> Optional[str]:
    if not c.calls:
        return None
    parts = [f"{c.calls} collective calls, {fixed(c.total_ms or 0.0, 2)} ms"]
    if c.per_step_ms is not None:
        share = c.exposed_step_pct
        parts.append(f"{fixed(c.per_step_ms, 2)} ms per step and device, "
                     f"{fixed(c.exposed_per_step_ms or 0.0, 2)} ms of it exposed"
                     + (f" ({fixed(share, 1)} % of the step)" if share is not None else ""))
    if c.hidden_pct is not None:
        parts.append(f"{fixed(c.hidden_pct, 0)} % hidden behind compute")
    skew = c.skew
    if skew:
        parts.append(f"slowest rank {skew.slowest} computes {opt(skew.compute_skew_pct, 0)} % more "
                     f"than the median of {skew.ranks}")
    return "; ".join(parts)


def rows(c: Collectives) -> List[List[str]]:
    return [[t.type.replace("_", "-"), "" if t.calls is None else str(t.calls), opt(t.per_step_ms, 3),
             opt(t.exposed_per_step_ms, 3), opt(t.hidden_pct, 0), fmt_bytes(t.mean_message_bytes),
             opt(t.algbw_gbps, 2), opt(t.busbw_gbps, 2)] for t in c.types]


def text(report: ReportDocument, width: int = 100) -> List[str]:
    c = report.collectives
    line = summary(c)
    if not line:
        return []
    return ["", "Collectives:", f"  {line}"] + text_findings(c.findings) + text_table(HEADERS, rows(c), 16)


def markdown(report: ReportDocument) -> List[str]:
    c = report.collectives
    line = summary(c)
    if not line:
        return []
    found = md_findings(c.findings)
    head = ["", "## Collectives", "", md(line), ""] + found + ([""] if found else [])
    return head + md_table(HEADERS, rows(c))


def html(report: ReportDocument, charts: bool = False) -> str:
    c = report.collectives
    line = summary(c)
    if not line:
        return ""
    return (f'<h2 id="collectives">Collectives</h2><p>{esc(line)}</p>{html_findings(c.findings)}'
            + html_table(HEADERS, rows(c)))
