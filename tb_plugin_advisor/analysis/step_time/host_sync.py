"""Host synchronisations (event_names.HOST_SYNC): how many per step, how long the host waits in them,
and how much of that wait the device sat idle — a sync that stalls the device costs step time, one
that overlaps device work only costs host time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

import numpy as np

from tb_plugin_advisor.analysis import intervals as iv
from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.intervals import in_windows
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown, is_producer_line
from tb_plugin_advisor.model import Profile

MAX_CALLS = 6


@dataclass
class HostSync:
    """Per steady step: sync calls, the host's time in them, and the device idle time during them."""

    steps: int = 0
    count: float = 0.0
    time_ms: float = 0.0
    device_idle_ms: float = 0.0
    step_ms: float = 0.0
    has_device: bool = False
    calls: Dict[str, Tuple[float, float]] = field(default_factory=dict)  # name → (count, ms) per step

    @property
    def time_pct(self) -> float:
        return 100.0 * self.time_ms / self.step_ms if self.step_ms else 0.0

    @property
    def device_idle_pct(self) -> float:
        """Device idle during syncs, % of the step."""
        return 100.0 * self.device_idle_ms / self.step_ms if self.step_ms else 0.0

    def top_calls(self) -> List[Tuple[str, float, float]]:
        rows = sorted(self.calls.items(), key=lambda kv: -kv[1][1])[:MAX_CALLS]
        return [(name, count, ms) for name, (count, ms) in rows]

    def to_json(self) -> Dict[str, Any]:
        return {
            "count_per_step": round(self.count, 3),
            "time_ms": round(self.time_ms, 4),
            "time_pct": round(self.time_pct, 2),
            "device_idle_ms": round(self.device_idle_ms, 4) if self.has_device else None,
            "device_idle_pct": round(self.device_idle_pct, 2) if self.has_device else None,
            "calls": [
                {"name": name, "count": round(count, 3), "time_ms": round(ms, 4)}
                for name, count, ms in self.top_calls()
            ],
        }


def analyze_host_sync(profile: Profile, breakdown: Breakdown) -> HostSync:
    out = HostSync()
    lo, hi = breakdown.steady_windows()
    if not lo.size:
        return out
    n = int(lo.size)
    out.steps = n
    out.step_ms = float((hi - lo).sum()) / n / 1e6
    tables = [t for device in profile.devices for t in (device.kernels, device.memcpys) if len(t)]
    out.has_device = bool(tables)
    starts_all, ends_all = [], []
    for plane in profile.host_planes:
        is_sync = np.append(names.matching(names.HOST_SYNC, plane.event_names), False)
        if not is_sync.any():
            continue
        for line in plane.lines:
            if len(line) == 0 or is_producer_line(line):
                continue
            mask = is_sync[line.metadata_index]
            if not mask.any():
                continue
            mask &= in_windows(lo, hi, line.start_ns)
            rows = np.flatnonzero(mask)
            for r in rows.tolist():
                name = names.short_op_name(plane.event_names[line.metadata_index[r]])
                count, ms = out.calls.get(name, (0.0, 0.0))
                out.calls[name] = (count + 1.0 / n, ms + float(line.duration_ns[r]) / n / 1e6)
            starts_all.append(line.start_ns[rows])
            ends_all.append(line.start_ns[rows] + line.duration_ns[rows])
    if not starts_all:
        return out
    waits = iv.union(np.concatenate(starts_all), np.concatenate(ends_all))
    out.count = sum(count for count, _ in out.calls.values())
    out.time_ms = iv.total(waits) / n / 1e6
    if out.has_device:  # the devices' busy time, only now that there are waits to lay it over
        busy = iv.union_all((t.start_ns, t.start_ns + t.duration_ns) for t in tables)
        busy_in_waits = int(iv.covered(busy, waits[0], waits[1]).sum())
        out.device_idle_ms = (iv.total(waits) - busy_in_waits) / n / 1e6
    return out
