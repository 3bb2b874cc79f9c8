"""Views of a diff dict (`tb-advisor/diff/1`): plain text, Markdown and a self-contained HTML page.

Views only format: every number and sentence comes from the diff. Every string that came from a
profile (run, host, op and kernel names, verdict summaries, warnings) is escaped for the format it
lands in — HTML-escaped in the page, HTML- and Markdown-escaped in Markdown.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from tb_plugin_advisor.diff.rules import MINUS
from tb_plugin_advisor.views.export.charts import CHART_CSS, chart_canvas, chart_scripts, csp_meta
from tb_plugin_advisor.views.export.diff_deep import deep_tables
from tb_plugin_advisor.views.export.diff_hosts import hosts_html, hosts_markdown, hosts_text
from tb_plugin_advisor.views.export.diff_rows import (
    OUTCOMES_HEADER,
    OUTCOMES_TITLE,
    breakdown_rows,
    diff_title,
    memory_line,
    op_rows,
    outcome_rows,
    precision_rows,
    step_rows,
    tc_line,
    test_line,
    verdict_line,
    wrap,
)
from tb_plugin_advisor.views.export.json_text import indented_json
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.markup import terminal_data, terminal_output

FORMATS = ("text", "md", "json", "html")
TOP_OPS = 15  # rows of the op and kernel tables in text and Markdown (HTML shows up to 200)
HTML_MAX_ROWS = 200
WIDTH = 100

UNCERTAIN_NOTE = "?: the other run's report lists only its top ops; this one may be there below the cut-off"



def render(diff: Dict[str, Any], fmt: str, top: int = TOP_OPS) -> str:
    """The diff in `fmt` (one of FORMATS)."""
    if fmt == "json":
        return indented_json(diff, indent=2)
    if fmt == "text":
        return render_text(terminal_data(diff), top)
    if fmt == "md":
        return render_markdown(diff, top)
    if fmt == "html":
        return render_html(diff)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


# ---------------------------------------------------------------------------------------------------
# Text


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> List[str]:
    """Aligned columns: `align` has "l" or "r" per column."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for r in [header, *rows]:
        cells = [str(c).ljust(w) if a == "l" else str(c).rjust(w) for c, w, a in zip(r, widths, align)]
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


def render_text(diff: Dict[str, Any], top: int = TOP_OPS) -> str:
    st = diff["step_time"]
    out = [f"tb-advisor diff: {diff_title(diff)}", ""]
    out += wrap(diff["summary"], WIDTH) + [""]
    out.append("Step time")
    out += _table(["", "baseline", "candidate", "delta", "delta %"], step_rows(st), "lrrrr")
    out += ["  " + line for line in wrap(test_line(st), WIDTH - 2)] + [""]
    rows = breakdown_rows(diff)
    if rows:
        out.append("Breakdown per step (ms)")
        out += _table(["", "baseline", "candidate", "delta", "significant"], rows, "lrrrr") + [""]
    out.append("Verdict")
    out.append(f"  baseline:  {verdict_line(diff['verdict']['baseline'])}")
    out.append(f"  candidate: {verdict_line(diff['verdict']['candidate'])}")
    out.append("")
    rows = outcome_rows(diff)
    if rows:
        out.append(OUTCOMES_TITLE)
        out += _table(OUTCOMES_HEADER, rows, "llrrll") + [""]
    rows = precision_rows(diff)
    if rows:
        out.append("Precision (% of compute time)")
        out += _table(["", "baseline", "candidate", "delta"], rows, "lrrr") + [""]
    for label, line in (("Tensor Cores", tc_line(diff)), ("Peak device memory", memory_line(diff))):
        if line:
            out += [f"{label}: {line}", ""]
    for title, header, rows in deep_tables(diff):
        out.append(title)
        out += _table(header, rows, "l" + "r" * (len(header) - 1)) + [""]
    for key, what in (("ops", "Ops"), ("kernels", "Kernels")):
        rows = diff[key]
        if not rows:
            continue
        shown = min(top, len(rows))
        out.append(f"{what} (time per step, largest change first; {shown} of {len(rows)})")
        out += _table(["delta ms", "baseline", "candidate", "status", "name"], op_rows(rows, top), "rrrll")
        if any(r.get("uncertain") for r in rows[:top]):
            out.append(f"  {UNCERTAIN_NOTE}")
        out.append("")
    out += hosts_text(diff)
    if diff.get("warnings"):
        out.append("Warnings")
        out += [f"  - {w}" for w in diff["warnings"]] + [""]
    return terminal_output("\n".join(out).rstrip())


# ---------------------------------------------------------------------------------------------------
# Markdown



def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> List[str]:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|")
    lines += ["| " + " | ".join(md(c) for c in r) + " |" for r in rows]
    return lines


def render_markdown(diff: Dict[str, Any], top: int = TOP_OPS) -> str:
    st = diff["step_time"]
    out = [f"# Profile diff: {md(diff_title(diff))}", "", md(diff["summary"]), ""]
    out += ["## Step time", ""]
    out += _md_table(["", "baseline", "candidate", "delta", "delta %"], step_rows(st), "lrrrr")
    out += ["", md(test_line(st)), ""]
    rows = breakdown_rows(diff)
    if rows:
        out += ["## Breakdown per step (ms)", ""]
        out += _md_table(["", "baseline", "candidate", "delta", "significant"], rows, "lrrrl") + [""]
    out += ["## Verdict", ""]
    out.append(f"- baseline: {md(verdict_line(diff['verdict']['baseline']))}")
    out.append(f"- candidate: {md(verdict_line(diff['verdict']['candidate']))}")
    out.append("")
    rows = outcome_rows(diff)
    if rows:
        out += [f"## {OUTCOMES_TITLE}", ""] + _md_table(OUTCOMES_HEADER, rows, "llrrll") + [""]
    rows = precision_rows(diff)
    if rows:
        out += ["## Precision (% of compute time)", ""]
        out += _md_table(["", "baseline", "candidate", "delta"], rows, "lrrr") + [""]
    for label, line in (("Tensor Cores", tc_line(diff)), ("Peak device memory", memory_line(diff))):
        if line:
            out += [f"**{label}:** {md(line)}", ""]
    for title, header, rows in deep_tables(diff):
        out += [f"## {title}", ""] + _md_table(header, rows, "l" + "r" * (len(header) - 1)) + [""]
    for key, what in (("ops", "Ops"), ("kernels", "Kernels")):
        rows = diff[key]
        if not rows:
            continue
        shown = min(top, len(rows))
        out += [f"## {what} (time per step, largest change first; {shown} of {len(rows)})", ""]
        out += _md_table(
            ["delta ms", "baseline", "candidate", "status", "name"], op_rows(rows, top), "rrrll"
        )
        if any(r.get("uncertain") for r in rows[:top]):
            out += ["", md(UNCERTAIN_NOTE)]
        out.append("")
    out += hosts_markdown(diff, md)
    if diff.get("warnings"):
        out += ["## Warnings", ""] + [f"- {md(w)}" for w in diff["warnings"]] + [""]
    return terminal_output("\n".join(out).rstrip())


# ---------------------------------------------------------------------------------------------------
# HTML: one self-contained page (inline CSS and SVG, no script, nothing fetched)

_CSS = """
:root { color-scheme: light dark; --fg: #202124; --bg: #fff; --muted: #5f6368; --line: #dadce0;
        --base: #9aa0a6; --cand: #1a73e8; --good: #188038; --bad: #d93025; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e8eaed; --bg: #202124; --muted: #9aa0a6; --line: #3c4043; --base: #5f6368;
          --cand: #8ab4f8; --good: #81c995; --bad: #f28b82; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 2em auto;
       max-width: 1100px; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
p.summary { font-size: 1.05em; border-left: 4px solid var(--cand); padding-left: .8em; }
table { border-collapse: collapse; margin: .4em 0; }
td, th { padding: .2em .7em; border-bottom: 1px solid var(--line); }
th { white-space: nowrap; text-align: left; color: var(--muted); font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.name { font-family: ui-monospace, monospace; word-break: break-all; }
.good { color: var(--good); } .bad { color: var(--bad); } .muted { color: var(--muted); }
"""


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = []
    for r in rows:
        cells = "".join(f'<td class="{c}">{esc(v)}</td>' for v, c in zip(r, classes))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _delta_class(text: str, lower_is_better: bool = True) -> str:
    if text.startswith(MINUS):
        return "good" if lower_is_better else "bad"
    if text.startswith("+"):
        return "bad" if lower_is_better else "good"
    return ""


def render_html(diff: Dict[str, Any]) -> str:
    st = diff["step_time"]
    title = f"Profile diff: {diff_title(diff)}"
    body: List[str] = [f"<h1>{esc(title)}</h1>", f'<p class="summary">{esc(diff["summary"])}</p>']
    body += [
        "<h2>Step time</h2>",
        _html_table(
            ["", "baseline", "candidate", "delta", "delta %"], step_rows(st), ["", "n", "n", "n", "n"]
        ),
    ]
    body.append(f'<p class="muted">{esc(test_line(st))}</p>')
    rows = breakdown_rows(diff)
    if rows:
        body += ["<h2>Breakdown per step (ms)</h2>", chart_canvas("delta")]
        body.append(
            _html_table(["", "baseline", "candidate", "delta", "significant"], rows, ["", "n", "n", "n", ""])
        )
    body += [
        "<h2>Verdict</h2><ul>",
        f"<li>baseline: {esc(verdict_line(diff['verdict']['baseline']))}</li>",
        f"<li>candidate: {esc(verdict_line(diff['verdict']['candidate']))}</li></ul>",
    ]
    rows = outcome_rows(diff)
    if rows:
        body += [f"<h2>{esc(OUTCOMES_TITLE)}</h2>",
                 _html_table(OUTCOMES_HEADER, rows, ["", "", "n", "n", "n", ""])]
    rows = precision_rows(diff)
    if rows:
        body += [
            "<h2>Precision (% of compute time)</h2>",
            _html_table(["", "baseline", "candidate", "delta"], rows, ["", "n", "n", "n"]),
        ]
    for label, line in (("Tensor Cores", tc_line(diff)), ("Peak device memory", memory_line(diff))):
        if line:
            body.append(f"<p><b>{esc(label)}:</b> {esc(line)}</p>")
    for title, header, rows in deep_tables(diff):
        body += [f"<h2>{esc(title)}</h2>", _html_table(header, rows, [""] + ["n"] * (len(header) - 1))]
    for key, what in (("ops", "Ops"), ("kernels", "Kernels")):
        rows = diff[key]
        if not rows:
            continue
        shown = min(HTML_MAX_ROWS, len(rows))
        body.append(f"<h2>{what} (time per step, largest change first; {shown} of {len(rows)})</h2>")
        body.append(_op_table_html(op_rows(rows, HTML_MAX_ROWS, full_names=True),
                                   [str(r["name"]) for r in rows[:HTML_MAX_ROWS]]))
        if any(r.get("uncertain") for r in rows[:HTML_MAX_ROWS]):
            body.append(f'<p class="muted">{esc(UNCERTAIN_NOTE)}</p>')
    body += hosts_html(diff)
    if diff.get("warnings"):
        body.append(
            "<h2>Warnings</h2><ul>" + "".join(f"<li>{esc(w)}</li>" for w in diff["warnings"]) + "</ul>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        + csp_meta()
        + f"<title>{esc(title)}</title><style>{_CSS}{CHART_CSS}</style></head><body>\n"
        + "\n".join(b for b in body if b)
        + chart_scripts({"diff": diff})
        + "\n</body></html>\n"
    )


def _op_table_html(rows: List[List[str]], full_names: List[str]) -> str:
    """The op or kernel table: short names, the full name on hover."""
    head = "".join(f"<th>{h}</th>" for h in ("delta ms", "baseline", "candidate", "status", "name"))
    body = []
    for (delta, b, c, status, name), full in zip(rows, full_names):
        body.append(
            f'<tr><td class="n {_delta_class(delta)}">{esc(delta)}</td><td class="n">{esc(b)}</td>'
            f'<td class="n">{esc(c)}</td><td>{esc(status)}</td>'
            f'<td class="name" title="{esc(full)}">{esc(name)}</td></tr>'
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
