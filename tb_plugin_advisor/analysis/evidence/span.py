"""One evidence span: an event of the trace file that shows a finding, in the file's own coordinates,
so a trace viewer can select it. Plain data (the HostReport outlives the Profile it came from).

Kineto: `pid`/`tid` and `ts_us`/`dur_us` are the event's fields as the JSON writes them (µs, relative
to `baseTimeNanoseconds` where the trace has one). XSpace: `pid`/`tid` are the XPlane and XLine ids,
`ts_us` the event's start (line timestamp + offset) in µs since the epoch, the profile's time base.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from tb_plugin_advisor.analysis.classify.short_names import short_name

# What a span shows; each rule's record (advice/rule.py: `evidence`) names the kinds that show it.
KINDS = ("input_annotation", "input_wait", "host_sync", "worst_step", "early_step", "slowest_kernel",
         "transpose_kernel", "fp32_matmul", "longest_copy", "pageable_copy", "collective")


@dataclass(frozen=True)
class EvidenceSpan:
    """One trace event a finding points at, addressed as its file writes it (so a timeline can open
    it) and in the Advisor's own terms (step, thread label)."""

    kind: str  # one of KINDS
    host: str
    pid: Any  # Kineto: the event's pid as written (int or str); XSpace: the plane id
    tid: Any  # Kineto: the event's tid as written; XSpace: the line id
    ts_us: float
    dur_us: float
    start_ns: int  # the same start and duration in whole ns (a µs float cannot hold an epoch ns)
    duration_ns: int
    name: str
    step: Optional[int]  # the step (number) the span starts in; None outside the steps
    thread: str  # the line's name as the Advisor shows it ("python3 (1234)", "Stream #7")
    format: str  # the label of the file's span coordinates (readers/formats/): kineto, xspace
    # The times a person uses beside the file's raw `ts` (which stays for Perfetto and the trace viewer):
    # ms from the start of the step it starts in (None outside the steps), and from the trace's first event.
    step_offset_ms: Optional[float] = None
    trace_offset_ms: Optional[float] = None

    def to_json(self) -> Dict[str, Any]:
        return {
            "kind": self.kind,
            "host": self.host,
            "pid": _exact_in_javascript(self.pid),
            "tid": _exact_in_javascript(self.tid),
            "ts_us": self.ts_us,
            "dur_us": self.dur_us,
            "start_ns": self.start_ns,
            "duration_ns": self.duration_ns,
            "name": self.name,
            "short_name": short_name(self.name),
            "step": self.step,
            "thread": self.thread,
            "format": self.format,
            "step_offset_ms": _ms(self.step_offset_ms),
            "trace_offset_ms": _ms(self.trace_offset_ms),
        }


def _ms(value: Optional[float]) -> Optional[float]:
    """An offset as written: to the µs (three decimals of a ms)."""
    return None if value is None else round(value, 3)


# Integers JavaScript numbers hold exactly (XSpace line ids are 64-bit thread ids).
SAFE_INTEGER = (1 << 53) - 1


def _exact_in_javascript(value: Any) -> Any:
    """An id as JSON: an int beyond 2^53 as its decimal string, so the tab shows the file's digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > SAFE_INTEGER:
        return str(value)
    return value
