"""`tb-advisor report --section NAME …`: only the chosen deeper views, in any export format.

JSON keeps the report's own keys for the chosen sections (plus run, hosts and schema, so a saved file
says what it is); text, Markdown and HTML reuse the sections of the whole report (views/export/deep.py).
"""

from __future__ import annotations

import shutil
from typing import Any, Dict, List, Sequence

from tb_plugin_advisor.report.document import ReportDocument, read_report
from tb_plugin_advisor.report.sections import VIEWS
from tb_plugin_advisor.views.export import deep as render_deep
from tb_plugin_advisor.views.export.json_text import indented_json
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.markup import terminal_data, terminal_line, terminal_output
from tb_plugin_advisor.views.export.report_html import PAGE_CSS

# What a section says when the profile has nothing for it, and why that usually is.
EMPTY_SECTIONS: Dict[str, str] = {
    "kernels": "No accelerator kernels in this profile (a CPU-only run, or the GPU tracer (CUPTI) "
    "recorded none).",
    "collectives": "No collectives in this profile (no NCCL/RCCL kernels or XLA collective ops on a device).",
    "validity": "This report has no validity matrix (it was written before the Advisor measured what a "
    "trace supports).",
    "roofline": "No op with known FLOPs in this profile (XLA records cost stats on TPU op events; PyTorch "
    "needs profile(record_shapes=True) or with_flops=True for matmul/attention FLOPs).",
    "memory": "No allocator records in this profile (TensorFlow records them on its BFC allocators; "
    "PyTorch needs profile(profile_memory=True)).",
}


def _empty(names: Sequence[str]) -> List[str]:
    return [EMPTY_SECTIONS.get(n, f"No data for {n}.") for n in names]


def section_json(report: ReportDocument, names: Sequence[str]) -> Dict[str, Any]:
    """The chosen sections and what says which report they are of, exactly as the report has them."""
    out = {k: report.written(k) for k in ("schema", "run", "hosts", "host")}
    out["sections"] = list(names)
    for name in names:
        out[VIEWS[name]] = report.written(VIEWS[name])
    return out


def render_sections(report: Dict[str, Any], fmt: str, names: Sequence[str]) -> str:
    doc = read_report(report)
    run = doc.run
    if fmt == "json":
        return indented_json(section_json(doc, names), indent=1) + "\n"
    if fmt == "text":
        width = min(max(shutil.get_terminal_size((100, 24)).columns, 60), 160)
        lines = render_deep.text_sections(read_report(terminal_data(report)), width, names)
        body = lines[1:] if lines and lines[0] == "" else lines
        title = f"tb-advisor report — run {terminal_line(run)}"
        return terminal_output(title + "\n" + "\n".join(body or _empty(names)))
    if fmt == "md":
        lines = render_deep.md_sections(doc, names)
        return terminal_output(f"# Advisor report: {md(run)}\n" + "\n".join(lines or [""] + _empty(names)))
    if fmt == "html":
        e = esc
        parts = render_deep.html_sections(doc, names) or [f"<p>{e(x)}</p>" for x in _empty(names)]
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta http-equiv="Content-Security-Policy" '
            "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>Advisor report: {e(run)}</title><style>{PAGE_CSS}</style></head><body>"
            f"<h1>Advisor report: {e(run)}</h1>" + "\n".join(parts) + "</body></html>\n"
        )
    raise ValueError(f"unknown format {fmt!r}")
