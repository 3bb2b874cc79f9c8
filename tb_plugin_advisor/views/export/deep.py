"""The deeper views of a report (kernel statistics, memory over time, collectives, roofline) and what
the trace supports (the validity matrix) as text, Markdown and HTML sections. render.py appends them
to the whole report; `tb-advisor report --section` prints one alone. Every profile string is
untrusted: HTML escapes it, Markdown escapes table cells.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from tb_plugin_advisor.formatting import fixed
from tb_plugin_advisor.report.document import (
    Allocator,
    KernelRow,
    KernelStats,
    LiveAllocation,
    ReportDocument,
    ValidityRow,
)
from tb_plugin_advisor.views.export import collectives as render_collectives
from tb_plugin_advisor.views.export import roofline as render_roofline
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.report_lines import wrap_words
from tb_plugin_advisor.views.export.tables import (
    fmt_bytes,
    html_findings,
    html_table,
    md_findings,
    md_table,
    opt,
    text_findings,
    text_table,
)

TOP_KERNELS = 15
TOP_LIVE = 10

OCCUPANCY_TAGS = {"profile_theoretical": "theor.", "profile_achieved_estimate": "achieved est.",
                  "computed_theoretical": "computed"}


def _dim3(value: List[Optional[float]]) -> str:
    return "×".join(str(int(v or 0)) for v in value) if value else "—"


def _occupancy(k: KernelRow) -> str:
    if k.occupancy_pct is None:
        return "—"
    tag = OCCUPANCY_TAGS.get(k.occupancy_source, "")
    value = f"{fixed(k.occupancy_pct, 1)} %"
    return f"{value} ({tag})" if tag else value


# ---------------------------------------------------------------------------------------------------
# Plain rows shared by the three formats


def kernel_summary(ks: KernelStats) -> Optional[str]:
    if not ks.launches:
        return None
    per_step = ks.launches_per_step
    parts = [f"{ks.launches} launches of {ks.distinct} kernels, {fixed(ks.total_ms or 0.0, 2)} ms"]
    if per_step is not None:
        parts.append(f"{fixed(per_step, 0)} launches per step")
    parts.append(f"{fixed(ks.tiny_launch_pct or 0.0, 0)} % of launches under 10 µs")
    if ks.occupancy_pct is not None:
        parts.append(f"occupancy {fixed(ks.occupancy_pct, 1)} % (time-weighted)")
    parts.append(f"{fixed(ks.tensor_core_time_pct or 0.0, 0)} % of kernel time on Tensor Cores")
    return "; ".join(parts)


KERNEL_HEADERS = ("kernel", "launches", "total ms", "mean µs", "min µs", "max µs", "grid", "block", "regs",
                  "shared", "occupancy", "TC")


def kernel_cells(k: KernelRow) -> List[str]:
    """A kernel's row, under its short name (a C++ signature would fill the screen); the HTML gives the
    full name on hover, the JSON in `name`."""
    return [
        k.short, "" if k.launches is None else str(k.launches),
        fixed(k.total_ms or 0.0, 3),
        fixed(k.mean_us or 0.0, 1), fixed(k.min_us or 0.0, 1), fixed(k.max_us or 0.0, 1),
        _dim3(k.grid), _dim3(k.block), opt(k.registers_per_thread, 0),
        fmt_bytes(k.shared_memory_bytes),
        _occupancy(k), "yes" if k.tensor_cores else "no",
    ]


def memory_lines(a: Allocator) -> List[str]:
    """Sentences about one allocator, most important first."""
    where = f" in step {a.peak_step}" if a.peak_step is not None else ""
    op = f", during {a.peak_op}" if a.peak_op else ""
    head = f"{a.host + ': ' if a.host else ''}{a.allocator} ({a.kind})"
    lines = [f"{head}: peak {fmt_bytes(a.peak_bytes)} at {fixed(a.peak_ms or 0.0, 1)} ms{where}{op}"
             + (" (relative to the first record: no in-use count recorded)" if a.relative else "")]
    if a.capacity_bytes:
        source = a.capacity_source.replace("_", " ")
        lines.append(f"headroom {fmt_bytes(a.headroom_bytes)} "
                     f"({fixed(a.headroom_pct or 0.0, 1)} %) "
                     f"of {fmt_bytes(a.capacity_bytes)} ({source})")
    if a.fragmentation_pct is not None:
        lines.append(f"fragmentation at the peak {fixed(a.fragmentation_pct, 1)} % "
                     f"({a.fragmentation_source.replace('_', ' ')})")
    if a.live_at_peak_count:
        dtypes = ", ".join(f"{k} {fmt_bytes(v)}" for k, v in a.live_at_peak_by_dtype.items())
        unrecorded = a.live_at_peak_unrecorded_bytes
        lines.append(f"{a.live_at_peak_count} allocations live at the peak, "
                     f"{fmt_bytes(a.live_at_peak_bytes)}"
                     + (f" ({dtypes})" if dtypes else "")
                     + (f"; {fmt_bytes(unrecorded)} allocated before the capture" if unrecorded else ""))
    return lines


# The descriptive columns of the live-at-peak table; one that no row fills is left out, not dashed.
LIVE_OPTIONAL = ("op", "shape", "dtype", "region")


def live_table(rows: List[LiveAllocation]) -> Tuple[List[str], List[List[str]]]:
    """(headers, cells) of the live allocations: bytes, the descriptive columns some row fills, time."""
    shown = [key for key in LIVE_OPTIONAL if any(getattr(row, key) for row in rows)]
    cells = [[fmt_bytes(row.bytes), *[getattr(row, key) or "—" for key in shown], opt(row.allocated_ms, 2)]
             for row in rows]
    return ["bytes", *shown, "allocated at ms"], cells


# ---------------------------------------------------------------------------------------------------
# Text


def text_kernels(report: ReportDocument, width: int = 100) -> List[str]:
    ks = report.kernel_stats
    summary = kernel_summary(ks)
    if not summary:
        return []
    rows = [kernel_cells(k) for k in ks.kernels[:TOP_KERNELS]]
    return (["", "Kernel statistics:", f"  {summary}"] + text_findings(ks.findings)
            + text_table(KERNEL_HEADERS, rows, max(24, width - 90)))


def text_memory(report: ReportDocument, width: int = 100) -> List[str]:
    memory = report.memory
    allocators = memory.allocators
    if not allocators:
        return []
    out = ["", "Memory over time:"]
    for a in allocators:
        lines = memory_lines(a)
        out.append(f"  {lines[0]}")
        out += [f"      {x}" for x in lines[1:]]
    out += text_findings(memory.findings)
    main = allocators[0]
    headers, live = live_table(main.live_at_peak[:TOP_LIVE])
    if live:  # the descriptive columns first (the op is the wide one), bytes last
        out.append(f"  Largest allocations live at the peak of {main.allocator}:")
        out += text_table(headers[1:] + headers[:1], [c[1:] + c[:1] for c in live], max(24, width - 60))
    return out


VALIDITY_TITLE = "What this trace supports"


def _limited(report: ReportDocument) -> List[ValidityRow]:
    """The rows of analyses the trace does not fully support, most severe first."""
    rows = [r for r in report.validity.rows if r.status in ("unsupported", "degraded")]
    return sorted(rows, key=lambda r: r.status != "unsupported")


def _validity_summary(report: ReportDocument) -> str:
    rows = report.validity.rows
    return "" if not rows or _limited(report) else f"every one of the {len(rows)} analyses."


def text_validity(report: ReportDocument, width: int = 100) -> List[str]:
    if not report.validity.rows:
        return []
    summary = _validity_summary(report)
    if summary:
        return ["", f"{VALIDITY_TITLE}: {summary}"]
    out = ["", f"{VALIDITY_TITLE}:"]
    for row in _limited(report):
        out += wrap_words(f"{row.analysis} — {row.status}: {row.reason}", width, initial_indent="  ",
                          subsequent_indent="    ")
        if row.fix:
            out += wrap_words(f"Fix: {row.fix}", width, initial_indent="    ", subsequent_indent="    ")
    return out


TEXT_SECTIONS: Dict[str, Callable[[ReportDocument, int], List[str]]] = {
    "kernels": text_kernels,
    "memory": text_memory,
    "collectives": render_collectives.text,
    "roofline": render_roofline.text,
    "validity": text_validity,
}


def text_sections(report: ReportDocument, width: int, names: Sequence[str] = tuple(TEXT_SECTIONS)
                  ) -> List[str]:
    out: List[str] = []
    for name in names:
        out += TEXT_SECTIONS[name](report, width)
    return out


# ---------------------------------------------------------------------------------------------------
# Markdown


def md_kernels(report: ReportDocument) -> List[str]:
    ks = report.kernel_stats
    summary = kernel_summary(ks)
    if not summary:
        return []
    rows = [kernel_cells(k) for k in ks.kernels[:TOP_KERNELS]]
    findings = ks.findings
    return (["", "## Kernel statistics", "", md(summary), ""] + md_findings(findings)
            + ([""] if findings else []) + md_table(KERNEL_HEADERS, rows))


def md_memory(report: ReportDocument) -> List[str]:
    memory = report.memory
    allocators = memory.allocators
    if not allocators:
        return []
    out = ["", "## Memory over time", ""]
    for a in allocators:
        lines = memory_lines(a)
        out.append(f"- {md(lines[0])}" + "".join(f"; {md(x)}" for x in lines[1:]))
    findings = md_findings(memory.findings)
    out += ([""] + findings) if findings else []
    main = allocators[0]
    headers, live = live_table(main.live_at_peak[:TOP_LIVE])
    if live:
        out += ["", f"Largest allocations live at the peak of {md(main.allocator)}:", ""]
        out += md_table(headers, live, numeric_from=0)
    return out


VALIDITY_HEADERS = ("analysis", "status", "reason", "fix")


def md_validity(report: ReportDocument) -> List[str]:
    if not report.validity.rows:
        return []
    summary = _validity_summary(report)
    if summary:
        return ["", f"## {VALIDITY_TITLE}", "", md(summary[0].upper() + summary[1:])]
    rows = [[r.analysis, r.status, r.reason, r.fix] for r in _limited(report)]
    table = md_table(VALIDITY_HEADERS, rows, numeric_from=len(VALIDITY_HEADERS))  # every column is words
    return ["", f"## {VALIDITY_TITLE}", ""] + table


MD_SECTIONS: Dict[str, Callable[[ReportDocument], List[str]]] = {
    "kernels": md_kernels,
    "memory": md_memory,
    "collectives": render_collectives.markdown,
    "roofline": render_roofline.markdown,
    "validity": md_validity,
}


def md_sections(report: ReportDocument, names: Sequence[str] = tuple(MD_SECTIONS)) -> List[str]:
    out: List[str] = []
    for name in names:
        out += MD_SECTIONS[name](report)
    return out


# ---------------------------------------------------------------------------------------------------
# HTML


def memory_chart(a: Allocator, index: int) -> str:
    """Where the embedded bundle draws allocator `index`'s curve with the tab's own memory chart
    (frontend/src/views/memorychart.ts), and the curve's extent in words."""
    timeline = a.timeline
    t = [v for v in timeline.t_ms if v is not None]
    if len(t) < 2:
        return ""
    return (
        f'<div class="adv-chart" data-advisor-memory="{index}" data-testid="memory-chart-slot"></div>'
        f'<div class="muted">{esc(a.allocator)}: {len(t)} points'
        f"{' (down-sampled, peak kept)' if timeline.downsampled else ''}, "
        f"{fixed(min(t), 1)} to {fixed(max(t), 1)} ms</div>"
    )


def html_kernels(report: ReportDocument, charts: bool = False) -> str:
    ks = report.kernel_stats
    summary = kernel_summary(ks)
    if not summary:
        return ""
    listed = ks.kernels[: TOP_KERNELS * 2]
    rows = [kernel_cells(k) for k in listed]
    return (f'<h2 id="kernel-stats">Kernel statistics</h2><p>{esc(summary)}</p>{html_findings(ks.findings)}'
            + html_table(KERNEL_HEADERS, rows, titles=[k.name for k in listed]))


def html_memory(report: ReportDocument, charts: bool = False) -> str:
    memory = report.memory
    allocators = memory.allocators
    if not allocators:
        return ""
    parts = ['<h2 id="memory">Memory over time</h2>']
    for index, a in enumerate(allocators):
        lines = memory_lines(a)
        parts.append(f"<p><b>{esc(lines[0])}</b><br>" + "<br>".join(esc(x) for x in lines[1:]) + "</p>")
        if charts:
            parts.append(memory_chart(a, index))
    parts.append(html_findings(memory.findings))
    main = allocators[0]
    headers, live = live_table(main.live_at_peak[:TOP_LIVE])
    if live:
        parts.append(f"<h3>Largest allocations live at the peak of {esc(main.allocator)}</h3>")
        parts.append(html_table(headers, live, name_cols=tuple(range(1, len(headers) - 1))))
    return "".join(parts)


# Each takes the report and whether the page embeds the bundle that draws the tab's charts (the
# whole-report HTML does; the `--section` HTML has no scripts, so it shows the tables only).
def html_validity(report: ReportDocument, charts: bool = False) -> str:
    if not report.validity.rows:
        return ""
    title = f'<h2 id="validity">{esc(VALIDITY_TITLE)}</h2>'
    summary = _validity_summary(report)
    if summary:
        return f"{title}<p>{esc(summary[0].upper() + summary[1:])}</p>"
    rows = [[r.analysis, r.status, r.reason, r.fix] for r in _limited(report)]
    return title + html_table(VALIDITY_HEADERS, rows, name_cols=(0, 1, 2, 3))


HTML_SECTIONS: Dict[str, Callable[[ReportDocument, bool], str]] = {
    "kernels": html_kernels,
    "memory": html_memory,
    "collectives": render_collectives.html,
    "roofline": render_roofline.html,
    "validity": html_validity,
}



def html_sections(report: ReportDocument, names: Sequence[str] = tuple(HTML_SECTIONS), charts: bool = False
                  ) -> List[str]:
    out = []
    for name in names:
        part = HTML_SECTIONS[name](report, charts)
        if part:
            out.append(part)
    return out
