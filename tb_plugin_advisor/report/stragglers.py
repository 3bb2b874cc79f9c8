"""Stragglers: hosts of one run whose step time or input wait stands out from the median host.

In synchronous multi-host training the job runs at the pace of its slowest host, so one slow host is
the whole job's bottleneck even when the pooled numbers look fine. The rule compares each host with
the median host (robust to the straggler itself) and says by how much it stands out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import signed


@dataclass(frozen=True)
class HostFigures:
    """The few numbers per host that the per-host table shows and the straggler rule reads."""

    host: str
    step_time_ms: float  # mean steady step
    input_pct: float  # share of the step waiting for input
    device_util_pct: float  # mean busy share of the host's devices (0 without devices)


@dataclass(frozen=True)
class Straggler:
    """A host whose step time or input share stands out from the median host's."""

    host: str
    metric: str  # "step_time" or "input"
    value: float  # the host's step time (ms) or input share (%)
    median: float  # the median host's
    excess: float  # percent over the median (step_time) or percentage points above it (input)

    def to_json(self) -> Dict[str, object]:
        unit = "%" if self.metric == "step_time" else " points"
        what = "step time" if self.metric == "step_time" else "input wait"
        return {
            "host": self.host,
            "metric": self.metric,
            "value": round(self.value, 4),
            "median": round(self.median, 4),
            "excess": round(self.excess, 2),
            "message": f"{self.host}: {what} {signed(self.excess, 1)}{unit} vs the median host",
        }


def find_stragglers(hosts: List[HostFigures]) -> List[Straggler]:
    """Hosts over the thresholds of analysis/thresholds.py, worst first; none for fewer than 2 hosts."""
    if len(hosts) < 2:
        return []
    step_median = float(np.median([h.step_time_ms for h in hosts]))
    input_median = float(np.median([h.input_pct for h in hosts]))
    out: List[Straggler] = []
    for h in hosts:
        if step_median > 0:
            excess = (h.step_time_ms - step_median) * 100.0 / step_median
            if excess >= th.STRAGGLER_STEP_PCT:
                out.append(Straggler(h.host, "step_time", h.step_time_ms, step_median, excess))
        points = h.input_pct - input_median
        if points >= th.STRAGGLER_INPUT_POINTS:
            out.append(Straggler(h.host, "input", h.input_pct, input_median, points))
    out.sort(key=lambda s: (s.metric != "step_time", -s.excess, s.host))
    return out
