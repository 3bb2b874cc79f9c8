"""The collectives section of a report as text, Markdown and HTML (registered in deep.py's section tables)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tb_plugin_advisor.formatting import fixed
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.tables import (
    fmt_bytes,
    html_findings,
    html_table,
    md_findings,
    md_table,
    num,
    text_findings,
    text_table,
)

HEADERS = ("collective", "calls", "ms/step", "exposed ms/step", "hidden %", "mean message", "algbw GB/s",
           "busbw GB/s")


def _f(value: Any, digits: int = 2) -> str:
    return "—" if value is None else fixed(num(value), digits)


def summary(c: Dict[str, Any]) -> Optional[str]:
    if not c or not c.get("calls"):
        return None
    parts = [f"{c['calls']} collective calls, {fixed(num(c.get('total_ms')), 2)} ms"]
    if c.get("per_step_ms") is not None:
        share = c.get("exposed_step_pct")
        parts.append(f"{fixed(num(c['per_step_ms']), 2)} ms per step and device, "
                     f"{fixed(num(c.get('exposed_per_step_ms')), 2)} ms of it exposed"
                     + (f" ({fixed(num(share), 1)} % of the step)" if share is not None else ""))
    if c.get("hidden_pct") is not None:
        parts.append(f"{fixed(num(c['hidden_pct']), 0)} % hidden behind compute")
    skew = c.get("skew") or {}
    if skew:
        parts.append(f"slowest rank {skew['slowest']} computes {_f(skew.get('compute_skew_pct'), 0)} % more "
                     f"than the median of {skew['ranks']}")
    return "; ".join(parts)


def rows(c: Dict[str, Any]) -> List[List[str]]:
    return [[str(t["type"]).replace("_", "-"), str(t.get("calls", "")), _f(t.get("per_step_ms"), 3),
             _f(t.get("exposed_per_step_ms"), 3), _f(t.get("hidden_pct"), 0),
             fmt_bytes(t.get("mean_message_bytes")) if t.get("mean_message_bytes") is not None else "—",
             _f(t.get("algbw_gbps")), _f(t.get("busbw_gbps"))] for t in c.get("types") or []]


def text(report: Dict[str, Any], width: int = 100) -> List[str]:
    c = report.get("collectives") or {}
    line = summary(c)
    if not line:
        return []
    return ["", "Collectives:", f"  {line}"] + text_findings(c) + text_table(HEADERS, rows(c), 16)


def markdown(report: Dict[str, Any]) -> List[str]:
    c = report.get("collectives") or {}
    line = summary(c)
    if not line:
        return []
    found = md_findings(c)
    head = ["", "## Collectives", "", md(line), ""] + found + ([""] if found else [])
    return head + md_table(HEADERS, rows(c))


def html(report: Dict[str, Any], charts: bool = False) -> str:
    c = report.get("collectives") or {}
    line = summary(c)
    if not line:
        return ""
    return (f'<h2 id="collectives">Collectives</h2><p>{esc(line)}</p>{html_findings(c)}'
            + html_table(HEADERS, rows(c)))
