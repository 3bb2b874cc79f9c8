"""The deeper views of a report (kernel statistics, memory over time, collectives, roofline) as text,
Markdown and HTML sections. render.py appends them to the whole report; `tb-advisor report --section`
prints one alone. Every profile string is untrusted: HTML escapes it, Markdown escapes table cells.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tb_plugin_advisor.analysis.classify.patterns import short_kernel_name
from tb_plugin_advisor.formatting import fixed
from tb_plugin_advisor.views.export import collectives as render_collectives
from tb_plugin_advisor.views.export import roofline as render_roofline
from tb_plugin_advisor.views.export.markup import html_escape as esc
from tb_plugin_advisor.views.export.markup import markdown_escape as md
from tb_plugin_advisor.views.export.tables import (
    findings_of,
    fmt_bytes,
    html_findings,
    html_table,
    md_findings,
    md_table,
    num,
    opt,
    text_findings,
    text_table,
)

TOP_KERNELS = 15
TOP_LIVE = 10


def _dim3(value: Any) -> str:
    return "×".join(str(int(v)) for v in value) if value else "—"


def _occupancy(k: Dict[str, Any]) -> str:
    if k.get("occupancy_pct") is None:
        return "—"
    tag = {"profile_theoretical": "theor.", "profile_achieved_estimate": "achieved est.",
           "computed_theoretical": "computed"}.get(str(k.get("occupancy_source")), "")
    value = f"{fixed(num(k['occupancy_pct']), 1)} %"
    return f"{value} ({tag})" if tag else value


# ---------------------------------------------------------------------------------------------------
# Plain rows shared by the three formats


def kernel_summary(ks: Dict[str, Any]) -> Optional[str]:
    if not ks or not ks.get("launches"):
        return None
    per_step = ks.get("launches_per_step")
    parts = [f"{ks['launches']} launches of {ks.get('distinct')} kernels, "
             f"{fixed(num(ks.get('total_ms')), 2)} ms"]
    if per_step is not None:
        parts.append(f"{fixed(num(per_step), 0)} launches per step")
    parts.append(f"{fixed(num(ks.get('tiny_launch_pct')), 0)} % of launches under 10 µs")
    if ks.get("occupancy_pct") is not None:
        parts.append(f"occupancy {fixed(num(ks['occupancy_pct']), 1)} % (time-weighted)")
    parts.append(f"{fixed(num(ks.get('tensor_core_time_pct')), 0)} % of kernel time on Tensor Cores")
    return "; ".join(parts)


KERNEL_HEADERS = ("kernel", "launches", "total ms", "mean µs", "min µs", "max µs", "grid", "block", "regs",
                  "shared", "occupancy", "TC")


def kernel_cells(k: Dict[str, Any], short: bool = False) -> List[str]:
    """A kernel's row; `short`: its name without return type, parameters and template arguments
    (terminal and Markdown tables, where a C++ signature would fill the screen)."""
    name = str(k.get("name", ""))
    return [
        short_kernel_name(name) if short else name, str(k.get("launches", "")),
        fixed(num(k.get("total_ms")), 3),
        fixed(num(k.get("mean_us")), 1), fixed(num(k.get("min_us")), 1), fixed(num(k.get("max_us")), 1),
        _dim3(k.get("grid")), _dim3(k.get("block")), opt(k.get("registers_per_thread"), 0),
        fmt_bytes(k.get("shared_memory_bytes")) if k.get("shared_memory_bytes") is not None else "—",
        _occupancy(k), "yes" if k.get("tensor_cores") else "no",
    ]


def memory_lines(a: Dict[str, Any]) -> List[str]:
    """Sentences about one allocator, most important first."""
    where = f" in step {a['peak_step']}" if a.get("peak_step") is not None else ""
    op = f", during {a['peak_op']}" if a.get("peak_op") else ""
    head = f"{a.get('host') + ': ' if a.get('host') else ''}{a['allocator']} ({a['kind']})"
    lines = [f"{head}: peak {fmt_bytes(a['peak_bytes'])} at {fixed(num(a.get('peak_ms')), 1)} ms{where}{op}"
             + (" (relative to the first record: no in-use count recorded)" if a.get("relative") else "")]
    if a.get("capacity_bytes"):
        source = str(a.get("capacity_source", "")).replace("_", " ")
        lines.append(f"headroom {fmt_bytes(a.get('headroom_bytes'))} "
                     f"({fixed(num(a.get('headroom_pct')), 1)} %) "
                     f"of {fmt_bytes(a['capacity_bytes'])} ({source})")
    if a.get("fragmentation_pct") is not None:
        lines.append(f"fragmentation at the peak {fixed(num(a['fragmentation_pct']), 1)} % "
                     f"({str(a.get('fragmentation_source', '')).replace('_', ' ')})")
    if a.get("live_at_peak_count"):
        dtypes = ", ".join(f"{k} {fmt_bytes(v)}" for k, v in (a.get("live_at_peak_by_dtype") or {}).items())
        lines.append(f"{a['live_at_peak_count']} allocations live at the peak, "
                     f"{fmt_bytes(a['live_at_peak_bytes'])}"
                     + (f" ({dtypes})" if dtypes else "")
                     + (f"; {fmt_bytes(a['live_at_peak_unrecorded_bytes'])} allocated before the capture"
                        if a.get("live_at_peak_unrecorded_bytes") else ""))
    return lines


# The descriptive columns of the live-at-peak table; one that no row fills is left out, not dashed.
LIVE_OPTIONAL = ("op", "shape", "dtype", "region")


def live_table(rows: List[Dict[str, Any]]) -> Tuple[List[str], List[List[str]]]:
    """(headers, cells) of the live allocations: bytes, the descriptive columns some row fills, time."""
    shown = [key for key in LIVE_OPTIONAL if any(row.get(key) for row in rows)]
    cells = [[fmt_bytes(row.get("bytes")), *[str(row.get(key) or "—") for key in shown],
              opt(row.get("allocated_ms"), 2)] for row in rows]
    return ["bytes", *shown, "allocated at ms"], cells


# ---------------------------------------------------------------------------------------------------
# Text


def text_kernels(report: Dict[str, Any], width: int = 100) -> List[str]:
    ks = report.get("kernel_stats") or {}
    summary = kernel_summary(ks)
    if not summary:
        return []
    rows = [kernel_cells(k, short=True) for k in (ks.get("kernels") or [])[:TOP_KERNELS]]
    return (["", "Kernel statistics:", f"  {summary}"] + text_findings(ks)
            + text_table(KERNEL_HEADERS, rows, max(24, width - 90)))


def text_memory(report: Dict[str, Any], width: int = 100) -> List[str]:
    memory = report.get("memory") or {}
    allocators = memory.get("allocators") or []
    if not allocators:
        return []
    out = ["", "Memory over time:"]
    for a in allocators:
        lines = memory_lines(a)
        out.append(f"  {lines[0]}")
        out += [f"      {x}" for x in lines[1:]]
    out += text_findings(memory)
    main = allocators[0]
    headers, live = live_table((main.get("live_at_peak") or [])[:TOP_LIVE])
    if live:  # the descriptive columns first (the op is the wide one), bytes last
        out.append(f"  Largest allocations live at the peak of {main['allocator']}:")
        out += text_table(headers[1:] + headers[:1], [c[1:] + c[:1] for c in live], max(24, width - 60))
    return out


TEXT_SECTIONS: Dict[str, Callable[[Dict[str, Any], int], List[str]]] = {
    "kernels": text_kernels,
    "memory": text_memory,
    "collectives": render_collectives.text,
    "roofline": render_roofline.text,
}


def text_sections(report: Dict[str, Any], width: int, names: Sequence[str] = tuple(TEXT_SECTIONS)
                  ) -> List[str]:
    out: List[str] = []
    for name in names:
        out += TEXT_SECTIONS[name](report, width)
    return out


# ---------------------------------------------------------------------------------------------------
# Markdown


def md_kernels(report: Dict[str, Any]) -> List[str]:
    ks = report.get("kernel_stats") or {}
    summary = kernel_summary(ks)
    if not summary:
        return []
    rows = [kernel_cells(k, short=True) for k in (ks.get("kernels") or [])[:TOP_KERNELS]]
    return (["", "## Kernel statistics", "", md(summary), ""] + md_findings(ks)
            + ([""] if findings_of(ks) else []) + md_table(KERNEL_HEADERS, rows))


def md_memory(report: Dict[str, Any]) -> List[str]:
    allocators = (report.get("memory") or {}).get("allocators") or []
    if not allocators:
        return []
    out = ["", "## Memory over time", ""]
    for a in allocators:
        lines = memory_lines(a)
        out.append(f"- {md(lines[0])}" + "".join(f"; {md(x)}" for x in lines[1:]))
    findings = md_findings(report.get("memory") or {})
    out += ([""] + findings) if findings else []
    main = allocators[0]
    headers, live = live_table((main.get("live_at_peak") or [])[:TOP_LIVE])
    if live:
        out += ["", f"Largest allocations live at the peak of {md(main['allocator'])}:", ""]
        out += md_table(headers, live, numeric_from=0)
    return out


MD_SECTIONS: Dict[str, Callable[[Dict[str, Any]], List[str]]] = {
    "kernels": md_kernels,
    "memory": md_memory,
    "collectives": render_collectives.markdown,
    "roofline": render_roofline.markdown,
}


def md_sections(report: Dict[str, Any], names: Sequence[str] = tuple(MD_SECTIONS)) -> List[str]:
    out: List[str] = []
    for name in names:
        out += MD_SECTIONS[name](report)
    return out


# ---------------------------------------------------------------------------------------------------
# HTML


def memory_chart(a: Dict[str, Any], index: int) -> str:
    """Where the embedded bundle draws allocator `index`'s curve with the tab's own memory chart
    (frontend/src/views/memorychart.ts), and the curve's extent in words."""
    tl = a.get("timeline") or {}
    t = tl.get("t_ms") or []
    if len(t) < 2:
        return ""
    return (
        f'<div class="adv-chart" data-advisor-memory="{index}" data-testid="memory-chart-slot"></div>'
        f'<div class="muted">{esc(a["allocator"])}: {len(t)} points'
        f"{' (down-sampled, peak kept)' if tl.get('downsampled') else ''}, "
        f"{fixed(min(t), 1)} to {fixed(max(t), 1)} ms</div>"
    )


def html_kernels(report: Dict[str, Any], charts: bool = False) -> str:
    ks = report.get("kernel_stats") or {}
    summary = kernel_summary(ks)
    if not summary:
        return ""
    rows = [kernel_cells(k) for k in (ks.get("kernels") or [])[: TOP_KERNELS * 2]]
    return (f'<h2 id="kernel-stats">Kernel statistics</h2><p>{esc(summary)}</p>{html_findings(ks)}'
            + html_table(KERNEL_HEADERS, rows))


def html_memory(report: Dict[str, Any], charts: bool = False) -> str:
    memory = report.get("memory") or {}
    allocators = memory.get("allocators") or []
    if not allocators:
        return ""
    parts = ['<h2 id="memory">Memory over time</h2>']
    for index, a in enumerate(allocators):
        lines = memory_lines(a)
        parts.append(f"<p><b>{esc(lines[0])}</b><br>" + "<br>".join(esc(x) for x in lines[1:]) + "</p>")
        if charts:
            parts.append(memory_chart(a, index))
    parts.append(html_findings(memory))
    main = allocators[0]
    headers, live = live_table((main.get("live_at_peak") or [])[:TOP_LIVE])
    if live:
        parts.append(f"<h3>Largest allocations live at the peak of {esc(main['allocator'])}</h3>")
        parts.append(html_table(headers, live, name_cols=tuple(range(1, len(headers) - 1))))
    return "".join(parts)


# Each takes the report and whether the page embeds the bundle that draws the tab's charts (the
# whole-report HTML does; the `--section` HTML has no scripts, so it shows the tables only).
HTML_SECTIONS: Dict[str, Callable[[Dict[str, Any], bool], str]] = {
    "kernels": html_kernels,
    "memory": html_memory,
    "collectives": render_collectives.html,
    "roofline": render_roofline.html,
}



def html_sections(report: Dict[str, Any], names: Sequence[str] = tuple(HTML_SECTIONS), charts: bool = False
                  ) -> List[str]:
    out = []
    for name in names:
        part = HTML_SECTIONS[name](report, charts)
        if part:
            out.append(part)
    return out
