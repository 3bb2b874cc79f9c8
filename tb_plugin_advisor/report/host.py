"""One host's report: every analysis result of one profile, with no reference to the Profile itself
(so the profile can be freed as soon as it is analysed).

The results every section builds on (steps, breakdown, verdict, input pipeline, signals, precision,
Tensor Cores, the deeper views) are fields; what a section of the table (report/sections.py)
analyses for itself is kept in `values` under its report key, so a new section needs no new field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

from tb_plugin_advisor.advice.facts import Recommendation
from tb_plugin_advisor.analysis.deep.collectives import Collectives
from tb_plugin_advisor.analysis.deep.kernel_stats import KernelStats
from tb_plugin_advisor.analysis.deep.memory_timeline import MemoryTimeline
from tb_plugin_advisor.analysis.deep.roofline import Roofline
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.analysis.precision.tensor_cores import TensorCoreResult
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.inputs import InputPipeline
from tb_plugin_advisor.analysis.step_time.signals import Signals
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.step_time.torch_signals import TorchSignals
from tb_plugin_advisor.analysis.step_time.verdict import Verdict
from tb_plugin_advisor.model import Profile
from tb_plugin_advisor.report.stragglers import HostFigures
from tb_plugin_advisor.sources.local_cpu import LocalCpu


@dataclass
class DeepViews:
    """The deeper views of one host (kernel statistics, memory over time, collectives, roofline):
    run together on the report's second thread (report/analyze.py)."""

    kernel_stats: KernelStats
    memory: MemoryTimeline
    collectives: Collectives
    roofline: Roofline


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
    deep: DeepViews
    torch_signals: Optional[TorchSignals] = None  # PyTorch runs only
    # each section's own analysis by report key (sections.py: the entries with `analyse`)
    values: Dict[str, Any] = field(default_factory=dict)
    recommendations: List[Recommendation] = field(default_factory=list)
    # the advice engine's findings over a section (sections.py: the entries with `findings`), by key
    findings: Dict[str, List[Recommendation]] = field(default_factory=dict)

    @property
    def steady_count(self) -> int:
        return int(self.breakdown.steady.sum())

    def figures(self) -> HostFigures:
        busy = list(self.breakdown.device_busy_pct.values())
        return HostFigures(
            host=self.host,
            step_time_ms=self.steps.stats_ms()["mean_ms"],
            input_pct=self.breakdown.pct()["input"],
            device_util_pct=float(np.mean(busy)) if busy else 0.0,
        )


@dataclass(frozen=True)
class Measured:
    """What a section's own analysis reads: the profile, the results it may build on, and the machine
    the report runs on (its CPU is evidence for a CPU profile captured on it)."""

    profile: Profile
    steps: Steps
    breakdown: Breakdown
    signals: Signals
    precision_result: PrecisionResult
    local_cpu: LocalCpu
