"""Table and finding layout shared by the deeper-view sections (deep.py, collectives.py,
roofline.py): plain text columns, Markdown tables and HTML tables, every profile string escaped
(markup.py's escapers).
"""

from __future__ import annotations

from typing import List, Optional, Sequence

from tb_plugin_advisor.formatting import fixed, format_bytes
from tb_plugin_advisor.report.document import Advice
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.report_lines import span_lines


def fmt_bytes(value: Optional[float]) -> str:
    return "—" if value is None else format_bytes(value, 2)


def opt(value: Optional[float], digits: int = 1, none: str = "—") -> str:
    return none if value is None else fixed(value, digits)


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


def text_findings(findings: Sequence[Advice]) -> List[str]:
    out = []
    for f in findings:
        out.append(f"  [{f.severity.upper()}] {f.title}  ({f.id})")
        for text in (f.message, f.evidence):
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


def md_findings(findings: Sequence[Advice]) -> List[str]:
    out = []
    for f in findings:
        out.append(f"- **{md(f.title)}** ({md(f.severity)}, `{f.id}`): {md(f.message)} "
                   f"Evidence: {md(f.evidence)}")
        out += [f"  - In the trace: {md(line)}" for line in span_lines(f)]
    return out


def html_table(headers: Sequence[str], rows: List[List[str]], name_cols: Sequence[int] = (0,),
               titles: Optional[Sequence[str]] = None) -> str:
    """A table; `titles`: each row's full name, shown on hover over its first cell (the cell shows the
    short name)."""
    def cls(i: int) -> str:
        return "name" if i in name_cols else "n"

    def cell(row: int, i: int, text: str) -> str:
        title = f' title="{esc(titles[row])}"' if titles is not None and i == 0 else ""
        return f'<td class="{cls(i)}"{title}>{esc(text)}</td>'

    head = "".join(f'<th class="{cls(i)}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(cell(n, i, c) for i, c in enumerate(r)) + "</tr>"
        for n, r in enumerate(rows))
    return f"<table><tr>{head}</tr>{body}</table>"


def html_findings(findings: Sequence[Advice]) -> str:
    return "".join(
        f'<div class="rec" style="--c:#ef6c00"><span class="sev">{esc(f.severity)}</span> '
        f"<b>{esc(f.title)}</b> <code>{esc(f.id)}</code>"
        f"<p>{esc(f.message)}</p>"
        f'<p class="muted">{esc(f.evidence)}</p>{_html_spans(f)}</div>'
        for f in findings)


def _html_spans(finding: Advice) -> str:
    lines = span_lines(finding)
    if not lines:
        return ""
    items = "".join(f"<li>{esc(x)}</li>" for x in lines)
    return f'<p class="muted">In the trace:</p><ul class="spans">{items}</ul>'
