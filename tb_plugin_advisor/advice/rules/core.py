"""Conditions of the recommendation rules about the input pipeline, precision, compilation and the
profile itself. The table (ids, titles, snippets) lives in recommend.py; each check reads only
`Facts` and returns (severity, evidence) when it fires."""

from __future__ import annotations

from typing import Optional, Tuple

from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import fixed, format_pct


def _input_severity(f: Facts) -> str:
    return "high" if f.input_bound == "high" else "medium"


def _input_bound(f: Facts) -> bool:
    return f.input_bound in ("high", "moderate")


def _input_pct(f: Facts) -> str:
    return f"input wait {format_pct(f.breakdown_pct.get('input', 0.0))} of the step ({f.input_bound})"


def parallel_map(f: Facts):
    if _input_bound(f) and f.dominant_stage == "map" and (f.sequential_map or (f.map_parallelism or 1) <= 1):
        how = "runs sequentially" if f.sequential_map else f"runs with parallelism {f.map_parallelism or 1}"
        return _input_severity(f), f"{_input_pct(f)}; the map stage dominates and {how}."
    return None


def prefetch(f: Facts):
    if _input_bound(f) and f.prefetch is False:
        return _input_severity(f), f"{_input_pct(f)}; no Prefetch iterator in the pipeline."
    return None


def cache(f: Facts):
    """Reading files or an expensive map, every epoch again, with nothing cached."""
    reads_files = f.dominant_stage == "source" and f.file_source
    if _input_bound(f) and (reads_files or f.dominant_stage == "map") and f.cache is False:
        severity = "medium" if reads_files else "low"
        return severity, f"{_input_pct(f)}; the {f.dominant_stage} stage dominates and nothing is cached."
    return None


def interleave(f: Facts):
    if _input_bound(f) and f.dominant_stage == "source" and f.file_source and f.interleave is False:
        return (
            _input_severity(f),
            f"{_input_pct(f)}; reading files dominates and they are read one at a time.",
        )
    return None


def preprocess_offline(f: Facts):
    parallel = not f.sequential_map and (f.map_parallelism or 0) > 1
    if _input_bound(f) and f.dominant_stage == "map" and parallel:
        return (
            _input_severity(f),
            f"{_input_pct(f)}; the map stage dominates although it already runs with "
            f"parallelism {f.map_parallelism}{' (autotune)' if f.autotune else ''}.",
        )
    return None


def background_prefetch(f: Facts):
    """The step waits in the user's own input annotation (JAX, custom loops: no tf.data, no DataLoader):
    the training thread makes each batch while the device waits, so prepare batches ahead of it."""
    if f.framework == "pytorch" or f.input_kind != "annotations" or not _input_bound(f):
        return None  # PyTorch runs get the DataLoader rules
    if f.input_annotation_pct < th.INPUT_MODERATE_PCT:
        return None  # the input wait is elsewhere (DevicePut, a get-next op)
    inside = f", mostly {f.input_annotation_inside}" if f.input_annotation_inside else ""
    return _input_severity(f), (
        f"{_input_pct(f)}; {format_pct(f.input_annotation_pct)} of the step is spent inside the input "
        f"annotation '{f.input_annotation}' on the training thread{inside}: nothing prepares the next "
        "batch while the step runs."
    )


def mixed_precision(f: Facts):
    capability = f.compute_capability
    if f.device_kind != "GPU" or capability is None or capability < th.MIXED_PRECISION_MIN_CC:
        return None
    fp32 = f.precision_pct.get("fp32", 0.0) + f.precision_pct.get("tf32", 0.0)
    device = f.breakdown_pct.get("device_compute", 0.0)
    if fp32 >= th.PRECISION_FP32_SHARE_PCT and device >= th.PRECISION_DEVICE_SHARE_PCT:
        ops = f"; largest fp32 ops: {', '.join(f.top_fp32_ops[:3])}" if f.top_fp32_ops else ""
        severity = "high" if f.bottleneck == "device" else "medium"
        return severity, (
            f"{format_pct(fp32)} of device compute runs in fp32/tf32 and device compute is "
            f"{format_pct(device)} of the step{ops}."
        )
    return None


def tf32(f: Facts):
    if f.device_kind != "GPU" or f.compute_capability is None or f.compute_capability < th.TF32_MIN_CC:
        return None
    if f.fp32_matmul_pct >= th.TF32_FP32_MATMUL_SHARE_PCT and f.precision_pct.get("tf32", 0.0) < 1.0:
        major, minor = f.compute_capability
        return "medium", (
            f"{format_pct(f.fp32_matmul_pct)} of device time is matmul/convolution in plain fp32 "
            f"on a GPU with TF32 Tensor Cores (compute capability {major}.{minor})."
        )
    return None


def small_kernels(f: Facts) -> Optional[Tuple[str, str]]:
    """Many short kernels or a step held up by launches: (severity, evidence without a full stop).
    What compilation (XLA, torch.compile) fixes; the framework rules add their own words."""
    launch = f.breakdown_pct.get("kernel_launch", 0.0)
    many_small = (
        f.kernels_per_step >= th.XLA_MIN_KERNELS_PER_STEP and f.mean_kernel_us < th.XLA_MAX_MEAN_KERNEL_US
    )
    if not (many_small or launch >= th.OVERHEAD_MODERATE_PCT):
        return None
    severity = "high" if f.bottleneck == "launch" else "medium"
    return severity, (
        f"{fixed(f.kernels_per_step, 0)} kernels per step, {fixed(f.mean_kernel_us, 1)} µs on average; "
        f"kernel launch {format_pct(launch)} of the step"
    )


def xla(f: Facts):
    if f.device_kind != "GPU" or f.framework != "tf" or f.xla_compiled or not f.step_count:
        return None
    fired = small_kernels(f)
    return (fired[0], f"{fired[1]}; no XLA-compiled kernels.") if fired else None


def tf_function(f: Facts):
    if f.eager_ops_per_step >= th.EAGER_OPS_PER_STEP and not f.compiled_step:
        severity = "high" if f.bottleneck in ("host", "launch") else "medium"
        return severity, (
            f"{fixed(f.eager_ops_per_step, 0)} ops per step are dispatched one by one from Python "
            "(no compiled step function runs in the steps)."
        )
    return None


def transpose(f: Facts):
    if f.transpose_pct >= th.TRANSPOSE_SHARE_PCT:
        kernels = f"; e.g. {', '.join(f.transpose_kernels[:2])}" if f.transpose_kernels else ""
        share = format_pct(f.transpose_pct)
        return "medium", f"Layout transposes take {share} of device compute time{kernels}."
    return None


def no_kernels(f: Facts):
    if f.cupti_problem:
        return "high", f"The profiler reported: {f.cupti_message}"
    if f.gpu_planes and not f.active_devices:
        return "high", (
            f"The profile has {f.gpu_planes} GPU plane{'s' if f.gpu_planes != 1 else ''} but no "
            "kernel or copy on any of them."
        )
    return None


def warmup(f: Facts):
    if f.early_step_numbers or f.warmup_steps:
        which = (
            f"step {', '.join(str(s) for s in f.early_step_numbers)} is in the profiled range"
            if f.early_step_numbers
            else f"{f.warmup_steps} leading step{'s were' if f.warmup_steps > 1 else ' was'} much slower "
            "than the rest"
        )
        return "low", f"{which}; warm-up (tracing, compilation, allocator growth) distorts the numbers."
    return None


def few_steps(f: Facts):
    if f.step_source != "none" and 0 < f.step_count < th.FEW_STEPS:
        return "low", f"Only {f.step_count} step{'s' if f.step_count != 1 else ''} in the profile."
    return None


def step_markers(f: Facts):
    if f.step_source in ("none", "inferred"):
        found = (
            "no steps could be found"
            if f.step_source == "none"
            else "steps were inferred from a repeating pattern"
        )
        return "low", f"No step markers were recorded; {found}."
    return None
