"""The user's own input annotations: where a loop without tf.data or a DataLoader (JAX, custom loops)
marks batch preparation itself — `jax.profiler.TraceAnnotation("input")`,
`tf.profiler.experimental.Trace("load_batch")`, `torch.profiler.record_function("dataloader")` —
the step waits inside those ranges. The breakdown already counts them as input (the names are
event_names.DATA_LOADING_WORDS, on the step's own thread, never a range that holds whole steps);
this says which annotations, how long per step, the longest waits, and what runs inside them
(Python frames with the Python tracer on, DevicePut, ops).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify.prefilter import text_batch
from tb_plugin_advisor.analysis.intervals import covered, outermost, union
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.step_time.windows import StepWindows
from tb_plugin_advisor.formatting import fixed, format_ms, format_pct
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.model import Line, Profile

LONGEST_WAITS = 3
TOP_INSIDE = 5
MIN_SHOWN_NS = 1_000  # events inside the annotations under a microsecond in all are left out


@dataclass
class AnnotatedInput:
    """Per annotation name, summed over the steady steps (per step in JSON and words)."""

    steps: int
    step_ns: float  # mean steady step
    wait_ns: int = 0  # union of every input annotation inside the steady steps
    by_name: Dict[str, Tuple[int, int]] = field(default_factory=dict)  # name → (ns, calls)
    longest: List[Tuple[str, Optional[int], int]] = field(default_factory=list)  # (name, step, ns)
    inside: List[Tuple[str, int]] = field(default_factory=list)  # outermost events inside, ns

    def per_step_ms(self, ns: float) -> float:
        return ns / 1e6 / max(self.steps, 1)

    def pct(self, ns: float) -> float:
        return 100.0 * ns / (self.step_ns * self.steps) if self.step_ns > 0 else 0.0

    @property
    def ranked(self) -> List[Tuple[str, int, int]]:
        return sorted(((n, ns, c) for n, (ns, c) in self.by_name.items()), key=lambda x: (-x[1], x[0]))

    @property
    def main(self) -> str:
        """The annotation the step waits in longest."""
        return self.ranked[0][0] if self.by_name else ""

    def to_json(self) -> Dict[str, Any]:
        ms = self.per_step_ms
        return {
            "wait_ms_per_step": _r(ms(self.wait_ns)),
            "wait_pct": _r(self.pct(self.wait_ns), 2),
            "names": [
                {"name": n, "ms_per_step": _r(ms(ns)), "pct": _r(self.pct(ns), 2),
                 "calls_per_step": _r(c / max(self.steps, 1), 3)}
                for n, ns, c in self.ranked[:10]
            ],
            "longest_waits": [{"name": n, "step": s, "ms": _r(ns / 1e6)} for n, s, ns in self.longest],
            "inside": [{"name": n, "ms_per_step": _r(ms(ns))} for n, ns in self.inside],
        }

    def evidence(self) -> List[str]:
        ms = self.per_step_ms
        listed = "; ".join(
            f"'{n}' {format_ms(ms(ns))} ({format_pct(self.pct(ns))}, {fixed(c / max(self.steps, 1), 1)} "
            "per step)"
            for n, ns, c in self.ranked[:3]
        )
        out = [
            "No tf.data pipeline or DataLoader: the step prepares its input itself, inside annotations "
            f"named for it. Per step: {listed}."
        ]
        if self.longest:
            out.append("Longest waits: " + ", ".join(
                f"'{n}' in {'step ' + str(s) if s is not None else 'a step'} {format_ms(ns / 1e6)}"
                for n, s, ns in self.longest) + ".")
        if self.inside:
            out.append("Inside them, per step: " + ", ".join(
                f"{n} {format_ms(ms(ns))}" for n, ns in self.inside) + ".")
        return out


def analyze_input_annotations(profile: Profile, windows: StepWindows, steps: Optional[Steps]
                              ) -> Optional[AnnotatedInput]:
    """None without steps (the annotations are found on the steps' own threads) or without any such
    annotation in the steady steps."""
    if steps is None or not steps.count or not windows.count:
        return None
    result = AnnotatedInput(steps=windows.count, step_ns=windows.mean_ns)
    spans: List[Tuple[np.ndarray, np.ndarray]] = []
    inside: Dict[str, int] = {}
    calls: List[Tuple[int, int, str]] = []
    for p, i in sorted(set(steps.step_lines)):
        line = profile.planes[p].lines[i]
        event_names = line.plane.event_names
        every = np.ones(len(event_names), dtype=bool)
        loading = names.data_loading_annotations(text_batch(event_names), every)
        rows = windows.rows_inside(line, np.flatnonzero(loading[line.metadata_index]))
        rows = rows[~steps.hold_a_step(line.start_ns[rows], line.end_ns[rows])]
        if not rows.size:
            continue
        rows = rows[outermost(line.start_ns[rows], line.end_ns[rows])]
        spans.append((line.start_ns[rows], line.end_ns[rows]))
        table = line.plane.event_names
        for k in rows.tolist():
            name = table[int(line.metadata_index[k])]
            ns, count = result.by_name.get(name, (0, 0))
            result.by_name[name] = (ns + int(line.duration_ns[k]), count + 1)
            calls.append((int(line.duration_ns[k]), int(line.start_ns[k]), name))
            _add_inside(line, k, inside)
    if not result.by_name:
        return None
    merged = union(np.concatenate([s for s, _ in spans]), np.concatenate([e for _, e in spans]))
    result.wait_ns = int(covered(merged, windows.start_ns, windows.end_ns).sum())
    calls.sort(key=lambda c: (-c[0], c[1]))
    result.longest = [(name, windows.step_number_at(start), ns) for ns, start, name in calls[:LONGEST_WAITS]]
    shown = [(name, ns) for name, ns in inside.items() if ns >= MIN_SHOWN_NS]
    result.inside = sorted(shown, key=lambda kv: (-kv[1], kv[0]))[:TOP_INSIDE]
    return result


def _add_inside(line: Line, k: int, inside: Dict[str, int]) -> None:
    start, end = int(line.start_ns[k]), int(line.end_ns[k])
    first = int(np.searchsorted(line.start_ns, start, side="left"))
    last = int(np.searchsorted(line.start_ns, end, side="left"))
    kids = np.arange(first, last)
    kids = kids[(kids != k) & (line.end_ns[kids] <= end)]
    kids = kids[outermost(line.start_ns[kids], line.end_ns[kids])]
    table = line.plane.event_names
    for meta, ns in zip(line.metadata_index[kids].tolist(), line.duration_ns[kids].tolist()):
        inside[table[meta]] = inside.get(table[meta], 0) + int(ns)
