"""PyTorch-specific signals for the recommendation rules, read from event names in the steady steps:
which DataLoader iterator fed the loop (num_workers 0 or more), copies from pageable host memory
(no `pin_memory`), and `zero_grad` filling gradients with zeros instead of dropping them.

Kineto names these the same way from 2021 to today (checked on the corpus traces); what each name
means is read from analysis/classify/torch_names.py, the one table of PyTorch's names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

import numpy as np

from tb_plugin_advisor.analysis.classify.event_names import starting_with
from tb_plugin_advisor.analysis.classify.torch_names import (
    ITERATOR_WORKERS,
    TORCH_NAMES,
    copy_source,
    dataloader_iterator,
)
from tb_plugin_advisor.analysis.intervals import window_index
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.step_time.windows import StepWindows
from tb_plugin_advisor.model import Profile


@dataclass
class TorchSignals:
    """PyTorch facts the advice rules read (DataLoader, pageable copies, zero_grad)."""

    dataloader: str = ""  # "single" (num_workers=0) | "multi" | "" (no DataLoader range)
    dataloader_wait_ms: float = 0.0  # per steady step
    pageable_h2d_ms: float = 0.0  # per steady step, device time of pageable host-to-device copies
    pageable_h2d_pct: float = 0.0  # of the steady step time
    zero_grad_fills: float = 0.0  # zero-filling ops inside Optimizer.zero_grad, per steady step


def _masks(names: List[str]) -> Dict[str, np.ndarray]:
    """Per name (and a last False for padding rows), what the signals count: next() on a DataLoader
    without workers or with worker processes, pageable host-to-device copies, zero_grad, zero fills.
    Each name is read only where it starts as the name it may be (one scan of the plane's names
    joined, prefilter.py): a call per name was a million calls, and a list each, per plane."""

    def where(prefix: str, test: Callable[[str], bool]) -> np.ndarray:
        mask = np.zeros(len(names) + 1, dtype=bool)
        rows = np.flatnonzero(starting_with(names, prefix)).tolist()
        mask[rows] = [test(names[i]) for i in rows]
        return mask

    def workers(kind: str) -> Callable[[str], bool]:
        return lambda name: ITERATOR_WORKERS.get(dataloader_iterator(name)) == kind

    def matches(key: str) -> Callable[[str], bool]:
        return lambda name: bool(TORCH_NAMES[key].match(name))

    return {
        "dataloader_single": where(_DATALOADER_NEXT, workers("none")),
        "dataloader_multi": where(_DATALOADER_NEXT, workers("processes")),
        "pageable_h2d": where(_H2D_COPY, lambda name: copy_source(name) == "pageable"),
        "zero_grad": where(_ZERO_GRAD, matches("zero_grad")),
        "zero_fill": where(_ZERO, matches("zero_fill")) | where(_FILL, matches("zero_fill")),
    }


# What each name read above starts with (torch_names.TORCH_NAMES: every name they take does)
_DATALOADER_NEXT, _H2D_COPY, _ZERO_GRAD = "enumerate(DataLoader)#", "Memcpy HtoD (", "Optimizer.zero_grad#"
_ZERO, _FILL = "aten::zero_", "aten::fill_"


def collect_torch_signals(profile: Profile, breakdown: Breakdown, steps: Optional[Steps] = None
                          ) -> Optional[TorchSignals]:
    """None for profiles that are not PyTorch traces. Host events are counted in the host's ranges of
    the steady steps, device copies in the steps' own (device-clock) windows."""
    if profile.framework != "pytorch":
        return None
    device = StepWindows.of(breakdown, steps)
    host = StepWindows.of(breakdown, steps, on_host=True)
    count = max(device.count, 1)
    step_ns = device.mean_ns * device.count
    out = TorchSignals()
    waits = {"single": 0, "multi": 0}
    pageable_ns = fills = 0
    for plane in profile.planes:
        masks = _masks(plane.event_names)
        for line in plane.lines:
            if not len(line):
                continue
            index = line.metadata_index
            for kind in waits:
                rows = host.rows_inside(line, np.flatnonzero(masks[f"dataloader_{kind}"][index]))
                waits[kind] += int(line.duration_ns[rows].sum())
            rows = device.rows_inside(line, np.flatnonzero(masks["pageable_h2d"][index]))
            pageable_ns += int(line.duration_ns[rows].sum())
            zero_grad = np.flatnonzero(masks["zero_grad"][index])
            fill = np.flatnonzero(masks["zero_fill"][index])
            if zero_grad.size and fill.size:
                starts = line.start_ns[zero_grad]
                inside = window_index(starts, starts + line.duration_ns[zero_grad], line.start_ns[fill])
                fills += int(host.rows_inside(line, fill[inside >= 0]).size)
    if waits["single"] or waits["multi"]:
        out.dataloader = "single" if waits["single"] >= waits["multi"] else "multi"
    out.dataloader_wait_ms = (waits["single"] + waits["multi"]) / 1e6 / count
    out.pageable_h2d_ms = pageable_ns / 1e6 / count
    out.pageable_h2d_pct = pageable_ns * 100.0 / step_ns if step_ns else 0.0
    out.zero_grad_fills = fills / count
    return out
