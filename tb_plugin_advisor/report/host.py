"""One host's report: every analysis result of one profile, with no reference to the Profile itself
(so the profile can be freed as soon as it is analysed), and the JSON parts that belong to one host.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.advice.facts import Recommendation
from tb_plugin_advisor.analysis.precision.cpu_16bit import CpuSixteenBit
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.analysis.precision.tensor_cores import TensorCoreResult
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.host_sync import HostSync
from tb_plugin_advisor.analysis.step_time.inputs import InputPipeline
from tb_plugin_advisor.analysis.step_time.ops import OpRow
from tb_plugin_advisor.analysis.step_time.preprocessing import Preprocessing
from tb_plugin_advisor.analysis.step_time.signals import Signals
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.step_time.torch_signals import TorchSignals
from tb_plugin_advisor.analysis.step_time.verdict import Verdict
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.report.deep import DeepViews
from tb_plugin_advisor.report.stragglers import HostFigures


@dataclass
class HostReport:
    """Everything computed for one host's profile (no reference to the Profile: it can be freed)."""

    host: str
    path: str
    size_bytes: int
    steps: Steps
    breakdown: Breakdown
    verdict: Verdict
    input_pipeline: InputPipeline
    signals: Signals
    precision_result: PrecisionResult
    tensor_core_result: TensorCoreResult
    precision_pct: Dict[str, float]  # JSON parts of the two results above
    precision: Dict[str, Any]
    tensor_cores: Dict[str, Any]
    recommendations: List[Recommendation]
    ops: List[OpRow]
    kernels: List[OpRow]
    devices: List[Dict[str, Any]]
    memory_peaks: Dict[str, int]
    warnings: List[str] = field(default_factory=list)
    preprocessing: Preprocessing = field(default_factory=Preprocessing)
    cpu_16bit: Optional[CpuSixteenBit] = None
    host_sync: HostSync = field(default_factory=HostSync)
    torch_signals: Optional[TorchSignals] = None  # PyTorch runs only
    deep: Optional[DeepViews] = None  # kernel statistics, memory over time … (report/deep.py)

    @property
    def steady_count(self) -> int:
        return int(self.breakdown.steady.sum())

    def steps_json(self) -> Dict[str, Any]:
        steps = self.steps
        origin = int(steps.start_ns.min()) if steps.count else 0
        host_known = steps.clock == "host" or steps.host_ahead_ns is not None
        ahead = steps.host_ahead_ns
        per_step = [
            {
                "step": steps.numbers[i],
                "start_ms": _r((int(steps.start_ns[i]) - origin) / 1e6),
                "total_ms": _r(int(steps.duration_ns[i]) / 1e6),
                # the host's range of the step (the marker's own event), and how long after its end
                # the device finished the step's work (null: no device work, or host clock)
                "host_ms": _r(int(steps.host_duration_ns[i]) / 1e6) if host_known else None,
                "host_ahead_ms": (_r(float(ahead[i]) / 1e6) if ahead is not None and np.isfinite(ahead[i])
                                  else None),
                "breakdown_ms": {c: _r(v) for c, v in self.breakdown.per_window_ms(i).items()},
                "warmup": bool(steps.warmup[i]),
                "cut_off": bool(steps.cut_off[i]),
            }
            for i in range(steps.count)
        ]
        return steps_summary(steps, per_step=per_step)

    def figures(self) -> HostFigures:
        busy = list(self.breakdown.device_busy_pct.values())
        return HostFigures(
            host=self.host,
            step_time_ms=self.steps.stats_ms()["mean_ms"],
            input_pct=self.breakdown.pct()["input"],
            device_util_pct=float(np.mean(busy)) if busy else 0.0,
        )

    def summary_json(self, stragglers: Tuple[str, ...] = ()) -> Dict[str, Any]:
        f = self.figures()
        return {
            "host": self.host,
            "step_time_ms": _r(f.step_time_ms),
            "input_pct": _r(f.input_pct, 2),
            "device_util_pct": _r(f.device_util_pct, 2),
            "straggler": self.host in stragglers,
            "steps": self.steps_json(),
            "breakdown_ms": {k: _r(v) for k, v in self.breakdown.mean_ms().items()},
            "breakdown_pct": {k: _r(v, 2) for k, v in self.breakdown.pct().items()},
            "verdict": self.verdict.to_json(),
            "input_pipeline": self.input_pipeline.to_json(),
            "recommendations": [r.id for r in self.recommendations],
        }


def steps_summary(steps: Steps, **extra: Any) -> Dict[str, Any]:
    """The report's `steps` object (ARCHITECTURE.md §2 plus times, numbers, notes), one host or pooled."""
    ahead = steps.host_ahead_ms()
    return {
        "count": steps.count,
        "source": steps.source,
        "method": steps.method,
        "clock": steps.clock,
        "host_ahead_ms": _r(ahead) if ahead is not None else None,
        **{k: _r(v) for k, v in steps.stats_ms().items()},
        "steady_count": int(steps.steady.sum()),
        "times_ms": [_r(d / 1e6) for d in steps.duration_ns.tolist()],
        "numbers": list(steps.numbers),
        **extra,
        "notes": list(steps.notes),
    }
