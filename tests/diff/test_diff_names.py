"""The op/kernel name normalisation table: every rule does what its examples say, and is needed."""

from __future__ import annotations

import pytest
from paths import CORPUS, NO_CORPUS

from tb_plugin_advisor.diff.names import NAME_RULES, NAME_RULES_KEEP, normalise_name

EXAMPLES = [(rule.id, raw, expected) for rule in NAME_RULES for raw, expected in rule.examples]


def test_rule_ids_are_unique_and_every_rule_has_examples():
    ids = [rule.id for rule in NAME_RULES]
    assert len(ids) == len(set(ids))
    assert all(rule.examples and rule.why for rule in NAME_RULES)


@pytest.mark.parametrize("rule_id, raw, expected", EXAMPLES, ids=[f"{r}:{raw}" for r, raw, _ in EXAMPLES])
def test_each_example_normalises_as_documented(rule_id, raw, expected):
    assert normalise_name(raw) == expected


@pytest.mark.parametrize("rule", NAME_RULES, ids=[rule.id for rule in NAME_RULES])
def test_each_rule_is_needed(rule):
    without = tuple(r for r in NAME_RULES if r is not rule)
    assert any(normalise_name(raw, without) != expected for raw, expected in rule.examples)


@pytest.mark.parametrize("name", NAME_RULES_KEEP)
def test_names_without_instance_parts_are_left_alone(name):
    assert normalise_name(name) == name


@pytest.mark.parametrize("raw, _expected", [(raw, e) for _, raw, e in EXAMPLES])
def test_normalising_twice_changes_nothing_more(raw, _expected):
    once = normalise_name(raw)
    assert normalise_name(once) == once


@pytest.mark.parametrize(
    "a, b",
    [
        # The same op in two runs, named differently by the framework:
        ("__inference_train_function_1234", "__inference_train_function_88"),
        ("sequential/conv2d/Conv2D:Conv2D", "sequential_1/conv2d_3/Conv2D:Conv2D"),
        ("%fusion.12", "fusion.7"),
        ("jit_train_step(13)/dot_general.4", "jit_train_step(2)/dot_general.11"),
        ("cond_17/then/_256/cond_17/AdamWeightDecay/mul", "cond_3/then/_12/cond_3/AdamWeightDecay/mul"),
        ("replica_6/bert/layer_23/dropout_2/Mul", "replica_5/bert/layer_23/dropout_2/Mul"),
    ],
)
def test_instances_of_one_op_meet(a, b):
    assert normalise_name(a) == normalise_name(b)


@pytest.mark.parametrize(
    "a, b",
    [
        ("ampere_sgemm_128x64_nn", "ampere_sgemm_64x64_nn"),  # different tiles: different kernels
        ("model/dense/MatMul:MatMul", "model/dense/BiasAdd:BiasAdd"),
        ("volta_h884gemm_64x64_ldg8_nn", "volta_s884gemm_64x64_ldg8_nn"),
        ("fusion", "loop_fusion"),
    ],
)
def test_different_ops_stay_apart(a, b):
    assert normalise_name(a) != normalise_name(b)


def _corpus_kernel_names():
    from tb_plugin_advisor.readers.xplane.reader import read_xplane

    if not CORPUS.exists():
        pytest.skip(NO_CORPUS)
    names = set()
    for path in sorted(CORPUS.rglob("*.xplane.pb")):
        if "_corrupt" in path.parts:
            continue
        for device in read_xplane(str(path)).devices:
            kernels = device.kernels
            names.update(kernels.names[int(i)] for i in set(kernels.name_index.tolist()))
    return names


def test_real_kernel_names_lose_only_xla_instance_numbers():
    """Over every kernel in the corpus (CUDA, Eigen, AMD Tensile, XLA GPU, TPU HLO): library kernels
    keep their names (tile sizes included); only XLA fusion / HLO instruction numbering goes."""
    names = _corpus_kernel_names()
    assert len(names) >= 50
    changed = {n for n in names if normalise_name(n) != n}
    assert changed, "the corpus has renumbered XLA fusions; some must normalise"
    for name in changed:
        xla = "fusion" in name or name.startswith("%")
        assert xla, f"a library kernel lost part of its name: {name}"
    merged = {normalise_name(n) for n in names if n.startswith(("gemm_fusion_dot_", "gemm_fusion_dot."))}
    assert "gemm_fusion_dot.kd" in merged
