"""Report JSON → text (terminal), Markdown, or one self-contained HTML page.

Views only format: everything comes from the report dict (`Report.to_json()`), so a saved JSON
renders the same. Profile strings (run, host, op and kernel names, evidence) are untrusted: HTML
escapes every one of them, Markdown escapes table cells, and the page has no script and loads
nothing from the network.
"""

from __future__ import annotations

import functools
import html
import shutil
import textwrap
from typing import Any, Dict, List, Optional

from tb_plugin_advisor.analysis.steps import STEP_SOURCE_WORDS
from tb_plugin_advisor.formatting import format_ms, format_number, format_pct
from tb_plugin_advisor.views import render_deep
from tb_plugin_advisor.views.export_charts import CHART_CSS, chart_canvas, chart_scripts, csp_meta
from tb_plugin_advisor.views.hosts_render import hosts_html, hosts_markdown, hosts_text
from tb_plugin_advisor.views.terminal import terminal_output

FORMATS = ("text", "md", "json", "html")

CATEGORY_LABELS = {
    "input": "Input (waiting for data)",
    "device_compute": "Device compute",
    "host_compute": "Host compute",
    "kernel_launch": "Kernel launch",
    "memcpy": "Memory copies",
    "communication": "Communication",
    "other": "Other host work",
    "idle": "Idle",
}
CATEGORY_COLORS = {
    "input": "#d93025",
    "device_compute": "#1a73e8",
    "host_compute": "#188038",
    "kernel_launch": "#e37400",
    "memcpy": "#9334e6",
    "communication": "#007b83",
    "other": "#795548",
    "idle": "#9aa0a6",
}
CATEGORY_ORDER = tuple(CATEGORY_LABELS)  # display order: every breakdown category, idle last
SEVERITY_COLORS = {"high": "#c62828", "medium": "#ef6c00", "low": "#546e7a"}
TOP_ROWS = 15

# Op and kernel names are long single tokens: keep them whole on their own line rather than cut them.
_wrap = functools.partial(textwrap.wrap, break_long_words=False, break_on_hyphens=False)


def _num(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _pct_map(report: Dict[str, Any]) -> Dict[str, float]:
    return {c: _num((report.get("breakdown_pct") or {}).get(c)) for c in CATEGORY_ORDER}


def _ms_map(report: Dict[str, Any]) -> Dict[str, float]:
    return {c: _num((report.get("breakdown_ms") or {}).get(c)) for c in CATEGORY_ORDER}


def _device_line(report: Dict[str, Any]) -> str:
    active = [d for d in report.get("devices") or [] if d.get("kernel_count") or d.get("memcpy_count")]
    if not active:
        return "CPU only" if not report.get("devices") else "no device activity recorded"
    kinds = sorted({_device_label(d) for d in active})
    return f"{len(active)} active device{'s' if len(active) != 1 else ''}: {', '.join(kinds)}"


def _device_label(device: Dict[str, Any]) -> str:
    label = (
        str(device.get("model") or "")
        or f"{device.get('vendor') or ''} {str(device.get('kind', '')).upper()}"
    )
    if device.get("compute_capability"):
        label += f" (compute capability {device['compute_capability']})"
    return label.strip()


def _steps_line(report: Dict[str, Any]) -> str:
    steps = report.get("steps") or {}
    count = int(_num(steps.get("count")))
    if not count:
        return "no steps found"
    source = STEP_SOURCE_WORDS.get(str(steps.get("source")), steps.get("source"))
    return (
        f"{count} steps ({source}): mean {_num(steps.get('mean_ms')):.1f} ms, "
        f"median {_num(steps.get('median_ms')):.1f} ms, p90 {_num(steps.get('p90_ms')):.1f} ms"
    )


def _precision_line(report: Dict[str, Any]) -> Optional[str]:
    precision = report.get("precision") or {}
    if precision.get("summary"):
        return str(precision["summary"])
    shares = {k: _num(v) for k, v in (report.get("precision_pct") or {}).items() if _num(v) >= 0.5}
    if not shares:
        return None
    listed = ", ".join(f"{k} {format_pct(v)}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1]))
    return f"mixed precision {precision.get('verdict', 'unknown')} ({listed})"


def _tensor_core_line(report: Dict[str, Any]) -> Optional[str]:
    tc = report.get("tensor_cores") or {}
    if not tc.get("kernels") and not _num(tc.get("device_time_pct")):
        return None
    return (
        f"{format_pct(_num(tc.get('device_time_pct')))} of device time on Tensor Cores; "
        f"{format_pct(_num(tc.get('eligible_time_pct')))} in ops that could use them"
    )


# ---------------------------------------------------------------------------------------------------
# Text


def _op_label(op: Dict[str, Any]) -> str:
    """The familiar op name, with the oneDNN op TensorFlow ran it as beside it (`… (oneDNN _MklMatMul)`)."""
    name = str(op.get("name", ""))
    return f"{name} (oneDNN {op['onednn_op']})" if op.get("onednn_op") else name


def _host_sync_line(report: Dict[str, Any]) -> Optional[str]:
    sync = report.get("host_sync") or {}
    if not sync.get("count_per_step"):
        return None
    idle = sync.get("device_idle_ms")
    idle_text = f", device idle {idle:.2f} ms meanwhile" if idle is not None else ""
    calls = ", ".join(f"{c['name']} ×{c['count']:g}" for c in sync.get("calls") or [])
    return (
        f"{sync['count_per_step']:g} per step, {sync['time_ms']:.2f} ms "
        f"({format_pct(sync['time_pct'])} of the step){idle_text}: {calls}"
    )


def render_text(report: Dict[str, Any], width: Optional[int] = None) -> str:
    """A terminal page: verdict first, then the numbers behind it and what to do."""
    width = width or min(max(shutil.get_terminal_size((100, 24)).columns, 60), 120)
    out: List[str] = []
    verdict = report.get("verdict") or {}
    hosts = ", ".join(report.get("hosts") or [])
    hosts = report.get("hosts") or []
    host_text = f" ({'host' if len(hosts) == 1 else 'hosts'} {', '.join(hosts)})" if hosts else ""
    out.append(f"tb-advisor report — run {report.get('run', '')}{host_text}")
    out.append("=" * min(width, 100))
    out += _wrap(str(verdict.get("summary", "")), width) or [""]
    out.append("")
    for label, text in (
        ("Steps:", _steps_line(report)),
        ("Devices:", _device_line(report)),
        ("Precision:", _precision_line(report)),
        ("Tensor Cores:", _tensor_core_line(report)),
        ("Host syncs:", _host_sync_line(report)),
    ):
        if text:
            out += _wrap(text, width, initial_indent=f"{label:<14}", subsequent_indent=" " * 14)
    out.append("")
    out.append("Where each step's time goes (mean per step):")
    pct, ms = _pct_map(report), _ms_map(report)
    bar_width = max(10, min(40, width - 52))
    for c in CATEGORY_ORDER:
        if pct[c] < 0.05 and ms[c] <= 0:
            continue
        bar = "#" * int(round(pct[c] / 100 * bar_width))
        out.append(f"  {CATEGORY_LABELS[c]:<26} {format_ms(ms[c]):>12} {format_pct(pct[c]):>7}  {bar}")
    pipeline = report.get("input_pipeline") or {}
    if verdict.get("input_bound") in ("high", "moderate") and pipeline.get("evidence"):
        out.append("")
        out.append("Input pipeline:")
        for line in pipeline.get("evidence") or []:
            out += _wrap(str(line), width, initial_indent="  - ", subsequent_indent="    ")
    recommendations = report.get("recommendations") or []
    out.append("")
    out.append(f"Recommendations ({len(recommendations)}):" if recommendations else "Recommendations: none")
    for r in recommendations:
        out.append(f"  [{str(r.get('severity', '')).upper()}] {r.get('title', '')}  ({r.get('id', '')})")
        for text in (r.get("message"), r.get("evidence")):
            if text:
                out += _wrap(str(text), width, initial_indent="      ", subsequent_indent="      ")
        if r.get("snippet"):
            out.append(f"      {r.get('snippet_label') or 'TF/Keras'}:")
            out += ["        " + s for s in str(r["snippet"]).splitlines()]
        if r.get("snippet_jax"):
            out.append("      JAX:")
            out += ["        " + s for s in str(r["snippet_jax"]).splitlines()]
    ops = (report.get("ops") or [])[:TOP_ROWS]
    if ops:
        out.append("")
        out.append("Top ops (time per step):")
        name_width = max(20, width - 36)
        for op in ops:
            name = _clip(_op_label(op), name_width)
            out.append(f"  {_num(op.get('time_ms')):>10.3f} ms  {str(op.get('category', '')):<15} {name}")
    out += render_deep.text_sections(report, width)
    out += hosts_text(report)
    notes = list((report.get("steps") or {}).get("notes") or []) + list(report.get("warnings") or [])
    if notes:
        out.append("")
        out.append("Notes:")
        for note in notes:
            out += _wrap(str(note), width, initial_indent="  - ", subsequent_indent="    ")
    return terminal_output("\n".join(out))


def _clip(text: str, width: int) -> str:
    """Keep the end of long op names: `…/conv2d/Conv2DBackpropFilter:Conv2DBackpropFilter`."""
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


# ---------------------------------------------------------------------------------------------------
# Markdown


def _md(text: Any) -> str:
    """Escape a profile string for a Markdown table cell or line (no HTML, no links, no emphasis)."""
    value = html.escape(str(text), quote=False)
    for ch in "\\`*_{}[]()#+!|<>":
        value = value.replace(ch, "\\" + ch)
    return value.replace("\n", " ")


def render_markdown(report: Dict[str, Any]) -> str:
    verdict = report.get("verdict") or {}
    out = [f"# Advisor report: {_md(report.get('run', ''))}", ""]
    out.append(f"**{_md(verdict.get('summary', ''))}**")
    out.append("")
    out.append(f"- Hosts: {_md(', '.join(report.get('hosts') or []))}")
    out.append(f"- Steps: {_md(_steps_line(report))}")
    out.append(f"- Devices: {_md(_device_line(report))}")
    precision = _precision_line(report)
    if precision:
        out.append(f"- Precision: {_md(precision)}")
    tensor_cores = _tensor_core_line(report)
    if tensor_cores:
        out.append(f"- Tensor Cores: {_md(tensor_cores)}")
    out += ["", "## Step time breakdown", "", "| category | ms per step | % of step |", "|---|---:|---:|"]
    pct, ms = _pct_map(report), _ms_map(report)
    for c in CATEGORY_ORDER:
        out.append(f"| {CATEGORY_LABELS[c]} | {format_number(ms[c])} | {format_pct(pct[c])} |")
    evidence = verdict.get("evidence") or []
    if evidence:
        out += ["", "Evidence:", ""] + [f"- {_md(e)}" for e in evidence]
    pipeline = report.get("input_pipeline") or {}
    if pipeline.get("evidence") and verdict.get("input_bound") in ("high", "moderate"):
        out += ["", "## Input pipeline", ""] + [f"- {_md(e)}" for e in pipeline["evidence"]]
    out += ["", "## Recommendations", ""]
    recommendations = report.get("recommendations") or []
    if not recommendations:
        out.append("None.")
    for r in recommendations:
        out.append(f"### {_md(r.get('title', ''))} ({_md(r.get('severity', ''))}, `{r.get('id', '')}`)")
        out += ["", _md(r.get("message", "")), "", f"Evidence: {_md(r.get('evidence', ''))}", ""]
        label_of_snippet = r.get("snippet_label") or "TF/Keras"
        for label, key, lang in ((label_of_snippet, "snippet", "python"), ("JAX", "snippet_jax", "python")):
            if r.get(key):
                code = str(r[key]).replace("```", "'''")
                out += [f"{label}:", "", f"```{lang}", code, "```", ""]
    ops = (report.get("ops") or [])[:TOP_ROWS]
    if ops:
        out += ["## Top ops", "", "| op | category | ms per step | count per step |", "|---|---|---:|---:|"]
        for op in ops:
            out.append(
                f"| {_md(_op_label(op))} | {_md(op.get('category', ''))} | "
                f"{_num(op.get('time_ms')):.3f} | {_num(op.get('count')):.1f} |"
            )
    out += render_deep.md_sections(report)
    out += hosts_markdown(report, _md)
    notes = list((report.get("steps") or {}).get("notes") or []) + list(report.get("warnings") or [])
    if notes:
        out += ["", "## Notes", ""] + [f"- {_md(n)}" for n in notes]
    return terminal_output("\n".join(out))


# ---------------------------------------------------------------------------------------------------
# HTML

_CSS = """
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


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def render_html(report: Dict[str, Any]) -> str:
    """One standalone page: inline CSS, the tab's charts drawn by its embedded bundle
    (export_charts.py), every profile string escaped."""
    verdict = report.get("verdict") or {}
    level = verdict.get("input_bound")
    color = (
        "#c62828" if verdict.get("bottleneck") == "input" else "#ef6c00" if level == "moderate" else "#2e7d32"
    )
    pct, ms = _pct_map(report), _ms_map(report)
    body = [
        f"<h1>Advisor report: {_e(report.get('run', ''))}</h1>",
        f'<div class="muted">hosts: {_e(", ".join(report.get("hosts") or []))} · {_e(_steps_line(report))} · '
        f"{_e(_device_line(report))}</div>",
        f'<div class="verdict" style="--c:{color}">{_e(verdict.get("summary", ""))}</div>',
        "<h2>Step time breakdown</h2>",
        '<table><tr><th>category</th><th class="n">ms per step</th><th class="n">% of step</th></tr>',
    ]
    for c in CATEGORY_ORDER:
        body.append(
            f'<tr><td><span class="sw" style="background:{CATEGORY_COLORS[c]}"></span>'
            f'{_e(CATEGORY_LABELS[c])}</td><td class="n">{format_number(ms[c])}</td>'
            f'<td class="n">{format_pct(pct[c])}</td></tr>'
        )
    body.append("</table>")
    if (report.get("steps") or {}).get("per_step"):
        body += ["<h2>Per step</h2>", chart_canvas("steps")]
    evidence = verdict.get("evidence") or []
    if evidence:
        body.append("<ul>" + "".join(f"<li>{_e(e)}</li>" for e in evidence) + "</ul>")
    pipeline = report.get("input_pipeline") or {}
    if pipeline.get("evidence"):
        body += [
            "<h2>Input pipeline</h2>",
            "<ul>" + "".join(f"<li>{_e(e)}</li>" for e in pipeline["evidence"]),
        ]
        body.append("</ul>")
    precision, tensor_cores = _precision_line(report), _tensor_core_line(report)
    if precision or tensor_cores:
        body.append("<h2>Precision and Tensor Cores</h2>")
        if report.get("precision_pct"):
            body.append(chart_canvas("precision"))
        body.append("<ul>")
        body += [f"<li>{_e(x)}</li>" for x in (precision, tensor_cores) if x]
        body.append("</ul>")
    body.append("<h2>Recommendations</h2>")
    recommendations = report.get("recommendations") or []
    if not recommendations:
        body.append("<p>None.</p>")
    for r in recommendations:
        c = SEVERITY_COLORS.get(str(r.get("severity")), "#546e7a")
        body.append(
            f'<div class="rec" style="--c:{c}"><span class="sev">{_e(r.get("severity", ""))}</span> '
            f"<b>{_e(r.get('title', ''))}</b> <code>{_e(r.get('id', ''))}</code>"
            f'<p>{_e(r.get("message", ""))}</p><p class="muted">{_e(r.get("evidence", ""))}</p>'
        )
        for label, key in ((r.get("snippet_label") or "TF/Keras", "snippet"), ("JAX", "snippet_jax")):
            if r.get(key):
                body.append(f"<div>{label}</div><pre><code>{_e(r[key])}</code></pre>")
        body.append("</div>")
    ops = (report.get("ops") or [])[: TOP_ROWS * 2]
    if ops:
        body.append(
            '<h2>Top ops</h2><table><tr><th>op</th><th>category</th><th class="n">ms per step</th>'
            '<th class="n">count per step</th></tr>'
        )
        for op in ops:
            body.append(
                f'<tr><td class="name">{_e(_op_label(op))}</td><td>{_e(op.get("category", ""))}</td>'
                f'<td class="n">{_num(op.get("time_ms")):.3f}</td>'
                f'<td class="n">{_num(op.get("count")):.1f}</td></tr>'
            )
        body.append("</table>")
    devices = report.get("devices") or []
    if devices:
        body.append(
            '<h2>Devices</h2><table><tr><th>host</th><th>device</th><th>model</th><th class="n">kernels</th>'
            '<th class="n">busy %</th></tr>'
        )
        for d in devices:
            body.append(
                f"<tr><td>{_e(d.get('host', ''))}</td><td>{_e(d.get('name', ''))}</td>"
                f'<td>{_e(d.get("model", ""))}</td><td class="n">{int(_num(d.get("kernel_count")))}</td>'
                f'<td class="n">{_num(d.get("busy_pct")):.1f}</td></tr>'
            )
        body.append("</table>")
    body += render_deep.html_sections(report, charts=True)
    body += hosts_html(report)
    notes = list((report.get("steps") or {}).get("notes") or []) + list(report.get("warnings") or [])
    if notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        + csp_meta()
        + f"<title>Advisor report: {_e(report.get('run', ''))}</title><style>{_CSS}{CHART_CSS}</style>"
        + "</head><body>"
        + "\n".join(body)
        + chart_scripts({"report": report})
        + "</body></html>\n"
    )


def render(report: Dict[str, Any], fmt: str) -> str:
    """Dispatch on `fmt` (text | md | html); json is the caller's json.dumps."""
    if fmt == "text":
        return render_text(report)
    if fmt == "md":
        return render_markdown(report)
    if fmt == "html":
        return render_html(report)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
