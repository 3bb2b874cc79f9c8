"""Table and finding layout shared by the deeper-view sections (deep.py, collectives.py,
roofline.py): plain text columns, Markdown tables and HTML tables, every profile string escaped
(markup.py's escapers).
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from tb_plugin_advisor.formatting import fixed, format_bytes
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.report_lines import span_lines


def num(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def fmt_bytes(value: Any) -> str:
    return "—" if value is None else format_bytes(num(value), 2)


def opt(value: Any, digits: int = 1, none: str = "—") -> str:
    return none if value is None else fixed(num(value), digits)


def findings_of(section: Dict[str, Any]) -> List[Dict[str, Any]]:
    return list((section or {}).get("findings") or [])


def text_table(headers: Sequence[str], rows: List[List[str]], name_width: int) -> List[str]:
    """First column clipped to name_width (its end kept), the others right-aligned."""
    clipped = [[clip(r[0], name_width)] + r[1:] for r in rows]
    widths = [max([len(str(h))] + [len(r[i]) for r in clipped]) for i, h in enumerate(headers)]
    widths[0] = min(widths[0], name_width)

    def row(cells: Sequence[str]) -> str:
        padded = [c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells)]
        return "  " + "  ".join(padded)

    return [row(headers)] + [row(r) for r in clipped]


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[len(text) - width + 1:]


def text_findings(section: Dict[str, Any]) -> List[str]:
    out = []
    for f in findings_of(section):
        out.append(f"  [{str(f.get('severity', '')).upper()}] {f.get('title', '')}  ({f.get('id', '')})")
        for text in (f.get("message"), f.get("evidence")):
            if text:
                out.append(f"      {text}")
        spans = span_lines(f)
        if spans:
            out += ["      In the trace:"] + [f"        {line}" for line in spans]
    return out


def md_table(headers: Sequence[str], rows: List[List[str]], numeric_from: int = 1) -> List[str]:
    align = ["---" if i < numeric_from else "---:" for i in range(len(headers))]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(md(c) for c in r) + " |" for r in rows]
    return out


def md_findings(section: Dict[str, Any]) -> List[str]:
    out = []
    for f in findings_of(section):
        out.append(f"- **{md(f.get('title', ''))}** ({md(f.get('severity', ''))}, `{f.get('id', '')}`): "
                   f"{md(f.get('message', ''))} Evidence: {md(f.get('evidence', ''))}")
        out += [f"  - In the trace: {md(line)}" for line in span_lines(f)]
    return out


def html_table(headers: Sequence[str], rows: List[List[str]], name_cols: Sequence[int] = (0,)) -> str:
    def cls(i: int) -> str:
        return "name" if i in name_cols else "n"

    head = "".join(f'<th class="{cls(i)}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="{cls(i)}">{esc(c)}</td>' for i, c in enumerate(r)) + "</tr>"
        for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def html_findings(section: Dict[str, Any]) -> str:
    return "".join(
        f'<div class="rec" style="--c:#ef6c00"><span class="sev">{esc(f.get("severity", ""))}</span> '
        f"<b>{esc(f.get('title', ''))}</b> <code>{esc(f.get('id', ''))}</code>"
        f"<p>{esc(f.get('message', ''))}</p>"
        f'<p class="muted">{esc(f.get("evidence", ""))}</p>{_html_spans(f)}</div>'
        for f in findings_of(section))


def _html_spans(finding: Dict[str, Any]) -> str:
    lines = span_lines(finding)
    if not lines:
        return ""
    items = "".join(f"<li>{esc(x)}</li>" for x in lines)
    return f'<p class="muted">In the trace:</p><ul class="spans">{items}</ul>'
