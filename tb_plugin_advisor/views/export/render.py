"""Report JSON → text (terminal), Markdown, or one self-contained HTML page.

Views only format: everything comes from the report dict (`Report.to_json()`), read through
report/document.py, so a saved JSON renders the same. Profile strings (run, host, op and kernel
names, evidence) are untrusted: HTML escapes every one of them, Markdown escapes table cells, and
the page has no script and loads nothing from the network.
"""

from __future__ import annotations

import shutil
from typing import Any, Dict, List, Optional, Union

from tb_plugin_advisor.analysis.step_time.categories import DISPLAY_ORDER, LABELS
from tb_plugin_advisor.formatting import fixed, format_ms, format_number, format_pct, plain
from tb_plugin_advisor.report.document import ReportDocument, read_report
from tb_plugin_advisor.views.export import deep as render_deep
from tb_plugin_advisor.views.export.hosts import hosts_markdown, hosts_text
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.markup import terminal_data, terminal_output
from tb_plugin_advisor.views.export.report_html import input_title, render_html, shows_input_section
from tb_plugin_advisor.views.export.report_lines import (
    TOP_ROWS,
    device_line,
    gain_line,
    has_total,
    ms_map,
    op_label,
    pct_map,
    precision_line,
    span_lines,
    steps_line,
    tensor_core_line,
    wrap_words,
)

FORMATS = ("text", "md", "json", "html")

# ---------------------------------------------------------------------------------------------------
# Text


Report = Union[Dict[str, Any], ReportDocument]  # report JSON, or the document that reads it


def _host_sync_line(report: ReportDocument) -> Optional[str]:
    sync = report.host_sync
    count = sync.count_per_step
    if not count:
        return None
    idle = sync.device_idle_ms
    idle_text = f", device idle {fixed(idle, 2)} ms meanwhile" if idle is not None else ""
    calls = ", ".join(f"{c.name} ×{plain(c.count or 0.0)}" for c in sync.calls)
    return (
        f"{plain(count)} per step, {fixed(sync.time_ms or 0.0, 2)} ms "
        f"({format_pct(sync.time_pct)} of the step){idle_text}: {calls}"
    )


def render_text(report: Report, width: Optional[int] = None) -> str:
    """A terminal page: verdict first, then the numbers behind it and what to do."""
    report = read_report(report)
    width = width or min(max(shutil.get_terminal_size((100, 24)).columns, 60), 120)
    out: List[str] = []
    verdict = report.verdict
    hosts = report.hosts
    host_text = f" ({'host' if len(hosts) == 1 else 'hosts'} {', '.join(hosts)})" if hosts else ""
    out.append(f"tb-advisor report — run {report.run}{host_text}")
    out.append("=" * min(width, 100))
    out += wrap_words(verdict.summary, width) or [""]
    out.append("")
    for label, text in (
        ("Steps:", steps_line(report)),
        ("Devices:", device_line(report)),
        ("Precision:", precision_line(report)),
        ("Tensor Cores:", tensor_core_line(report)),
        ("Host syncs:", _host_sync_line(report)),
    ):
        if text:
            out += wrap_words(text, width, initial_indent=f"{label:<14}", subsequent_indent=" " * 14)
    out.append("")
    out.append("Where each step's time goes (mean per step):")
    pct, ms = pct_map(report), ms_map(report)
    bar_width = max(10, min(40, width - 52))
    for c in DISPLAY_ORDER:
        if pct[c] < 0.05 and ms[c] <= 0:
            continue
        bar = "#" * round(min(max(pct[c], 0.0), 100.0) / 100 * bar_width)  # a share: 0 to 100 %
        out.append(f"  {LABELS[c]:<26} {format_ms(ms[c]):>12} {format_pct(pct[c]):>7}  {bar}")
    if shows_input_section(report):
        out.append("")
        out.append(f"{input_title(report)}:")
        for line in report.input_pipeline.evidence:
            out += wrap_words(line, width, initial_indent="  - ", subsequent_indent="    ")
    recommendations = report.recommendations
    out.append("")
    out.append(f"Recommendations ({len(recommendations)}):" if recommendations else "Recommendations: none")
    for r in recommendations:
        out.append(f"  [{r.severity.upper()}] {r.title}  ({r.id})")
        for text in (r.message, r.evidence, gain_line(r).capitalize()):
            if text:
                out += wrap_words(text, width, initial_indent="      ", subsequent_indent="      ")
        spans = span_lines(r, report.run)
        if spans:
            out.append("      In the trace:")
            out += [f"        {line}" for line in spans]
        if r.snippet:
            out.append(f"      {r.snippet_label or 'TF/Keras'}:")
            out += ["        " + s for s in r.snippet.splitlines()]
        if r.snippet_jax:
            out.append("      JAX:")
            out += ["        " + s for s in r.snippet_jax.splitlines()]
    ops = report.ops[:TOP_ROWS]
    if ops:
        out.append("")
        if has_total(ops):  # host ops nest: self time first, inclusive time beside it
            out.append("Top ops (self time per step; total includes the ops inside):")
            name_width = max(20, width - 50)
            for op in ops:
                name = _clip(op_label(op), name_width)
                times = f"{_op_ms(op.time_ms)} ms  total {_op_ms(op.total_ms)} ms"
                out.append(f"  {times}  {op.category:<15} {name}")
        else:
            out.append("Top ops (time per step):")
            name_width = max(20, width - 36)
            for op in ops:
                name = _clip(op_label(op), name_width)
                out.append(f"  {_op_ms(op.time_ms)} ms  {op.category:<15} {name}")
    out += render_deep.text_sections(report, width)
    out += hosts_text(report)
    notes = report.notes
    if notes:
        out.append("")
        out.append("Notes:")
        for note in notes:
            out += wrap_words(note, width, initial_indent="  - ", subsequent_indent="    ")
    return terminal_output("\n".join(out))


def _op_ms(value: Optional[float]) -> str:
    """An op's ms per step in the text page's column: three decimals, as the Markdown table writes it."""
    return fixed(value or 0.0, 3).rjust(10)


def _clip(text: str, width: int) -> str:
    """Keep the end of long op names: `…/conv2d/Conv2DBackpropFilter:Conv2DBackpropFilter`."""
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


# ---------------------------------------------------------------------------------------------------
# Markdown


def render_markdown(report: Report) -> str:
    report = read_report(report)
    verdict = report.verdict
    out = [f"# Advisor report: {md(report.run)}", ""]
    out.append(f"**{md(verdict.summary)}**")
    out.append("")
    out.append(f"- Hosts: {md(', '.join(report.hosts))}")
    out.append(f"- Steps: {md(steps_line(report))}")
    out.append(f"- Devices: {md(device_line(report))}")
    precision = precision_line(report)
    if precision:
        out.append(f"- Precision: {md(precision)}")
    tensor_cores = tensor_core_line(report)
    if tensor_cores:
        out.append(f"- Tensor Cores: {md(tensor_cores)}")
    out += ["", "## Step time breakdown", "", "| category | ms per step | % of step |", "|---|---:|---:|"]
    pct, ms = pct_map(report), ms_map(report)
    for c in DISPLAY_ORDER:
        out.append(f"| {LABELS[c]} | {format_number(ms[c])} | {format_pct(pct[c])} |")
    evidence = verdict.evidence
    if evidence:
        out += ["", "Evidence:", ""] + [f"- {md(e)}" for e in evidence]
    if shows_input_section(report):
        evidence = report.input_pipeline.evidence
        out += ["", f"## {md(input_title(report))}", ""] + [f"- {md(e)}" for e in evidence]
    out += ["", "## Recommendations", ""]
    recommendations = report.recommendations
    if not recommendations:
        out.append("None.")
    for r in recommendations:
        out.append(f"### {md(r.title)} ({md(r.severity)}, `{r.id}`)")
        out += ["", md(r.message), "", f"Evidence: {md(r.evidence)}", "",
                f"Expected gain: {md(gain_line(r))}", ""]
        spans = span_lines(r, report.run)
        if spans:
            out += ["In the trace:", ""] + [f"- {md(line)}" for line in spans] + [""]
        for label, snippet in ((r.snippet_label or "TF/Keras", r.snippet), ("JAX", r.snippet_jax)):
            if snippet:
                code = snippet.replace("```", "'''")
                out += [f"{label}:", "", "```python", code, "```", ""]
    ops = report.ops[:TOP_ROWS]
    if ops:
        if has_total(ops):
            out += ["## Top ops", "", "Self time: an op's own time, without the ops inside it (total).", "",
                    "| op | category | self ms per step | total ms per step | count per step |",
                    "|---|---|---:|---:|---:|"]
        else:
            out += ["## Top ops", "", "| op | category | ms per step | count per step |",
                    "|---|---|---:|---:|"]
        for op in ops:
            total = f"{fixed(op.total_ms or 0.0, 3)} | " if has_total(ops) else ""
            out.append(
                f"| {md(op_label(op))} | {md(op.category)} | "
                f"{fixed(op.time_ms or 0.0, 3)} | {total}{fixed(op.count or 0.0, 1)} |"
            )
    out += render_deep.md_sections(report)
    out += hosts_markdown(report, md)
    notes = report.notes
    if notes:
        out += ["", "## Notes", ""] + [f"- {md(n)}" for n in notes]
    return terminal_output("\n".join(out))


def render(report: Dict[str, Any], fmt: str) -> str:
    """Dispatch on `fmt` (text | md | html); json is the caller's json.dumps."""
    if fmt == "text":
        return render_text(terminal_data(report))
    if fmt == "md":
        return render_markdown(report)
    if fmt == "html":
        return render_html(report)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
