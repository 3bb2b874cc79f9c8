"""Report JSON → one self-contained HTML page: inline CSS, the tab's charts drawn by its embedded
bundle (views/export/charts.py), every profile string escaped, nothing fetched."""

from __future__ import annotations

from typing import Any, Dict, Union

from tb_plugin_advisor.analysis.step_time.categories import COLORS, DISPLAY_ORDER, LABELS
from tb_plugin_advisor.formatting import fixed, format_number, format_pct
from tb_plugin_advisor.report.document import ReportDocument, read_report
from tb_plugin_advisor.views.export import deep as render_deep
from tb_plugin_advisor.views.export.charts import CHART_CSS, chart_canvas, chart_scripts, csp_meta
from tb_plugin_advisor.views.export.hosts import hosts_html
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.report_lines import (
    SEVERITY_COLORS,
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
)

PAGE_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;
color:#212121;background:#fff;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.verdict{padding:12px 16px;border-left:6px solid var(--c);background:#fafafa;font-size:16px;margin:12px 0}
table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;border-bottom:1px solid #eee;text-align:left;
vertical-align:top}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.sw{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}
.rec{border:1px solid #e0e0e0;border-left:5px solid var(--c);border-radius:4px;padding:8px 12px;margin:10px 0}
.sev{font-weight:600;color:var(--c);text-transform:uppercase;font-size:12px}
pre{background:#f5f5f5;padding:8px;overflow-x:auto;border-radius:4px}code{font-size:12px}
.muted{color:#616161}.name{word-break:break-all;font-family:ui-monospace,monospace;font-size:12px}
@media (prefers-color-scheme: dark){body{background:#121212;color:#e0e0e0}.verdict{background:#1e1e1e}
pre{background:#1e1e1e}td,th{border-color:#333}h2{border-color:#333}.rec{border-color:#333}.muted{color:#9e9e9e}}
"""


# The input pipeline section's heading by what feeds the step (input_pipeline.kind).
INPUT_TITLES: Dict[str, str] = {
    "tf.data": "Input pipeline",
    "dataloader": "Input pipeline · PyTorch DataLoader",
    "annotations": "Input pipeline · your input annotations",
    "none": "Input pipeline",
}


def input_title(report: ReportDocument) -> str:
    return INPUT_TITLES.get(report.input_pipeline.kind or "tf.data", "Input pipeline")


def shows_input_section(report: ReportDocument) -> bool:
    """A DataLoader or the user's input annotations are always described (what feeds the step, and
    whether the fix took); tf.data and "nothing found" only when the run waits for input."""
    pipeline = report.input_pipeline
    if not pipeline.evidence:
        return False
    if pipeline.kind in ("dataloader", "annotations"):
        return True
    return report.verdict.input_bound in ("high", "moderate")


def render_html(report: Union[Dict[str, Any], ReportDocument]) -> str:
    """One standalone page: inline CSS, the tab's charts drawn by its embedded bundle
    (views/export/charts.py), every profile string escaped."""
    report = read_report(report)
    verdict = report.verdict
    level = verdict.input_bound
    color = (
        "#c62828" if verdict.bottleneck == "input" else "#ef6c00" if level == "moderate" else "#2e7d32"
    )
    pct, ms = pct_map(report), ms_map(report)
    body = [
        f"<h1>Advisor report: {esc(report.run)}</h1>",
        f'<div class="muted">hosts: {esc(", ".join(report.hosts))} · '
        f"{esc(steps_line(report))} · "
        f"{esc(device_line(report))}</div>",
        f'<div class="verdict" style="--c:{color}">{esc(verdict.summary)}</div>',
        "<h2>Step time breakdown</h2>",
        '<table><tr><th>category</th><th class="n">ms per step</th><th class="n">% of step</th></tr>',
    ]
    for c in DISPLAY_ORDER:
        body.append(
            f'<tr><td><span class="sw" style="background:{COLORS[c]}"></span>'
            f'{esc(LABELS[c])}</td><td class="n">{format_number(ms[c])}</td>'
            f'<td class="n">{format_pct(pct[c])}</td></tr>'
        )
    body.append("</table>")
    if report.steps.per_step:
        body += ["<h2>Per step</h2>", chart_canvas("steps")]
    evidence = verdict.evidence
    if evidence:
        body.append("<ul>" + "".join(f"<li>{esc(e)}</li>" for e in evidence) + "</ul>")
    pipeline_evidence = report.input_pipeline.evidence
    if pipeline_evidence:
        body += [
            f"<h2>{esc(input_title(report))}</h2>",
            "<ul>" + "".join(f"<li>{esc(e)}</li>" for e in pipeline_evidence),
        ]
        body.append("</ul>")
    precision, tensor_cores = precision_line(report), tensor_core_line(report)
    if precision or tensor_cores:
        body.append("<h2>Precision and Tensor Cores</h2>")
        if report.precision_pct:
            body.append(chart_canvas("precision"))
        body.append("<ul>")
        body += [f"<li>{esc(x)}</li>" for x in (precision, tensor_cores) if x]
        body.append("</ul>")
    body.append("<h2>Recommendations</h2>")
    recommendations = report.recommendations
    if not recommendations:
        body.append("<p>None.</p>")
    for r in recommendations:
        c = SEVERITY_COLORS.get(r.severity, "#546e7a")
        body.append(
            f'<div class="rec" style="--c:{c}"><span class="sev">{esc(r.severity)}</span> '
            f"<b>{esc(r.title)}</b> <code>{esc(r.id)}</code>"
            f'<p>{esc(r.message)}</p><p class="muted">{esc(r.evidence)}</p>'
            f'<p class="gain">{esc(gain_line(r).capitalize())}</p>'
        )
        spans = span_lines(r, report.run)
        if spans:
            body.append('<p class="muted">In the trace:</p><ul class="spans">'
                        + "".join(f"<li>{esc(line)}</li>" for line in spans) + "</ul>")
        for label, snippet in ((r.snippet_label or "TF/Keras", r.snippet), ("JAX", r.snippet_jax)):
            if snippet:
                body.append(f"<div>{label}</div><pre><code>{esc(snippet)}</code></pre>")
        body.append("</div>")
    ops = report.ops[: TOP_ROWS * 2]
    if ops:
        nested = has_total(ops)
        body.append(
            '<h2>Top ops</h2><table><tr><th>op</th><th>category</th>'
            + ('<th class="n">self ms per step</th><th class="n">total ms per step</th>' if nested
               else '<th class="n">ms per step</th>')
            + '<th class="n">count per step</th></tr>'
        )
        for op in ops:
            total = f'<td class="n">{fixed(op.total_ms or 0.0, 3)}</td>' if nested else ""
            body.append(
                f'<tr><td class="name" title="{esc(op.name)}">{esc(op_label(op))}</td>'
                f'<td>{esc(op.category)}</td>'
                f'<td class="n">{fixed(op.time_ms or 0.0, 3)}</td>{total}'
                f'<td class="n">{fixed(op.count or 0.0, 1)}</td></tr>'
            )
        body.append("</table>")
    devices = report.devices
    if devices:
        body.append(
            '<h2>Devices</h2><table><tr><th>host</th><th>device</th><th>model</th><th class="n">kernels</th>'
            '<th class="n">busy %</th></tr>'
        )
        for d in devices:
            body.append(
                f"<tr><td>{esc(d.host)}</td><td>{esc(d.name)}</td>"
                f'<td>{esc(d.model)}</td><td class="n">{int(d.kernel_count or 0)}</td>'
                f'<td class="n">{fixed(d.busy_pct or 0.0, 1)}</td></tr>'
            )
        body.append("</table>")
    body += render_deep.html_sections(report, charts=True)
    body += hosts_html(report)
    notes = report.notes
    if notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        + csp_meta()
        + f"<title>Advisor report: {esc(report.run)}</title><style>{PAGE_CSS}{CHART_CSS}</style>"
        + "</head><body>"
        + "\n".join(body)
        + chart_scripts({"report": report.raw})
        + "</body></html>\n"
    )


