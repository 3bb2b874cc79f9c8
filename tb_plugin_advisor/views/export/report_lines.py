"""What every report export prints the same way (text, Markdown, HTML): category labels and colours
(the tab's, frontend/src/categories.ts), and the one-line facts about steps, devices, precision,
Tensor Cores and op names, all rounded by the shared rule (formatting.py)."""

from __future__ import annotations

import functools
import math
import textwrap
from typing import Dict, List, Optional, Sequence
from urllib.parse import urlencode

from tb_plugin_advisor.analysis.step_time.categories import DISPLAY_ORDER
from tb_plugin_advisor.analysis.step_time.steps import STEP_SOURCE_WORDS
from tb_plugin_advisor.formatting import (
    fixed,
    format_elapsed,
    format_ms,
    format_number,
    format_pct,
    pct_number,
    trace_micros,
)
from tb_plugin_advisor.readers.formats.descriptor import PERFETTO, TRACE_VIEWER
from tb_plugin_advisor.readers.formats.registry import span_coordinates
from tb_plugin_advisor.report.document import Advice, Device, OpRow, ReportDocument, Span

SEVERITY_COLORS = {"high": "#c62828", "medium": "#ef6c00", "low": "#546e7a"}
TOP_ROWS = 15

# Op and kernel names are long single tokens: keep them whole on their own line rather than cut them.
wrap_words = functools.partial(textwrap.wrap, break_long_words=False, break_on_hyphens=False)


def pct_map(report: ReportDocument) -> Dict[str, float]:
    return {c: report.breakdown_pct.at(c) or 0.0 for c in DISPLAY_ORDER}


def ms_map(report: ReportDocument) -> Dict[str, float]:
    return {c: report.breakdown_ms.at(c) or 0.0 for c in DISPLAY_ORDER}


def device_line(report: ReportDocument) -> str:
    devices = report.devices
    active = [d for d in devices if d.kernel_count or d.memcpy_count]
    if not active:
        return "CPU only" if not devices else "no device activity recorded"
    kinds = sorted({device_label(d) for d in active})
    return f"{len(active)} active device{'s' if len(active) != 1 else ''}: {', '.join(kinds)}"


def device_label(device: Device) -> str:
    """"NVIDIA A100-SXM4-40GB (compute capability 8.0)"; an AMD device by product and gfx target."""
    label = device.product or device.model or f"{device.vendor} {device.kind.upper()}"
    if device.gfx_target:
        label += f" ({device.gfx_target})"
    elif device.compute_capability:
        label += f" (compute capability {device.compute_capability})"
    return label.strip()


def steps_line(report: ReportDocument) -> str:
    steps = report.steps
    count = int(steps.count or 0)
    if not count:
        return "no steps found"
    source = STEP_SOURCE_WORDS.get(str(steps.source), steps.source)
    return (
        f"{count} steps ({source}): mean {fixed(steps.mean_ms or 0.0, 1)} ms, "
        f"median {fixed(steps.median_ms or 0.0, 1)} ms, p90 {fixed(steps.p90_ms or 0.0, 1)} ms"
    )


def precision_line(report: ReportDocument) -> Optional[str]:
    precision = report.precision
    if precision.summary:
        return precision.summary
    shares = {k: v for k, v in report.precision_pct.items() if v is not None and v >= 0.5}
    if not shares:
        return None
    listed = ", ".join(f"{k} {format_pct(v)}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1]))
    verdict = precision.verdict if precision.verdict is not None else "unknown"
    return f"mixed precision {verdict} ({listed})"


def tensor_core_line(report: ReportDocument) -> Optional[str]:
    tc = report.tensor_cores
    if not tc.kernels and not tc.device_time_pct:
        return None
    return (
        f"{format_pct(tc.device_time_pct or 0.0)} of device time on Tensor Cores; "
        f"{format_pct(tc.eligible_time_pct or 0.0)} in ops that could use them"
    )


def op_label(op: OpRow) -> str:
    """The familiar op name, with the oneDNN op TensorFlow ran it as beside it (`… (oneDNN _MklMatMul)`)
    and the outermost op it runs inside, where ops nest (`aten::mkldnn_convolution (in aten::conv2d)`)."""
    name = op.short
    if op.onednn_op:
        name = f"{name} (oneDNN {op.onednn_op})"
    return f"{name} (in {op.within})" if op.within else name


def has_total(ops: Sequence[OpRow]) -> bool:
    """Whether the op rows carry inclusive time beside their self time (host ops, which nest)."""
    return any(op.has("total_ms") for op in ops)


def gain_line(advice: Advice) -> str:
    """What a recommendation's fix is worth, in words: "saves ~12.3–45.6 ms per step (5.2–19 %)", or
    "not estimated: <why>"."""
    gain = advice.expected_gain
    ms, pct = gain.ms_per_step, gain.pct
    if not ms or not pct:
        return f"not estimated: {gain.basis or 'no estimate for this finding'}"
    return (f"saves ~{format_number(ms[0])}–{format_number(ms[1])} ms per step "
            f"({pct_number(pct[0])}–{format_pct(pct[1])})")


def span_when(span: Span) -> str:
    """When a span happens as a person counts: its step and how far into it, and how far into the
    trace ("step 3, 12.4 ms into the step, 1.52 s into the trace"); the raw ts follows it."""
    parts = ["outside the steps" if span.step is None else f"step {span.step}"]
    if span.step is not None and span.step_offset_ms is not None:
        parts.append(f"{format_elapsed(span.step_offset_ms)} into the step")
    if span.trace_offset_ms is not None:
        parts.append(f"{format_elapsed(span.trace_offset_ms)} into the trace")
    return ", ".join(parts)


def span_lines(advice: Advice, run: str = "") -> List[str]:
    """A recommendation's or finding's evidence spans in words, one line each (name, step, time in the
    trace, duration, thread and ids), then how to open them; [] without spans. Plain text: each
    output escapes it."""
    spans = advice.evidence_spans
    out = []
    for s in spans:
        coordinates = span_coordinates(s.format or "")  # None: a label no format writes
        pid_name, tid_name = coordinates.id_names if coordinates else ("pid", "tid")
        ids = f"{pid_name} {s.pid}, {tid_name} {s.tid}"
        duration = format_ms((s.dur_us or 0) / 1000)
        out.append(f"{s.short}: {span_when(s)}, at {trace_micros(s.ts_us)}, {duration}, {s.thread} ({ids}) "
                   f"[{s.host}]")
        if coordinates and coordinates.viewer == TRACE_VIEWER and run:
            out.append(f"  open: <tensorboard>/{trace_viewer_query(run, s)}")
    first = span_coordinates(spans[0].format or "") if spans else None
    if first and first.viewer == PERFETTO:
        out.append('open: the Advisor tab\'s "Open in Perfetto", or load the trace file in '
                   "https://ui.perfetto.dev and find the pid, tid and ts above")
    return out


def _ms_text(value: float) -> str:
    """Milliseconds for a URL, to the ns, as the tab writes them."""
    ns = value * 1e6
    return repr(max(0, round(ns)) / 1e6) if math.isfinite(ns) else "0"


def trace_viewer_query(run: str, span: Span) -> str:
    """xprof's trace viewer page around a span, as the tab's traceViewerUrl builds it (urls.ts), below
    TensorBoard's address: its data URL (run, host) and its first viewport (`view_start`/`view_end`,
    ms on the trace's base). The Profile tab itself keeps no time window in its URL."""
    ts, dur = span.ts_us or 0.0, span.dur_us or 0.0
    pad = max(dur, 1000.0)
    host = span.host
    data = "/data/plugin/profile/data?" + urlencode({"run": run, "tag": "trace_viewer@", "host": host,
                                                     "hosts": host})
    start, end = _ms_text((ts - pad) / 1000), _ms_text((ts + dur + pad) / 1000)
    query = urlencode({"is_streaming": "true", "is_oss": "true", "trace_data_url": data,
                       "view_start": start, "view_end": end})
    return f"data/plugin/profile/trace_viewer_index.html?{query}"
