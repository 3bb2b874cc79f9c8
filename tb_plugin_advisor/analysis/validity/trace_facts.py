"""Facts about what one profile holds, measured once for the validity rules (analysis/validity/rules.py).

Each fact is a count or a share a reader can check in the trace itself: how many device events a
launch inside a step names (the device clock measures it: analysis/step_time/device_clock.py), how
many steps there are and which the capture cut off, how many ops carry shapes, how many allocator
records there are, how many events the Kineto reader clipped to make a line nest. A fact that does
not apply to the profile (a share without device work) is None.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional

import numpy as np

from tb_plugin_advisor.analysis.deep.memory_events import memory_record_count
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.model import Profile

# The op stats that say what an op was called with: PyTorch's `Input Dims` (record_shapes=True) and
# the XLA/TF `shape` of an op.
SHAPE_STATS = ("input_dims", "shape")
# The stat PyTorch's `with_flops=True` puts on an op.
FLOPS_STAT = "flops"


@dataclass(frozen=True)
class TraceFacts:
    """What one profile holds (see the module docstring); every field is in the report's
    `validity.facts`."""

    framework: str  # tf | jax | pytorch | unknown (analysis/step_time/signals.py)
    gpu_planes: int
    device_events: int  # kernels, copies and memsets of every device
    launch_share: Optional[float]  # of the device events during the steps, those a step's launch names
    steps: int
    step_source: str
    step_clock: str
    steady_steps: int
    cut_off_steps: int
    steps_without_device_work: int  # on the device clock, not cut off
    shaped_ops: int  # host events carrying a shape stat
    flops_ops: int  # host events carrying a FLOP count
    memory_records: int
    clipped_host_events: int
    clipped_device_events: int
    host_events: int

    def to_json(self) -> Dict[str, Any]:
        out = asdict(self)
        if self.launch_share is not None:
            out["launch_share"] = round(self.launch_share, 4)
        return out


def measure_trace(profile: Profile, steps: Steps, framework: str, gpu_planes: int) -> TraceFacts:
    """The facts of one profile; `steps` as the report found them (the device clock's share with them)."""
    host_lines = [line for plane in profile.host_planes for line in plane.lines]
    device_lines = [line for device in profile.devices for line in device.plane.lines]
    no_work = 0
    if steps.host_ahead_ns is not None:
        no_work = int(np.count_nonzero(~np.isfinite(steps.host_ahead_ns) & ~steps.cut_off))
    return TraceFacts(
        framework=framework,
        gpu_planes=gpu_planes,
        device_events=sum(len(d.kernels) + len(d.memcpys) for d in profile.devices),
        launch_share=steps.launch_share,
        steps=steps.count,
        step_source=steps.source,
        step_clock=steps.clock,
        steady_steps=int(steps.steady.sum()),
        cut_off_steps=int(steps.cut_off.sum()),
        steps_without_device_work=no_work,
        shaped_ops=sum(_carrying(line.stats, SHAPE_STATS) for line in host_lines),
        flops_ops=sum(_carrying(line.stats, (FLOPS_STAT,)) for line in host_lines),
        memory_records=memory_record_count(profile),
        clipped_host_events=sum(int(line.clipped.size) for line in host_lines),
        clipped_device_events=sum(int(line.clipped.size) for line in device_lines),
        host_events=sum(len(line) for line in host_lines),
    )


def _carrying(stats: Dict[str, Any], names: tuple) -> int:
    """How many events of a line carry any of the stats `names` (the first one the line has)."""
    for name in names:
        column = stats.get(name)
        if column is not None:
            return int(column.count if column.on_every_event else column.indices.size)
    return 0
