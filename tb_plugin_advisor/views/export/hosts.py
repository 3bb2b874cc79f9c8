"""The per-host table of a multi-host report (step time, input wait, device use, stragglers) as text,
Markdown and HTML; render.py places it. Older reports without those columns still render."""

from __future__ import annotations

from typing import Callable, List

from tb_plugin_advisor.formatting import fixed
from tb_plugin_advisor.report.document import HostRow, ReportDocument
from tb_plugin_advisor.views.export.markup import html_escape as esc


def _row(h: HostRow) -> List[str]:
    util = h.device_util_pct
    return [
        h.host,
        f"{fixed(h.step_ms or 0.0, 2)}",
        f"{fixed(h.input_share_pct or 0.0, 1)}",
        "-" if util is None else f"{fixed(util, 1)}",
        "STRAGGLER" if h.straggler else "",
        h.verdict.summary,
    ]


HEADER = ["host", "step ms", "input %", "device %", "", "verdict"]


def stragglers_lines(report: ReportDocument) -> List[str]:
    return [s.message for s in report.stragglers]


def hosts_text(report: ReportDocument) -> List[str]:
    per_host = report.per_host
    if not per_host:
        return []
    rows = [_row(h) for h in per_host]
    width = max(len(HEADER[0]), *(len(r[0]) for r in rows))
    out = ["", "Per host:"]
    out.append(f"  {HEADER[0]:<{width}} {HEADER[1]:>9} {HEADER[2]:>8} {HEADER[3]:>9}  {'':9}  verdict")
    for r in rows:
        out.append(f"  {r[0]:<{width}} {r[1]:>9} {r[2]:>8} {r[3]:>9}  {r[4]:9}  {r[5]}")
    stragglers = stragglers_lines(report)
    if stragglers:
        out += ["", "Stragglers (vs the median host):"] + [f"  - {s}" for s in stragglers]
    return out


def hosts_markdown(report: ReportDocument, escape: Callable[[str], str]) -> List[str]:
    per_host = report.per_host
    if not per_host:
        return []
    out = [
        "",
        "## Per host",
        "",
        "| host | step ms | input % | device % | straggler | verdict |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in (_row(h) for h in per_host):
        out.append("| " + " | ".join(escape(c) for c in r) + " |")
    stragglers = stragglers_lines(report)
    if stragglers:
        out += ["", "**Stragglers** (vs the median host):", ""] + [f"- {escape(s)}" for s in stragglers]
    return out


def hosts_html(report: ReportDocument) -> List[str]:
    per_host = report.per_host
    if not per_host:
        return []
    e = esc
    body = [
        "<h2>Per host</h2><table><tr><th>Host</th><th>Step ms</th><th>Input %</th><th>Device %</th>"
        "<th>Straggler</th><th>Verdict</th></tr>"
    ]
    for r in (_row(h) for h in per_host):
        body.append(
            f'<tr><td>{e(r[0])}</td><td class="n">{e(r[1])}</td><td class="n">{e(r[2])}</td>'
            f'<td class="n">{e(r[3])}</td><td><b>{e(r[4])}</b></td><td>{e(r[5])}</td></tr>'
        )
    body.append("</table>")
    stragglers = stragglers_lines(report)
    if stragglers:
        body.append("<p><b>Stragglers</b> (vs the median host):</p><ul>")
        body += [f"<li>{e(s)}</li>" for s in stragglers]
        body.append("</ul>")
    return body
