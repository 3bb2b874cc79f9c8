"""Analysing one host's profile: every analysis of analysis/ run once (the slow ones beside the
breakdown on a second thread), then the advice engine over their results.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Tuple

from tb_plugin_advisor.advice import recommend as rec
from tb_plugin_advisor.advice.evidence import with_evidence
from tb_plugin_advisor.analysis.classify.amd_devices import amd_identity
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.analysis.classify.launching_ops import attach_launching_ops
from tb_plugin_advisor.analysis.classify.prefilter import release_batches
from tb_plugin_advisor.analysis.deep.memory_peaks import peak_by_allocator
from tb_plugin_advisor.analysis.evidence.gather import gather_spans
from tb_plugin_advisor.analysis.precision.cpu_16bit import assess_cpu_16bit, native_16bit_kernels
from tb_plugin_advisor.analysis.precision.device import analyze_precision
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.analysis.precision.tensor_cores import TensorCoreResult, analyze_tensor_cores
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown, compute_breakdown
from tb_plugin_advisor.analysis.step_time.host_sync import analyze_host_sync
from tb_plugin_advisor.analysis.step_time.inputs import analyze_input_pipeline
from tb_plugin_advisor.analysis.step_time.ops import kernel_table, op_table
from tb_plugin_advisor.analysis.step_time.preprocessing import analyze_preprocessing
from tb_plugin_advisor.analysis.step_time.signals import collect_signals
from tb_plugin_advisor.analysis.step_time.steps import Steps, find_steps
from tb_plugin_advisor.analysis.step_time.torch_signals import collect_torch_signals
from tb_plugin_advisor.analysis.step_time.verdict import decide_verdict
from tb_plugin_advisor.formatting import rounded as _r
from tb_plugin_advisor.gc_pause import collector_paused
from tb_plugin_advisor.heap import hands_back_memory
from tb_plugin_advisor.model import Device, Profile
from tb_plugin_advisor.report.deep import analyze_deep
from tb_plugin_advisor.report.facts import facts_of
from tb_plugin_advisor.report.host import HostReport
from tb_plugin_advisor.sources.local_cpu import LocalCpu, read_local_cpu


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
    steps = find_steps(profile)
    attach_launching_ops(profile)  # PyTorch kernels → the aten op that launched them (before the views)
    for device in profile.devices:  # classified once, here: both threads below read the views
        kernel_view(device)
    with ThreadPoolExecutor(1, thread_name_prefix="advisor-deep") as second_core:
        # Precision, Tensor Cores and the deeper views need only the steps: they run beside the
        # breakdown and what reads it (numpy lets go of the GIL in whole-array work, which is most
        # of both), which keeps the two sides of about the same length.
        precision = second_core.submit(_precision_analyses, profile, steps)
        deep = second_core.submit(analyze_deep, profile, steps)
        report = _main_analyses(profile, steps, local_cpu, precision)
        report.deep = deep.result()
    # the events that show each piece of advice, found now: the report keeps no Profile
    annotations, tc = report.input_pipeline.annotations, report.tensor_core_result
    kernels = {"transpose_kernel": [name for name, _ in tc.transposes],
               "fp32_matmul": [n.kernel for n in tc.eligible_not_using]}
    spans = gather_spans(profile, steps, annotations.by_name if annotations is not None else (), kernels)
    report.recommendations = with_evidence(rec.recommend(facts_of(report)), spans)
    if report.deep is not None:
        report.deep.findings = {k: with_evidence(v, spans) for k, v in report.deep.findings.items()}
    return report


def _precision_analyses(profile: Profile, steps: Steps) -> Tuple[PrecisionResult, TensorCoreResult]:
    return analyze_precision(profile, steps=steps.count), analyze_tensor_cores(profile, steps=steps.count)


def _main_analyses(profile: Profile, steps: Steps, local_cpu: LocalCpu,
                   precision: Future[Tuple[PrecisionResult, TensorCoreResult]]) -> HostReport:
    breakdown = compute_breakdown(profile, steps)
    signals = collect_signals(profile, steps, breakdown)
    pipeline = analyze_input_pipeline(profile, breakdown, steps)
    verdict = decide_verdict(breakdown, steps, pipeline, signals.device_kind)
    ops, kernels = op_table(profile, breakdown), kernel_table(profile, breakdown)
    peaks = peak_by_allocator(profile)
    precision_result, tensor_core_result = precision.result()
    precision_json = precision_result.to_json()
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
        precision_pct=precision_json["precision_pct"],
        precision=precision_json["precision"],
        tensor_cores=tensor_core_result.to_json()["tensor_cores"],
        recommendations=[],
        ops=ops,
        kernels=kernels,
        devices=[_device_json(d, breakdown) for d in profile.devices],
        memory_peaks=peaks,
        warnings=_warnings(profile),
        preprocessing=analyze_preprocessing(profile, breakdown),
        host_sync=analyze_host_sync(profile, breakdown),
        torch_signals=collect_torch_signals(profile, breakdown, steps),
        cpu_16bit=assess_cpu_16bit(
            precision_result, signals.device_kind, profile.host, local_cpu.hostname, local_cpu.flags,
            native_16bit_kernels(profile),
        ),
        deep=None,
    )


def _device_json(device: Device, breakdown: Breakdown) -> Dict[str, Any]:
    cc = device.compute_capability
    amd = amd_identity(device)  # ROCm's major.minor is no compute capability: the gfx target instead
    return {
        "name": device.name,
        "kind": device.kind,
        "vendor": device.vendor,
        "model": device.model,
        "compute_capability": f"{cc[0]}.{cc[1]}" if cc and amd is None else None,
        "gfx_target": amd.gfx if amd else None,
        "product": amd.product if amd else None,
        "core_count": device.core_count,
        "kernel_count": len(device.kernels),
        "memcpy_count": len(device.memcpys),
        "busy_pct": _r(breakdown.device_busy_pct.get(device.name, 0.0), 2),
    }


def _warnings(profile: Profile) -> List[str]:
    out = [f"profiler error: {e}" for e in profile.errors]
    out += list(profile.warnings)
    return out
