"""The steady steps as sorted time windows with their step numbers: what the per-step input analyses
(DataLoader, user input annotations) count events in, and how they name the step a long wait fell in.

The breakdown's windows are the steps (or the whole profile when none were found); warm-up steps
are not steady and count nowhere. On a GPU run the steps are on the device's clock (device_clock.py);
host events (a DataLoader's next(), the user's input annotations) are counted in the host's own
ranges of the same steps (`on_host=True`), device events in the steps' windows, and both are per
step of the steps' own length (`mean_ns`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from tb_plugin_advisor.analysis.intervals import in_windows, window_index
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.model import Line


@dataclass(frozen=True)
class StepWindows:
    """The steady steps' time windows, for the analyses that add time up per step."""

    start_ns: np.ndarray  # sorted, disjoint
    end_ns: np.ndarray
    numbers: List[Optional[int]]  # the step number of each window (None: unnumbered or no steps)
    mean_ns: float  # the mean steady step on the steps' own clock (what per-step shares divide by)

    @classmethod
    def of(cls, breakdown: Breakdown, steps: Optional[Steps] = None, on_host: bool = False) -> StepWindows:
        """The steady windows; `on_host`: the host's ranges of the steps instead of their windows."""
        index = np.flatnonzero(breakdown.steady)
        order = np.argsort(breakdown.window_start_ns[index], kind="stable")
        index = index[order]
        numbered = steps is not None and steps.count == breakdown.window_count
        numbers = [steps.numbers[i] if numbered else None for i in index.tolist()]
        lengths = breakdown.window_end_ns[index] - breakdown.window_start_ns[index]
        mean = float(lengths.mean()) if index.size else 0.0
        if on_host and numbered:
            return cls(steps.host_start_ns[index], steps.host_end_ns[index], numbers, mean)
        return cls(breakdown.window_start_ns[index], breakdown.window_end_ns[index], numbers, mean)

    @property
    def count(self) -> int:
        return int(self.start_ns.shape[0])

    def rows_inside(self, line: Line, rows: np.ndarray) -> np.ndarray:
        """The events of `rows` (indices into the line) that start inside a steady window."""
        if not rows.size or not self.count:
            return rows[:0]
        return rows[in_windows(self.start_ns, self.end_ns, line.start_ns[rows])]

    def step_number_at(self, t_ns: int) -> Optional[int]:
        k = int(window_index(self.start_ns, self.end_ns, np.array([t_ns], dtype=np.int64))[0])
        return self.numbers[k] if k >= 0 else None
