"""The per-host table of a multi-host report (step time, input wait, device use, stragglers) as text,
Markdown and HTML; render.py places it. Older reports without those columns still render."""

from __future__ import annotations

from typing import Any, Dict, List

from tb_plugin_advisor.formatting import fixed
from tb_plugin_advisor.views.export.markup import html_escape as esc


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _row(h: Dict[str, Any]) -> List[str]:
    step = h.get("step_time_ms")
    if step is None:
        step = (h.get("steps") or {}).get("mean_ms")
    input_pct = h.get("input_pct")
    if input_pct is None:
        input_pct = (h.get("breakdown_pct") or {}).get("input")
    util = h.get("device_util_pct")
    return [
        str(h.get("host", "")),
        f"{fixed(_num(step), 2)}",
        f"{fixed(_num(input_pct), 1)}",
        "-" if util is None else f"{fixed(_num(util), 1)}",
        "STRAGGLER" if h.get("straggler") else "",
        str((h.get("verdict") or {}).get("summary", "")),
    ]


HEADER = ["host", "step ms", "input %", "device %", "", "verdict"]


def stragglers_lines(report: Dict[str, Any]) -> List[str]:
    return [str(s.get("message", "")) for s in report.get("stragglers") or []]


def hosts_text(report: Dict[str, Any]) -> List[str]:
    per_host = report.get("per_host") or []
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


def hosts_markdown(report: Dict[str, Any], escape) -> List[str]:
    per_host = report.get("per_host") or []
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


def hosts_html(report: Dict[str, Any]) -> List[str]:
    per_host = report.get("per_host") or []
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
