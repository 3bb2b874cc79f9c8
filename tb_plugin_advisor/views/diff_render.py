"""Views of a diff dict (`tb-advisor/diff/1`): plain text, Markdown and a self-contained HTML page.

Views only format: every number and sentence comes from the diff. Every string that came from a
profile (run, host, op and kernel names, verdict summaries, warnings) is escaped for the format it
lands in — HTML-escaped in the page, HTML- and Markdown-escaped in Markdown.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
from typing import Any, Dict, List, Optional, Sequence

from tb_plugin_advisor.analysis.diff import (
    ARROW,
    BOTTLENECK_LABELS,
    CATEGORY_LABELS,
    MINUS,
    SIGNIFICANCE,
    fmt_bytes,
    short_name,
)
from tb_plugin_advisor.formatting import format_number, pct_number
from tb_plugin_advisor.views.diff_hosts_render import hosts_html, hosts_markdown, hosts_text
from tb_plugin_advisor.views.diff_render_deep import deep_tables
from tb_plugin_advisor.views.export_charts import CHART_CSS, chart_canvas, chart_scripts, csp_meta
from tb_plugin_advisor.views.terminal import terminal_output

FORMATS = ("text", "md", "json", "html")
TOP_OPS = 15  # rows of the op and kernel tables in text and Markdown (HTML shows up to 200)
HTML_MAX_ROWS = 200
TABLE_NAME_CHARS = 120  # op/kernel names in text and Markdown tables (HTML shows them whole)
WIDTH = 100

UNCERTAIN_NOTE = "?: the other run's report lists only its top ops; this one may be there below the cut-off"

TEST_NAMES = {
    "mann_whitney_exact": "Mann\u2013Whitney U (exact)",
    "mann_whitney_normal": "Mann\u2013Whitney U (normal approximation)",
    "none": "none (no per-step times)",
}


def render(diff: Dict[str, Any], fmt: str, top: int = TOP_OPS) -> str:
    """The diff in `fmt` (one of FORMATS)."""
    if fmt == "json":
        return json.dumps(diff, indent=2, allow_nan=False)
    if fmt == "text":
        return render_text(diff, top)
    if fmt == "md":
        return render_markdown(diff, top)
    if fmt == "html":
        return render_html(diff)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


# ---------------------------------------------------------------------------------------------------
# Number formatting shared by the views


def _with_sign(value: Optional[float], text: str, plus: bool) -> str:
    """A typographic minus, and a plus for `plus`, unless the value rounds to zero."""
    if value is None:
        return "n/a"
    if text.strip("0.") == "":
        return text
    return (MINUS if value < 0 else "+" if plus else "") + text


def _num(value: Optional[float]) -> str:
    """As the tab rounds it (formatting.py): about three significant digits."""
    return _with_sign(value, format_number(abs(value)) if value is not None else "", plus=False)


def _signed(value: Optional[float]) -> str:
    return _with_sign(value, format_number(abs(value)) if value is not None else "", plus=True)


def _share(value: Optional[float], plus: bool = False) -> str:
    """A share in % (the number only), as the tab rounds percents: whole from 10 up."""
    return _with_sign(value, pct_number(abs(value)) if value is not None else "", plus=plus)


def _pct(value: Optional[float]) -> str:
    return "n/a" if value is None else _with_sign(value, pct_number(abs(value)), plus=True) + " %"


def _p(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def _wrap(text: str, width: int) -> List[str]:
    """Wrap at spaces only: op names keep their hyphens and long names stay whole."""
    return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)


def _title(diff: Dict[str, Any]) -> str:
    return f"{_side(diff, 'baseline')} {ARROW} {_side(diff, 'candidate')}"


def _side(diff: Dict[str, Any], side: str) -> str:
    """`run` or `run (host h)` when one host of a run was diffed."""
    hosts = diff.get(f"{side}_hosts") or []
    name = str(diff.get(side, ""))
    return f"{name} (host {hosts[0]})" if len(hosts) == 1 else name


def _step_rows(st: Dict[str, Any]) -> List[List[str]]:
    return [
        [
            "mean (ms)",
            _num(st["baseline_ms"]),
            _num(st["candidate_ms"]),
            _signed(st["delta_ms"]),
            _pct(st["delta_pct"]),
        ],
        [
            "median (ms)",
            _num(st["baseline_median_ms"]),
            _num(st["candidate_median_ms"]),
            _signed(_minus(st["candidate_median_ms"], st["baseline_median_ms"])),
            _pct(st["median_delta_pct"]),
        ],
        ["steps", str(st["baseline_steps"]), str(st["candidate_steps"]), "", ""],
    ]


def _minus(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else a - b


def _test_line(st: Dict[str, Any]) -> str:
    parts = [f"test: {TEST_NAMES.get(st['test'], st['test'])}"]
    if st["p_value"] is not None:
        parts.append(f"p = {_p(st['p_value'])}")
    if st["shift_ms"] is not None:
        shift = f"shift {_signed(st['shift_ms'])} ms"
        if st["shift_ci_ms"]:
            level = 100 * (1 - SIGNIFICANCE["alpha"])
            lo, hi = st["shift_ci_ms"]
            shift += f" ({level:g} % interval {_signed(lo)} to {_signed(hi)} ms)"
        parts.append(shift)
    if st["noise_pct"] is not None:
        parts.append(f"noise \u00b1{_num(st['noise_pct'])} %")
    verdict = "significant" if st["significant"] else f"not significant: {st['reason']}"
    return "; ".join(parts) + f" \u2192 {verdict}"


def _breakdown_rows(diff: Dict[str, Any]) -> List[List[str]]:
    rows = []
    for key, row in diff["breakdown"].items():
        if row["baseline_ms"] == 0 and row["candidate_ms"] == 0:
            continue
        rows.append(
            [
                CATEGORY_LABELS.get(key, key),
                _num(row["baseline_ms"]),
                _num(row["candidate_ms"]),
                _signed(row["delta_ms"]),
                "yes" if row["significant"] else "no",
            ]
        )
    return rows


def _verdict_line(verdict: Dict[str, Any]) -> str:
    """The run's own verdict sentence, as its report shows it: no second rounding of its numbers and
    no category ids beside it."""
    if not verdict:
        return "n/a"
    if verdict.get("summary"):
        return str(verdict["summary"])
    bottleneck = str(verdict.get("bottleneck", "unknown"))
    return f"bottleneck: {BOTTLENECK_LABELS.get(bottleneck, bottleneck)}"


def _precision_rows(diff: Dict[str, Any]) -> List[List[str]]:
    """Rows per precision; none when neither run has a known precision (CPU-only profiles)."""
    prec = diff["precision_pct"]
    known = [k for k in diff["precision_delta_pct"] if k != "unknown"]
    if not any(prec["baseline"].get(k) or prec["candidate"].get(k) for k in known):
        return []
    rows = []
    for key, delta in diff["precision_delta_pct"].items():
        b, c = prec["baseline"].get(key), prec["candidate"].get(key)
        if not b and not c:
            continue
        rows.append([key, _share(b), _share(c), _share(delta, plus=True)])
    return rows


def _op_rows(rows: Sequence[Dict[str, Any]], limit: int, full_names: bool = False) -> List[List[str]]:
    out = []
    for r in rows[:limit]:
        name = r["name"] if full_names else short_name(r["name"], TABLE_NAME_CHARS)
        inst = r.get("instances") or {}
        if r.get("match") == "normalised" and max(inst.get("baseline", 0), inst.get("candidate", 0)) > 1:
            name += (f"  ({inst.get('baseline', 0)} in the baseline, {inst.get('candidate', 0)} in the "
                     "candidate, compared as one op)")
        out.append(
            [
                _signed(r["delta_ms"]),
                _num(r["baseline_ms"]),
                _num(r["candidate_ms"]),
                r["status"] + ("?" if r.get("uncertain") else ""),
                name,
            ]
        )
    return out


def _memory_line(diff: Dict[str, Any]) -> Optional[str]:
    m = diff["peak_memory_bytes"]
    if m["baseline"] is None and m["candidate"] is None:
        return None
    b = fmt_bytes(m["baseline"]) if m["baseline"] is not None else "n/a"
    c = fmt_bytes(m["candidate"]) if m["candidate"] is not None else "n/a"
    return f"{b} {ARROW} {c}" + (f" ({_pct(m['delta_pct'])})" if m["delta_pct"] is not None else "")


def _tc_line(diff: Dict[str, Any]) -> Optional[str]:
    t = diff["tensor_cores_pct"]
    if not t["baseline"] and not t["candidate"] and not diff["kernels"]:
        return None  # no device kernels on either side: nothing to say
    line = f"{_share(t['baseline'])} {ARROW} {_share(t['candidate'])} % of device time"
    if diff["tensor_cores_delta_pct"] is not None:
        line += f" ({_share(diff['tensor_cores_delta_pct'], plus=True)} points)"
    return line


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
    out = [f"tb-advisor diff: {_title(diff)}", ""]
    out += _wrap(diff["summary"], WIDTH) + [""]
    out.append("Step time")
    out += _table(["", "baseline", "candidate", "delta", "delta %"], _step_rows(st), "lrrrr")
    out += ["  " + line for line in _wrap(_test_line(st), WIDTH - 2)] + [""]
    rows = _breakdown_rows(diff)
    if rows:
        out.append("Breakdown per step (ms)")
        out += _table(["", "baseline", "candidate", "delta", "significant"], rows, "lrrrr") + [""]
    out.append("Verdict")
    out.append(f"  baseline:  {_verdict_line(diff['verdict']['baseline'])}")
    out.append(f"  candidate: {_verdict_line(diff['verdict']['candidate'])}")
    out.append("")
    rows = _precision_rows(diff)
    if rows:
        out.append("Precision (% of compute time)")
        out += _table(["", "baseline", "candidate", "delta"], rows, "lrrr") + [""]
    for label, line in (("Tensor Cores", _tc_line(diff)), ("Peak device memory", _memory_line(diff))):
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
        out += _table(["delta ms", "baseline", "candidate", "status", "name"], _op_rows(rows, top), "rrrll")
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

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def md_escape(text: Any) -> str:
    """Profile text as literal Markdown: no HTML, no emphasis, no links, no table breaks."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False)).replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> List[str]:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|")
    lines += ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in rows]
    return lines


def render_markdown(diff: Dict[str, Any], top: int = TOP_OPS) -> str:
    st = diff["step_time"]
    out = [f"# Profile diff: {md_escape(_title(diff))}", "", md_escape(diff["summary"]), ""]
    out += ["## Step time", ""]
    out += _md_table(["", "baseline", "candidate", "delta", "delta %"], _step_rows(st), "lrrrr")
    out += ["", md_escape(_test_line(st)), ""]
    rows = _breakdown_rows(diff)
    if rows:
        out += ["## Breakdown per step (ms)", ""]
        out += _md_table(["", "baseline", "candidate", "delta", "significant"], rows, "lrrrl") + [""]
    out += ["## Verdict", ""]
    out.append(f"- baseline: {md_escape(_verdict_line(diff['verdict']['baseline']))}")
    out.append(f"- candidate: {md_escape(_verdict_line(diff['verdict']['candidate']))}")
    out.append("")
    rows = _precision_rows(diff)
    if rows:
        out += ["## Precision (% of compute time)", ""]
        out += _md_table(["", "baseline", "candidate", "delta"], rows, "lrrr") + [""]
    for label, line in (("Tensor Cores", _tc_line(diff)), ("Peak device memory", _memory_line(diff))):
        if line:
            out += [f"**{label}:** {md_escape(line)}", ""]
    for title, header, rows in deep_tables(diff):
        out += [f"## {title}", ""] + _md_table(header, rows, "l" + "r" * (len(header) - 1)) + [""]
    for key, what in (("ops", "Ops"), ("kernels", "Kernels")):
        rows = diff[key]
        if not rows:
            continue
        shown = min(top, len(rows))
        out += [f"## {what} (time per step, largest change first; {shown} of {len(rows)})", ""]
        out += _md_table(
            ["delta ms", "baseline", "candidate", "status", "name"], _op_rows(rows, top), "rrrll"
        )
        if any(r.get("uncertain") for r in rows[:top]):
            out += ["", md_escape(UNCERTAIN_NOTE)]
        out.append("")
    out += hosts_markdown(diff, md_escape)
    if diff.get("warnings"):
        out += ["## Warnings", ""] + [f"- {md_escape(w)}" for w in diff["warnings"]] + [""]
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


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for r in rows:
        cells = "".join(f'<td class="{c}">{_e(v)}</td>' for v, c in zip(r, classes))
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
    title = f"Profile diff: {_title(diff)}"
    body: List[str] = [f"<h1>{_e(title)}</h1>", f'<p class="summary">{_e(diff["summary"])}</p>']
    body += [
        "<h2>Step time</h2>",
        _html_table(
            ["", "baseline", "candidate", "delta", "delta %"], _step_rows(st), ["", "n", "n", "n", "n"]
        ),
    ]
    body.append(f'<p class="muted">{_e(_test_line(st))}</p>')
    rows = _breakdown_rows(diff)
    if rows:
        body += ["<h2>Breakdown per step (ms)</h2>", chart_canvas("delta")]
        body.append(
            _html_table(["", "baseline", "candidate", "delta", "significant"], rows, ["", "n", "n", "n", ""])
        )
    body += [
        "<h2>Verdict</h2><ul>",
        f"<li>baseline: {_e(_verdict_line(diff['verdict']['baseline']))}</li>",
        f"<li>candidate: {_e(_verdict_line(diff['verdict']['candidate']))}</li></ul>",
    ]
    rows = _precision_rows(diff)
    if rows:
        body += [
            "<h2>Precision (% of compute time)</h2>",
            _html_table(["", "baseline", "candidate", "delta"], rows, ["", "n", "n", "n"]),
        ]
    for label, line in (("Tensor Cores", _tc_line(diff)), ("Peak device memory", _memory_line(diff))):
        if line:
            body.append(f"<p><b>{_e(label)}:</b> {_e(line)}</p>")
    for title, header, rows in deep_tables(diff):
        body += [f"<h2>{_e(title)}</h2>", _html_table(header, rows, [""] + ["n"] * (len(header) - 1))]
    for key, what in (("ops", "Ops"), ("kernels", "Kernels")):
        rows = diff[key]
        if not rows:
            continue
        shown = min(HTML_MAX_ROWS, len(rows))
        body.append(f"<h2>{what} (time per step, largest change first; {shown} of {len(rows)})</h2>")
        body.append(_op_table_html(_op_rows(rows, HTML_MAX_ROWS, full_names=True)))
        if any(r.get("uncertain") for r in rows[:HTML_MAX_ROWS]):
            body.append(f'<p class="muted">{_e(UNCERTAIN_NOTE)}</p>')
    body += hosts_html(diff)
    if diff.get("warnings"):
        body.append(
            "<h2>Warnings</h2><ul>" + "".join(f"<li>{_e(w)}</li>" for w in diff["warnings"]) + "</ul>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        + csp_meta()
        + f"<title>{_e(title)}</title><style>{_CSS}{CHART_CSS}</style></head><body>\n"
        + "\n".join(b for b in body if b)
        + chart_scripts({"diff": diff})
        + "\n</body></html>\n"
    )


def _op_table_html(rows: List[List[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("delta ms", "baseline", "candidate", "status", "name"))
    body = []
    for delta, b, c, status, name in rows:
        body.append(
            f'<tr><td class="n {_delta_class(delta)}">{_e(delta)}</td><td class="n">{_e(b)}</td>'
            f'<td class="n">{_e(c)}</td><td>{_e(status)}</td><td class="name">{_e(name)}</td></tr>'
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
