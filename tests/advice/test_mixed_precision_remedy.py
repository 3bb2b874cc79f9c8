"""The mixed-precision remedy in the run's framework and for its device: float16 with loss scaling
on GPUs without bf16 (Volta, Turing), bf16 from Ampere on, the generic advice where the device is
unknown. Every entry of the snippet table is shown for some run."""

from __future__ import annotations

import pytest

from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.recommend import recommend
from tb_plugin_advisor.advice.rules.mixed_precision import (
    SNIPPETS,
    mixed_precision_snippets,
    sixteen_bit_type,
)

FP32_GPU = dict(device_kind="GPU", precision_verdict="fp32", precision_pct={"fp32": 100.0},
                breakdown_pct={"device_compute": 80.0}, fp32_matmul_pct=60.0, bottleneck="device_compute",
                step_count=10, step_source="profiler_step", active_devices=1, gpu_planes=1)


@pytest.mark.parametrize("capability,kind", [((7, 0), "fp16"), ((7, 5), "fp16"), ((8, 0), "bf16"),
                                             ((9, 0), "bf16"), ((6, 1), None), (None, None)])
def test_the_16_bit_type_follows_the_compute_capability(capability, kind):
    assert sixteen_bit_type(capability) == kind


@pytest.mark.parametrize("framework", ["pytorch", "tf", "jax"])
@pytest.mark.parametrize("capability,kind", [((7, 0), "fp16"), ((8, 0), "bf16")])
def test_every_snippet_is_shown_for_its_framework_and_device(framework, capability, kind):
    facts = Facts(framework=framework, compute_capability=capability, **FP32_GPU)
    mixed = next(r for r in recommend(facts) if r.id == "precision.mixed")
    if framework == "pytorch":
        assert (mixed.snippet, mixed.snippet_jax) == (SNIPPETS[("pytorch", kind)], "")
    else:
        assert (mixed.snippet, mixed.snippet_jax) == (SNIPPETS[("tf", kind)], SNIPPETS[("jax", kind)])


@pytest.mark.parametrize("capability,expected,absent", [
    ((7, 0), ("torch.float16", "GradScaler"), ("bfloat16",)),
    ((8, 0), ("torch.bfloat16",), ("GradScaler", "torch.float16")),
])
def test_a_pytorch_run_gets_pytorch_code_for_its_gpu(capability, expected, absent):
    facts = Facts(framework="pytorch", compute_capability=capability, **FP32_GPU)
    mixed = next((r for r in recommend(facts) if r.id == "precision.mixed"), None)
    assert mixed is not None, [r.id for r in recommend(facts)]
    assert mixed.snippet_label == "PyTorch" and not mixed.snippet_jax
    assert all(word in mixed.snippet for word in expected)
    assert not any(word in mixed.snippet for word in absent)
    assert "mixed_float16" not in mixed.snippet and "keras" not in mixed.snippet


def test_without_a_known_generation_the_generic_snippets_stay():
    assert mixed_precision_snippets(None) is None
    assert mixed_precision_snippets((6, 1)) is None
