"""Analysing one host's profile: the results every section builds on (the slow ones beside the
breakdown on a second thread), then each section's own analysis (report/sections.py's `analyse`
column), then the advice engine over them: recommendations from the sections' facts, findings over
the sections that have them, each with the trace events that show it.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Dict, List, Optional, Tuple

from tb_plugin_advisor.advice import recommend as rec
from tb_plugin_advisor.advice.evidence import with_evidence
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.analysis.classify.launching_ops import attach_launching_ops
from tb_plugin_advisor.analysis.classify.prefilter import release_batches
from tb_plugin_advisor.analysis.deep.collectives import analyze_collectives
from tb_plugin_advisor.analysis.deep.kernel_stats import kernel_stats
from tb_plugin_advisor.analysis.deep.memory_timeline import memory_timeline
from tb_plugin_advisor.analysis.deep.roofline import roofline
from tb_plugin_advisor.analysis.evidence.gather import gather_spans
from tb_plugin_advisor.analysis.evidence.span import EvidenceSpan
from tb_plugin_advisor.analysis.precision.device import analyze_precision
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.analysis.precision.tensor_cores import TensorCoreResult, analyze_tensor_cores
from tb_plugin_advisor.analysis.step_time.breakdown import compute_breakdown
from tb_plugin_advisor.analysis.step_time.inputs import InputPipeline, analyze_input_pipeline
from tb_plugin_advisor.analysis.step_time.signals import collect_signals
from tb_plugin_advisor.analysis.step_time.steps import Steps, find_steps
from tb_plugin_advisor.analysis.step_time.torch_signals import collect_torch_signals
from tb_plugin_advisor.analysis.step_time.verdict import decide_verdict
from tb_plugin_advisor.model import Profile
from tb_plugin_advisor.process_memory.gc_pause import collector_paused
from tb_plugin_advisor.process_memory.heap import hands_back_memory, one_heap_for_threads
from tb_plugin_advisor.report.host import DeepViews, HostReport, Measured
from tb_plugin_advisor.report.sections import SECTIONS, facts_of
from tb_plugin_advisor.sources.local_cpu import LocalCpu, read_local_cpu

DEEP_FIRST_FROM_NAMES = 100_000  # distinct kernel names from which the deeper views run first


@hands_back_memory
@collector_paused
def analyze_profile(profile: Profile, local_cpu: Optional[LocalCpu] = None) -> HostReport:
    """Run every analysis on one host's profile. `local_cpu`: the CPU the report runs on (its flags are
    evidence for a profile captured on the same host); None reads this machine's."""
    local_cpu = local_cpu if local_cpu is not None else read_local_cpu()
    try:
        return _analyze_profile(profile, local_cpu)
    finally:
        release_batches()  # the name batches the analyses shared (analysis/classify/prefilter.py)


def _analyze_profile(profile: Profile, local_cpu: LocalCpu) -> HostReport:
    one_heap_for_threads()  # what the second thread frees serves the first (process_memory/heap.py)
    with ThreadPoolExecutor(1, thread_name_prefix="advisor-deep") as second_core:
        # The kernels are classified (names, mostly Python) while the steps are found (numpy, which
        # lets go of the GIL): neither reads what the other writes. Both threads below read the views.
        views = second_core.submit(_kernel_views, profile)
        steps = find_steps(profile)
        views.result()
        # Precision, Tensor Cores and the deeper views need only the steps: they run beside the
        # breakdown and what reads it (numpy lets go of the GIL in whole-array work, which is most
        # of both), which keeps the two sides of about the same length. The sections wait for the
        # precision analyses, so those go first; but with many kernel names the deeper views do:
        # kernel statistics then run beside the breakdown, not beside the op tables, the other
        # side's largest step (a million kernel names: 100 MB less at the peak).
        if sum(len(device.kernels.names) for device in profile.devices) >= DEEP_FIRST_FROM_NAMES:
            deep = second_core.submit(analyze_deep, profile, steps)
            precision = second_core.submit(_precision_analyses, profile, steps)
        else:
            precision = second_core.submit(_precision_analyses, profile, steps)
            deep = second_core.submit(analyze_deep, profile, steps)
        report, spans = _main_analyses(profile, steps, local_cpu, precision, deep, second_core)
    report.recommendations = with_evidence(rec.recommend(facts_of(report)), spans)
    for section in SECTIONS:  # the findings over a section's analysis (the deeper views)
        if section.findings is not None:
            report.findings[section.key] = with_evidence(section.findings(section.analysed(report)), spans)
    return report


def _kernel_views(profile: Profile) -> None:
    """Every device's kernel view, classified once for the analyses that read it."""
    attach_launching_ops(profile)  # PyTorch kernels → the aten op that launched them (before the views)
    for device in profile.devices:
        kernel_view(device)


def _precision_analyses(profile: Profile, steps: Steps) -> Tuple[PrecisionResult, TensorCoreResult]:
    return analyze_precision(profile, steps=steps.count), analyze_tensor_cores(profile, steps=steps.count)


def analyze_deep(profile: Profile, steps: Optional[Steps]) -> DeepViews:
    """The four deeper views (the advice engine's findings over them come later, with evidence)."""
    return DeepViews(
        kernel_stats=kernel_stats(profile, steps),
        memory=memory_timeline(profile, steps),
        collectives=analyze_collectives(profile, steps),
        roofline=roofline(profile, steps),
    )


def _main_analyses(profile: Profile, steps: Steps, local_cpu: LocalCpu,
                   precision: Future[Tuple[PrecisionResult, TensorCoreResult]], deep: Future[DeepViews],
                   second_core: ThreadPoolExecutor) -> Tuple[HostReport, Dict[str, List[EvidenceSpan]]]:
    """The breakdown and what reads it, then each section's own analysis (report/sections.py), on
    this thread; the precision analyses and the deeper views come from the second, which then finds
    the events that show each piece of advice while the sections run here (the report keeps no
    Profile: they are found now)."""
    breakdown = compute_breakdown(profile, steps)
    signals = collect_signals(profile, steps, breakdown)
    pipeline = analyze_input_pipeline(profile, breakdown, steps)
    verdict = decide_verdict(breakdown, steps, pipeline, signals.device_kind)
    torch_signals = collect_torch_signals(profile, breakdown, steps)
    precision_result, tensor_core_result = precision.result()
    spans = second_core.submit(_evidence, profile, steps, pipeline, tensor_core_result)
    measured = Measured(profile, steps, breakdown, signals, precision_result, local_cpu)
    values = {s.key: s.analyse(measured) for s in SECTIONS if s.analyse is not None}
    return HostReport(
        host=profile.host,
        path=profile.path,
        size_bytes=profile.size_bytes,
        steps=steps,
        breakdown=breakdown,
        verdict=verdict,
        input_pipeline=pipeline,
        signals=signals,
        precision_result=precision_result,
        tensor_core_result=tensor_core_result,
        deep=deep.result(),
        torch_signals=torch_signals,
        values=values,
    ), spans.result()


def _evidence(profile: Profile, steps: Steps, pipeline: InputPipeline, tc: TensorCoreResult
              ) -> Dict[str, List[EvidenceSpan]]:
    """The events of every kind of evidence (analysis/evidence/gather.py), with the kernels the
    Tensor Core analysis named."""
    annotations = pipeline.annotations
    kernels = {"transpose_kernel": [name for name, _ in tc.transposes],
               "fp32_matmul": [n.kernel for n in tc.eligible_not_using]}
    return gather_spans(profile, steps, annotations.by_name if annotations is not None else (), kernels)
