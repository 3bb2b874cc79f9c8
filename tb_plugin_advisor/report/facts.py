"""What the recommendation rules see of one host: the analyses' results of a HostReport, flattened
into `Facts` (advice/facts.py). Kept apart so analyze.py only runs things and the rules only read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.patterns import short_kernel_name
from tb_plugin_advisor.analysis.step_time.inputs import InputPipeline
from tb_plugin_advisor.analysis.step_time.torch_signals import TorchSignals
from tb_plugin_advisor.formatting import fixed, format_ms

if TYPE_CHECKING:
    from tb_plugin_advisor.report.host import HostReport


def facts_of(report: HostReport) -> Facts:
    s, steps, pipeline = report.signals, report.steps, report.input_pipeline
    pct = report.breakdown.pct()
    tc = report.tensor_core_result
    mean_ms = report.breakdown.mean_ms()
    device_ms = mean_ms.get("device_compute", 0.0)
    eligible = tc.eligible_ns_by_precision
    tf32_off_ns = sum(n.time_ns for n in tc.eligible_not_using if n.reason_id == "fp32_tf32_off")
    return Facts(
        framework=s.framework,
        input_wait_event=report.breakdown.input_evidence[0][0] if report.breakdown.input_evidence else "",
        **_torch_facts(report.torch_signals),
        **_input_facts(report.input_pipeline),
        device_kind=s.device_kind,
        device_model=next((str(d.get("model") or "") for d in report.devices if d.get("model")), ""),
        step_ms=steps.stats_ms()["mean_ms"],
        breakdown_ms=mean_ms,
        matrix_fp32_ms=_share_of_compute(eligible.get("fp32", 0), tc.compute_ns, device_ms),
        matrix_tf32_ms=_share_of_compute(eligible.get("tf32", 0), tc.compute_ns, device_ms),
        compute_capability=s.compute_capability,
        breakdown_pct=pct,
        input_bound=report.verdict.input_bound,
        bottleneck=report.verdict.bottleneck,
        step_count=steps.count,
        step_source=steps.source,
        early_step_numbers=sorted(
            {n for n in steps.numbers if n is not None and n <= th.WARMUP_STEP_NUM_MAX}
        ),
        warmup_steps=int(steps.warmup.sum()),
        cut_off_steps=steps.cut_off_names(),
        dominant_stage=pipeline.dominant_stage,
        sequential_map=pipeline.sequential_map,
        map_parallelism=pipeline.parallelism,
        prefetch=pipeline.prefetch,
        cache=pipeline.cache,
        interleave=pipeline.interleave,
        file_source=pipeline.file_source,
        autotune=pipeline.autotune,
        precision_pct=dict(report.precision_result.precision_pct),
        precision_verdict=report.precision_result.verdict,
        top_fp32_ops=[name for name, _ in report.precision_result.top_fp32_ops],
        fp32_matmul_pct=tf32_off_ns * 100.0 / tc.compute_ns if tc.compute_ns else 0.0,
        kernels_per_step=s.kernels_per_step,
        mean_kernel_us=s.mean_kernel_us,
        xla_compiled=s.xla_compiled,
        transpose_pct=tc.transpose_time_pct,
        transpose_kernels=[short_kernel_name(name) for name, _ in tc.transposes],
        eager_ops_per_step=s.eager_ops_per_step,
        compiled_step=s.compiled_step,
        gpu_planes=s.gpu_planes,
        active_devices=s.active_devices,
        cupti_problem=s.cupti_problem,
        cupti_message=s.cupti_message,
        cpu_16bit_dtype=report.cpu_16bit.dtype if report.cpu_16bit else "",
        cpu_16bit_native=report.cpu_16bit.native if report.cpu_16bit else None,
        cpu_16bit_evidence=report.cpu_16bit.evidence if report.cpu_16bit else "",
        preprocessing_pct=report.preprocessing.share_pct,
        preprocessing_input_threads_ms=report.preprocessing.input_threads_ms,
        preprocessing_step_threads_ms=report.preprocessing.step_threads_ms,
        preprocessing_ops=[f"{op} {fixed(ms, 1)} ms" for op, ms in report.preprocessing.top_ops()],
        host_sync_count=report.host_sync.count,
        host_sync_pct=report.host_sync.time_pct,
        host_sync_idle_pct=report.host_sync.device_idle_pct if report.host_sync.has_device else None,
        host_sync_calls=[f"{n} ×{fixed(c, 0)}, {fixed(ms, 2)} ms"
                         for n, c, ms in report.host_sync.top_calls()],
        median_kernel_us=s.median_kernel_us,
        host_offload_copy_pct=s.host_offload_copy_pct,
        device_idle_pct=100.0 - max(report.breakdown.device_busy_pct.values(), default=100.0),
    )



def _share_of_compute(ns: int, compute_ns: int, device_ms: float) -> float:
    """Device time per steady step of a part of the device's compute (summed over the whole profile,
    as the Tensor Core analysis sums it): its share of compute × the step's device compute."""
    return ns / compute_ns * device_ms if compute_ns else 0.0


def _input_facts(pipeline: InputPipeline) -> Dict[str, Any]:
    out: Dict[str, Any] = {"input_kind": pipeline.kind}
    a = pipeline.annotations
    if a is not None:
        out["input_annotation"] = a.main
        out["input_annotation_pct"] = a.pct(a.wait_ns)
        if a.inside:
            name, ns = a.inside[0]
            out["input_annotation_inside"] = f"{name} {format_ms(a.per_step_ms(ns))}"
    return out


def _torch_facts(t: Optional[TorchSignals]) -> Dict[str, Any]:
    if t is None:
        return {}
    return {
        "torch_dataloader": t.dataloader,
        "torch_pageable_h2d_ms": t.pageable_h2d_ms,
        "torch_pageable_h2d_pct": t.pageable_h2d_pct,
        "torch_zero_grad_fills": t.zero_grad_fills,
    }

