"""The per-host part of a diff (diff/hosts.py) as text, Markdown and HTML lines."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from tb_plugin_advisor.formatting import fixed, signed
from tb_plugin_advisor.views.export.markup import html_escape as esc


def _f(value: Optional[float], write: Callable[[float], str] = lambda v: fixed(v, 2)) -> str:
    return "n/a" if value is None else write(value)


def _rows(part: Dict[str, Any]) -> List[List[str]]:
    out = []
    for r in part.get("hosts") or []:
        mark = "new straggler" if r["candidate_straggler"] and not r["baseline_straggler"] else ""
        mark = mark or ("straggler" if r["candidate_straggler"] else "")
        mark = mark or ("no longer straggles" if r["baseline_straggler"] else "")
        out.append(
            [
                str(r["host"]),
                _f(r.get("baseline_step_ms")),
                _f(r.get("candidate_step_ms")),
                _f(r.get("delta_pct"), lambda v: f"{signed(v, 1)} %"),
                _f(r.get("input_delta_points"), lambda v: signed(v, 1)),
                mark,
            ]
        )
    return out


HEADER = ["host", "baseline ms", "candidate ms", "delta", "input Δ points", ""]


def _notes(part: Dict[str, Any]) -> List[str]:
    s = part.get("stragglers") or {}
    notes = []
    if s.get("new"):
        notes.append("new stragglers: " + ", ".join(s["new"]))
    if s.get("resolved"):
        notes.append("no longer straggling: " + ", ".join(s["resolved"]))
    notes += [f"candidate: {m}" for m in s.get("candidate") or []]
    return notes


def hosts_text(diff: Dict[str, Any]) -> List[str]:
    part = diff.get("per_host")
    if not part:
        return []
    rows = _rows(part)
    width = max(len(HEADER[0]), *(len(r[0]) for r in rows)) if rows else len(HEADER[0])
    out = ["Per host"]
    out.append(f"  {HEADER[0]:<{width}} {HEADER[1]:>12} {HEADER[2]:>13} {HEADER[3]:>9} {HEADER[4]:>15}")
    for r in rows:
        out.append(f"  {r[0]:<{width}} {r[1]:>12} {r[2]:>13} {r[3]:>9} {r[4]:>15}  {r[5]}")
    out += [f"  - {n}" for n in _notes(part)]
    return out + [""]


def hosts_markdown(diff: Dict[str, Any], escape: Callable[[str], str]) -> List[str]:
    part = diff.get("per_host")
    if not part:
        return []
    out = ["## Per host", "", "| " + " | ".join(HEADER[:5]) + " | |", "|---|---:|---:|---:|---:|---|"]
    out += ["| " + " | ".join(escape(c) for c in r) + " |" for r in _rows(part)]
    notes = _notes(part)
    return out + ([""] + [f"- {escape(n)}" for n in notes] if notes else []) + [""]


def hosts_html(diff: Dict[str, Any]) -> List[str]:
    part = diff.get("per_host")
    if not part:
        return []
    e = esc
    body = ["<h2>Per host</h2><table><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEADER) + "</tr>"]
    for r in _rows(part):
        cells = (
            [f"<td>{e(r[0])}</td>"] + [f'<td class="n">{e(c)}</td>' for c in r[1:5]] + [f"<td>{e(r[5])}</td>"]
        )
        body.append("<tr>" + "".join(cells) + "</tr>")
    body.append("</table>")
    notes = _notes(part)
    if notes:
        body.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    return body
