"""Every recommendation rule: a case that makes it fire and a case right beside it that must not."""

from __future__ import annotations

import dataclasses

import pytest

from tb_plugin_advisor.advice.facts import SEVERITIES, Facts
from tb_plugin_advisor.advice.recommend import RULE_IDS, recommend
from tb_plugin_advisor.advice.registry import RECOMMENDATIONS, rule_of
from tb_plugin_advisor.advice.rules.mixed_precision import mixed_precision_snippets
from tb_plugin_advisor.analysis import thresholds as th

DESIGN_IDS = (
    "input.parallel_map",
    "input.prefetch",
    "input.cache",
    "input.interleave",
    "input.preprocess_offline",
    "precision.mixed",
    "precision.tf32",
    "compile.xla",
    "host.tf_function",
    "layout.transpose",
    "device.no_kernels",
    "profile.warmup_step",
    "profile.few_steps",
)

# A healthy, marker-profiled GPU run: no rule fires on it.
QUIET = Facts(
    framework="tf",
    device_kind="GPU",
    compute_capability=(8, 0),
    breakdown_pct={"input": 1.0, "device_compute": 90.0, "kernel_launch": 1.0, "host_compute": 2.0},
    input_bound="low",
    bottleneck="device",
    step_count=20,
    step_source="root_marker",
    dominant_stage="map",
    sequential_map=False,
    map_parallelism=8,
    prefetch=True,
    cache=True,
    interleave=True,
    file_source=True,
    autotune=True,
    precision_pct={"bf16": 80.0, "fp32": 20.0},
    precision_verdict="active",
    kernels_per_step=100,
    mean_kernel_us=200.0,
    xla_compiled=False,
    gpu_planes=1,
    active_devices=1,
)
INPUT_HIGH = {
    "input_bound": "high",
    "bottleneck": "input",
    "breakdown_pct": {"input": 45.0, "device_compute": 50.0},
}
INPUT_MODERATE = {"input_bound": "moderate", "breakdown_pct": {"input": 8.0, "device_compute": 85.0}}

# (rule id, changes that make it fire, expected severity, changes that keep it quiet)
CPU_ONLY = {"device_kind": "", "bottleneck": "host", "breakdown_pct": {"host_compute": 95.0}}
BF16_ON_CPU = {**CPU_ONLY, "cpu_16bit_dtype": "bf16", "cpu_16bit_evidence": "bf16 holds 90 % …"}
PRE = {"preprocessing_input_threads_ms": 50.0, "preprocessing_ops": ["DecodePng 31.4 ms"]}
SYNC = {"host_sync_count": 12.0, "host_sync_calls": ["cudaStreamSynchronize ×12, 30 ms"]}
JAX_GPU = {"framework": "jax", "kernels_per_step": 2000, "median_kernel_us": 4.0}
COPY_BOUND = {"bottleneck": "memcpy", "breakdown_pct": {"memcpy": 91.0, "device_compute": 9.0}}
ANNOTATED = {"framework": "jax", "input_kind": "annotations", "input_annotation": "input",
             "input_annotation_pct": 40.0, "input_annotation_inside": "host_batch 40 ms"}
CASES = [
    ("input.pin_memory", {"framework": "pytorch", "torch_pageable_h2d_pct": th.TORCH_PAGEABLE_COPY_PCT},
     "medium", {"framework": "pytorch", "torch_pageable_h2d_pct": th.TORCH_PAGEABLE_COPY_PCT - 0.1}),
    ("optimizer.zero_grad_set_to_none", {"framework": "pytorch", "torch_zero_grad_fills": 1.0}, "low",
     {"framework": "pytorch", "torch_zero_grad_fills": 0.0}),
    ("device.copy_bound", {**COPY_BOUND, "host_offload_copy_pct": 100.0}, "high", {}),
    ("device.copy_bound", {"bottleneck": "memcpy", "breakdown_pct": {"memcpy": 14.0}}, "medium",
     {"bottleneck": "device", "breakdown_pct": {"memcpy": 14.0}}),
    ("host.sync", {**SYNC, "host_sync_pct": 30.0, "host_sync_idle_pct": th.HOST_SYNC_IDLE_HIGH_PCT}, "high",
     {**SYNC, "host_sync_pct": 30.0, "host_sync_idle_pct": th.HOST_SYNC_IDLE_PCT - 0.1}),
    ("host.sync", {**SYNC, "host_sync_pct": th.HOST_SYNC_STEP_PCT, "host_sync_idle_pct": 5.0}, "medium",
     {**SYNC, "host_sync_pct": th.HOST_SYNC_STEP_PCT - 0.1, "host_sync_idle_pct": 5.0}),
    ("host.sync", {**SYNC, "host_sync_pct": 30.0, "host_sync_idle_pct": 20.0}, "high",
     {**SYNC, "device_kind": "", "host_sync_pct": 30.0, "host_sync_idle_pct": None}),  # CPU only
    ("compile.launch_bound_xla", {**JAX_GPU, "device_idle_pct": 2 * th.LAUNCH_BOUND_MIN_IDLE_PCT}, "high",
     {**JAX_GPU, "device_idle_pct": th.LAUNCH_BOUND_MIN_IDLE_PCT - 0.1}),
    ("compile.launch_bound_xla", {**JAX_GPU, "device_idle_pct": th.LAUNCH_BOUND_MIN_IDLE_PCT}, "medium",
     {**JAX_GPU, "median_kernel_us": th.LAUNCH_BOUND_MAX_MEDIAN_US, "device_idle_pct": 50.0}),
    ("compile.launch_bound_xla", {**JAX_GPU, "device_idle_pct": 50.0}, "high",
     {**JAX_GPU, "kernels_per_step": th.LAUNCH_BOUND_MIN_KERNELS - 1, "device_idle_pct": 50.0}),
    # the verdict says launch-bound: few kernels per step are enough (the corpus jax08 traces)
    ("compile.launch_bound_xla", {**JAX_GPU, "kernels_per_step": 9, "bottleneck": "launch"}, "high",
     {**JAX_GPU, "kernels_per_step": 9, "bottleneck": "launch", "framework": "tf"}),
    ("precision.cpu_16bit", {**BF16_ON_CPU, "cpu_16bit_native": False}, "medium", CPU_ONLY),
    # not shown native by the profile: medium (never high: native math would make float32 slower),
    # whatever the machine running the Advisor has
    ("precision.cpu_16bit", {**BF16_ON_CPU, "cpu_16bit_native": None}, "medium",
     {**CPU_ONLY, "cpu_16bit_native": False}),
    ("precision.cpu_16bit", {**BF16_ON_CPU, "cpu_16bit_native": True}, "low", CPU_ONLY),
    (
        "input.preprocessing",
        {**CPU_ONLY, **PRE, "preprocessing_pct": th.PREPROCESSING_HIGH_PCT},
        "high",
        {**CPU_ONLY, **PRE, "preprocessing_pct": th.PREPROCESSING_STEP_PCT - 0.1},
    ),
    (
        "input.preprocessing",
        {**CPU_ONLY, **PRE, "preprocessing_pct": th.PREPROCESSING_HIGH_PCT - 0.1},
        "medium",
        {**PRE, "preprocessing_pct": 90.0},  # a GPU run that is not input-bound: the cores are free
    ),
    (
        "input.preprocessing",
        {**INPUT_HIGH, **PRE, "preprocessing_pct": th.PREPROCESSING_STEP_PCT},
        "medium",
        {**INPUT_HIGH, **PRE, "preprocessing_pct": th.PREPROCESSING_STEP_PCT - 0.1},
    ),
    (
        "input.parallel_map",
        {**INPUT_HIGH, "sequential_map": True, "map_parallelism": 1},
        "high",
        {**INPUT_HIGH, "sequential_map": False, "map_parallelism": 4},
    ),
    (
        "input.parallel_map",
        {**INPUT_MODERATE, "sequential_map": True, "map_parallelism": 1},
        "medium",
        {"sequential_map": True, "map_parallelism": 1},
    ),  # not input-bound
    ("input.background_prefetch", {**INPUT_HIGH, **ANNOTATED}, "high",
     {**INPUT_HIGH, **ANNOTATED, "input_annotation_pct": th.INPUT_MODERATE_PCT - 0.1}),
    ("input.background_prefetch",
     {**INPUT_MODERATE, **ANNOTATED, "input_annotation_pct": th.INPUT_MODERATE_PCT}, "medium",
     {**INPUT_HIGH, **ANNOTATED, "input_kind": "tf.data"}),
    ("input.background_prefetch", {**INPUT_HIGH, **ANNOTATED, "framework": "tf"}, "high",
     {**INPUT_HIGH, **ANNOTATED, "framework": "pytorch"}),  # PyTorch runs get the DataLoader rules
    ("input.prefetch", {**INPUT_HIGH, "prefetch": False}, "high", {**INPUT_HIGH, "prefetch": True}),
    ("input.prefetch", {**INPUT_MODERATE, "prefetch": False}, "medium", {**INPUT_HIGH, "prefetch": None}),
    (
        "input.cache",
        {**INPUT_HIGH, "dominant_stage": "source", "file_source": True, "cache": False},
        "medium",
        {**INPUT_HIGH, "dominant_stage": "source", "file_source": True, "cache": True},
    ),
    (
        "input.cache",
        {**INPUT_HIGH, "dominant_stage": "map", "cache": False},
        "low",
        {**INPUT_HIGH, "dominant_stage": "batch", "cache": False},
    ),
    (
        "input.interleave",
        {**INPUT_HIGH, "dominant_stage": "source", "file_source": True, "interleave": False},
        "high",
        {**INPUT_HIGH, "dominant_stage": "source", "file_source": False, "interleave": False},
    ),
    (
        "input.preprocess_offline",
        {**INPUT_HIGH, "dominant_stage": "map", "map_parallelism": 8},
        "high",
        {**INPUT_HIGH, "dominant_stage": "map", "sequential_map": True, "map_parallelism": 1},
    ),
    (
        "precision.mixed",
        {"precision_pct": {"fp32": 90.0, "unknown": 10.0}, "breakdown_pct": {"device_compute": 85.0}},
        "high",
        {
            "precision_pct": {"fp32": 90.0},
            "breakdown_pct": {"device_compute": th.PRECISION_DEVICE_SHARE_PCT - 1},
        },
    ),
    (
        "precision.mixed",
        {
            "precision_pct": {"fp32": 60.0, "tf32": 30.0},
            "breakdown_pct": {"device_compute": 85.0},
            "bottleneck": "balanced",
        },
        "medium",
        {
            "precision_pct": {"fp32": 90.0},
            "breakdown_pct": {"device_compute": 85.0},
            "compute_capability": (6, 1),
        },
    ),
    (
        "precision.tf32",
        {"fp32_matmul_pct": 30.0, "precision_pct": {"fp32": 60.0}},
        "medium",
        {"fp32_matmul_pct": 30.0, "precision_pct": {"fp32": 60.0}, "compute_capability": (7, 0)},
    ),
    (
        "precision.tf32",
        {"fp32_matmul_pct": th.TF32_FP32_MATMUL_SHARE_PCT},
        "medium",
        {"fp32_matmul_pct": th.TF32_FP32_MATMUL_SHARE_PCT - 0.1},
    ),
    (
        "compile.xla",
        {"kernels_per_step": 3000, "mean_kernel_us": 6.0},
        "medium",
        {"kernels_per_step": 3000, "mean_kernel_us": 6.0, "xla_compiled": True},
    ),
    (
        "compile.xla",
        {"breakdown_pct": {"kernel_launch": 20.0, "device_compute": 60.0}, "bottleneck": "launch"},
        "high",
        {"breakdown_pct": {"kernel_launch": 20.0}, "framework": "jax"},
    ),
    (
        "host.tf_function",
        {"eager_ops_per_step": 300, "compiled_step": False, "bottleneck": "host"},
        "high",
        {"eager_ops_per_step": 300, "compiled_step": True},
    ),
    (
        "host.tf_function",
        {"eager_ops_per_step": th.EAGER_OPS_PER_STEP},
        "medium",
        {"eager_ops_per_step": th.EAGER_OPS_PER_STEP - 1},
    ),
    (
        "layout.transpose",
        {"transpose_pct": 12.0, "transpose_kernels": ["SwapDimension1And2InTensor3UsingTiles"]},
        "medium",
        {"transpose_pct": th.TRANSPOSE_SHARE_PCT - 0.1},
    ),
    (
        "device.no_kernels",
        {"gpu_planes": 2, "active_devices": 0},
        "high",
        {"gpu_planes": 2, "active_devices": 1},
    ),
    (
        "device.no_kernels",
        {"cupti_problem": "cupti_privileges", "cupti_message": "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"},
        "high",
        {"gpu_planes": 0, "active_devices": 0, "device_kind": ""},
    ),
    ("profile.warmup_step", {"early_step_numbers": [0, 1]}, "low", {"early_step_numbers": []}),
    ("profile.warmup_step", {"warmup_steps": 1}, "low", {"warmup_steps": 0}),
    ("profile.few_steps", {"step_count": th.FEW_STEPS - 1}, "low", {"step_count": th.FEW_STEPS}),
    (
        "profile.few_steps",
        {"step_count": 1, "step_source": "inferred"},
        "low",
        {"step_count": 0, "step_source": "none"},
    ),
    ("profile.step_markers", {"step_source": "inferred"}, "low", {"step_source": "keras3_marker"}),
    ("profile.cut_off_step", {"cut_off_steps": ["step 5"]}, "low", {"cut_off_steps": []}),
    (
        "input.dataloader_workers",
        {**INPUT_HIGH, "framework": "pytorch"},
        "high",
        {**INPUT_HIGH, "framework": "tf"},  # tf.data has its own rules
    ),
    (
        "input.dataloader_workers",
        {**INPUT_MODERATE, "framework": "pytorch"},
        "medium",
        {"framework": "pytorch"},  # not input-bound
    ),
    (
        "compile.torch",
        {"framework": "pytorch", "kernels_per_step": th.XLA_MIN_KERNELS_PER_STEP, "mean_kernel_us": 5.0},
        "medium",
        {"framework": "pytorch", "kernels_per_step": th.XLA_MIN_KERNELS_PER_STEP - 1, "mean_kernel_us": 5.0},
    ),
    (
        "compile.torch",
        {"framework": "pytorch", "bottleneck": "launch",
         "breakdown_pct": {"kernel_launch": th.OVERHEAD_MODERATE_PCT, "device_compute": 60.0}},
        "high",
        {"framework": "pytorch", "device_kind": "",
         "breakdown_pct": {"kernel_launch": 30.0, "device_compute": 60.0}},  # CPU only: no kernels
    ),
]

# Rules whose fix exists only in TF/JAX (tf.data, XLA via TF, tf.function): quiet or unhelpful on PyTorch
TF_JAX_ONLY = {
    "input.parallel_map", "input.prefetch", "input.cache", "input.interleave", "input.preprocess_offline",
    "compile.xla", "host.tf_function",
    "input.background_prefetch",  # the user's own input annotations; PyTorch runs get the DataLoader rules
    "compile.launch_bound_xla",  # XLA programs; a launch-bound PyTorch run gets compile.torch
}


# Rules whose fix exists only in PyTorch (DataLoader, torch.compile, zero_grad): no TF/JAX snippet
PYTORCH_ONLY = {"input.dataloader_workers", "compile.torch", "input.pin_memory",
                "optimizer.zero_grad_set_to_none"}


def facts(**changes) -> Facts:
    return dataclasses.replace(QUIET, **changes)


def fired(f: Facts):
    return {r.id: r for r in recommend(f)}


def test_the_quiet_run_gets_no_advice():
    assert recommend(QUIET) == []


@pytest.mark.parametrize(("rule_id", "fire", "severity", "quiet"), CASES)
def test_rule_fires_and_stays_quiet(rule_id, fire, severity, quiet):
    on = fired(facts(**fire))
    assert rule_id in on, f"{rule_id} should fire on {fire}"
    assert on[rule_id].severity == severity
    assert on[rule_id].evidence and on[rule_id].title and on[rule_id].message
    assert rule_id not in fired(facts(**quiet)), f"{rule_id} should not fire on {quiet}"


def test_every_rule_has_a_case_and_every_design_id_is_a_rule():
    assert set(DESIGN_IDS) <= set(RULE_IDS)
    assert {case[0] for case in CASES} == set(RULE_IDS)
    assert len(RULE_IDS) == len(set(RULE_IDS)), "rule ids are unique"


def test_every_rule_has_a_tf_snippet_and_jax_snippets_where_they_apply():
    for rule in RECOMMENDATIONS:
        snippets = rule.snippets_for(QUIET)
        if rule.id in PYTORCH_ONLY:
            assert not snippets.tf and not snippets.jax, rule.id  # and a PyTorch one: checked below
            continue
        assert snippets.tf.strip(), rule.id
        if rule.id != "compile.xla":  # JAX always compiles with XLA
            assert snippets.jax.strip(), rule.id


def test_recommendations_are_sorted_by_severity_and_serialise():
    out = recommend(
        facts(
            **INPUT_HIGH,
            sequential_map=True,
            map_parallelism=1,
            prefetch=False,
            step_count=2,
            early_step_numbers=[0],
        )
    )
    order = [SEVERITIES.index(r.severity) for r in out]
    assert order == sorted(order)
    for a, b in zip(out, out[1:]):  # within a severity, the largest expected gain first
        if a.severity == b.severity:
            assert a.expected_gain.middle_ms >= b.expected_gain.middle_ms, (a.id, b.id)
    payload = out[0].to_json()
    assert set(payload) == {
        "id", "severity", "title", "message", "evidence", "snippet", "snippet_jax", "snippet_label",
        "expected_gain", "evidence_spans",
    }
    assert payload["evidence_spans"] == []  # the rules see Facts; the report attaches the spans
    assert (
        "num_parallel_calls=tf.data.AUTOTUNE"
        in fired(facts(**INPUT_HIGH, sequential_map=True))["input.parallel_map"].snippet
    )


def test_every_rule_that_applies_to_pytorch_has_a_pytorch_snippet():
    assert not (PYTORCH_ONLY | TF_JAX_ONLY) - set(RULE_IDS)
    for rule in RECOMMENDATIONS:
        pytorch = rule.snippets_for(QUIET).pytorch
        assert bool(pytorch.strip()) == (rule.id not in TF_JAX_ONLY), rule.id


@pytest.mark.parametrize(("rule_id", "fire", "severity", "quiet"), CASES)
def test_a_pytorch_run_gets_pytorch_snippets_and_never_tf_ones(rule_id, fire, severity, quiet):
    if rule_id in TF_JAX_ONLY:
        return
    on_facts = facts(**{**fire, "framework": "pytorch"})
    on = fired(on_facts)
    assert rule_id in on, f"{rule_id} should fire on a PyTorch run too"
    advice = on[rule_id]
    assert advice.snippet_label == "PyTorch" and advice.snippet_jax == ""
    device_specific = mixed_precision_snippets(on_facts.compute_capability)
    if rule_id == "precision.mixed" and device_specific is not None:  # fp16 or bf16 by the GPU
        assert advice.snippet == device_specific.pytorch
    else:
        assert advice.snippet == rule_of(rule_id).snippets_for(on_facts).pytorch
    assert "keras" not in advice.snippet and "tf." not in advice.snippet and "jax" not in advice.snippet


def test_tf_runs_keep_their_tf_and_jax_snippets():
    on = fired(facts(precision_pct={"fp32": 95.0}, breakdown_pct={"device_compute": 90.0}))
    assert on["precision.mixed"].snippet_label == "TF/Keras"
    assert "keras.mixed_precision" in on["precision.mixed"].snippet
    assert on["precision.mixed"].snippet_jax


def test_pytorch_only_rules_stay_quiet_on_tf_and_jax_runs():
    for framework in ("tf", "jax", "unknown"):
        on = fired(facts(**INPUT_HIGH, framework=framework, kernels_per_step=10_000, mean_kernel_us=2.0))
        assert not PYTORCH_ONLY & set(on), framework
