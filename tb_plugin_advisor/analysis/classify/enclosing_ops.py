"""Which PyTorch op was running on the host at a moment: the outermost `aten::` op (the one a
model's code called: `aten::conv2d`, `aten::convolution_backward`) and the innermost one (which
allocated: `aten::empty` with the sizes it was given).

Ops of one host thread nest and come sorted by start, longest first, so the top-level ones never
overlap: the one starting last at or before a moment is the only outermost candidate. Kernels are
tied to their op through the runtime call that launched them (classify/launching_ops.py);
allocations through their time (analysis/deep/memory_timeline.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.model import Line, Plane, Profile

TORCH_OP_PATTERNS = tuple(p for p in names.HOST_COMPUTE if p.id == "torch_aten_op")

# How far back from a moment the innermost enclosing op is looked for: nested ops start just before
# their children, and a stack of ops is never this deep.
INNERMOST_LOOKBACK = 64


@dataclass
class LineOps:
    """The aten ops of one host line: event indices, starts, ends and the top-level ones."""

    plane: Plane
    line: Line
    events: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    top: np.ndarray  # positions (into `events`) of the top-level ops, by start

    def outermost(self, at: np.ndarray) -> np.ndarray:
        """Position of the outermost op containing each moment of `at`, -1 where none does."""
        if not self.top.size:
            return np.full(at.shape[0], -1, dtype=np.int64)
        position = np.searchsorted(self.starts[self.top], at, side="right") - 1
        candidate = self.top[np.clip(position, 0, self.top.size - 1)]
        inside = (position >= 0) & (at <= self.ends[candidate])
        return np.where(inside, candidate, -1)

    def innermost(self, at: int) -> int:
        """Position of the innermost op containing the moment `at`, -1 where none does."""
        last = int(np.searchsorted(self.starts, at, side="right"))
        for k in range(last - 1, max(-1, last - 1 - INNERMOST_LOOKBACK), -1):
            if self.ends[k] >= at:
                return k
        return -1

    def name(self, position: int) -> str:
        return self.plane.event_names[int(self.line.metadata_index[int(self.events[position])])]


def host_ops(profile: Profile) -> List[LineOps]:
    """The aten ops of every host line that has any."""
    found: List[LineOps] = []
    for plane in profile.host_planes:
        is_op = np.append(names.matching(TORCH_OP_PATTERNS, plane.event_names), False)
        if not is_op.any():
            continue
        for line in plane.lines:
            if len(line) == 0:
                continue
            events = np.flatnonzero(is_op[line.metadata_index])
            if not events.size:
                continue
            starts = line.start_ns[events]
            ends = starts + line.duration_ns[events]
            found.append(LineOps(plane, line, events, starts, ends, _top_level(starts, ends)))
    return found


def op_at(lines: List[LineOps], at: int) -> Optional[Tuple[str, str, Optional[str]]]:
    """(outermost op, innermost op, the innermost op's `Concrete Inputs` text) running at `at`; of
    several threads running ops then, the one whose innermost op is shortest (closest to the moment).
    None when no op runs then."""
    best: Optional[Tuple[int, LineOps, int, int]] = None
    moment = np.array([at], dtype=np.int64)
    for ops in lines:
        outer = int(ops.outermost(moment)[0])
        if outer < 0:
            continue
        inner = ops.innermost(at)
        inner = outer if inner < 0 else inner
        length = int(ops.ends[inner] - ops.starts[inner])
        if best is None or length < best[0]:
            best = (length, ops, outer, inner)
    if best is None:
        return None
    _, ops, outer, inner = best
    concrete = ops.line.stat_value("concrete_inputs", int(ops.events[inner]))
    return ops.name(outer), ops.name(inner), concrete if isinstance(concrete, str) else None


def _top_level(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    top: List[int] = []
    reach: Optional[int] = None
    for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        if reach is None or start >= reach:
            top.append(i)
            reach = end
    return np.array(top, dtype=np.int64)
