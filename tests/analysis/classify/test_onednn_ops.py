"""oneDNN op names read as the ops they stand for, in every analysis (onednn_ops.py is the one table)."""

from __future__ import annotations

import pytest

from tb_plugin_advisor.analysis.classify.onednn_ops import (
    MERGED_OP_TYPES,
    ONEDNN_OP_TYPES,
    REWRITTEN_OP_TYPES,
    familiar_op_type,
    familiar_tf_op,
)
from tb_plugin_advisor.analysis.classify.patterns import classify_op
from tb_plugin_advisor.analysis.precision.device import analyze_precision
from tb_plugin_advisor.diff.names import NAME_RULES, normalise_name
from tb_plugin_advisor.readers.xplane.reader import read_xplane

# Op types read off TF 2.21 CPU profiles captured with TF_ENABLE_ONEDNN_OPTS=1 (tests/tf_profiles.py,
# the demo's runs) and the names the issue quotes, with the op each stands for.
SEEN = {
    "_MklMatMul": "MatMul",
    "_MklNativeFusedMatMul": "_FusedMatMul",
    "_MklNativeFusedConv2D": "_FusedConv2D",
    "_MklNativeConv2D": "Conv2D",
    "_MklNativeConv2DBackpropInput": "Conv2DBackpropInput",
    "_MklNativeConv2DBackpropFilter": "Conv2DBackpropFilter",
    "_MklNativeConv2DBackpropFilterWithBias": "Conv2DBackpropFilter",
    "_MklNativeMaxPool": "MaxPool",
    "_MklNativeMaxPoolGrad": "MaxPoolGrad",
    "_MklFusedMatMul": "_FusedMatMul",
    "_MklNativeFusedBatchNormV3": "FusedBatchNormV3",
    "_MklLayerNorm": "LayerNorm",
    "_MklSoftmax": "Softmax",
    "_MklBatchMatMulV2": "BatchMatMulV2",
    "_MklEinsum": "Einsum",
}


@pytest.mark.parametrize("onednn, familiar", sorted(SEEN.items()))
def test_names_seen_in_profiles_are_in_the_table(onednn, familiar):
    assert ONEDNN_OP_TYPES[onednn] == familiar
    assert familiar_op_type(onednn) == familiar


def test_every_table_entry_is_a_prefixed_rewritten_or_merged_op():
    familiar_ops = set(REWRITTEN_OP_TYPES) | set(MERGED_OP_TYPES.values())
    for onednn, familiar in ONEDNN_OP_TYPES.items():
        assert onednn.startswith("_Mkl"), onednn
        assert familiar in familiar_ops, (onednn, familiar)
        stem = onednn.removeprefix("_MklNative") if onednn.startswith("_MklNative") else onednn[4:]
        assert stem == familiar.lstrip("_") or MERGED_OP_TYPES.get(stem) == familiar, (onednn, familiar)
    # both spellings exist for every rewritten op
    for op in REWRITTEN_OP_TYPES:
        assert ONEDNN_OP_TYPES["_Mkl" + op.lstrip("_")] == op
        assert ONEDNN_OP_TYPES["_MklNative" + op.lstrip("_")] == op


def test_unknown_mkl_names_lose_the_prefix_and_others_stay():
    assert familiar_op_type("_MklNativeFusedGelu") == "_FusedGelu"
    assert familiar_op_type("_MklNewOp") == "NewOp"
    for name in ("MatMul", "_FusedConv2D", "Mklish", "_Mk", "DecodePng"):
        assert familiar_op_type(name) == name


def test_tf_op_event_keeps_its_scope():
    assert familiar_tf_op("model/dense/MatMul:_MklMatMul") == ("model/dense/MatMul:MatMul", "_MklMatMul")
    assert familiar_tf_op("model/dense/MatMul:MatMul") == ("model/dense/MatMul:MatMul", None)
    assert familiar_tf_op("MemoryAllocation") == ("MemoryAllocation", None)


@pytest.mark.parametrize("op_type", ["_MklMatMul", "_MklNativeFusedConv2D",
                                     "_MklNativeConv2DBackpropFilterWithBias", "_MklBatchMatMulV2",
                                     "_MklEinsum", "_MklNativeFusedMatMul"])
def test_onednn_matrix_ops_are_tensor_core_candidates(op_type):
    assert classify_op(f"model/layer/op:{op_type}") == (True, "tf_matrix_op")


@pytest.mark.parametrize("op_type", ["_MklNativeMaxPool", "_MklSoftmax", "_MklLayerNorm", "_MklToTf"])
def test_onednn_other_ops_are_not(op_type):
    assert classify_op(f"model/layer/op:{op_type}") == (False, None)


def test_diff_matches_onednn_on_with_off():
    rule = next(r for r in NAME_RULES if r.id == "onednn_op")
    for before, after in rule.examples:
        assert normalise_name(before) == normalise_name(after)
    assert normalise_name("sequential_1/conv2d_2/Conv2D:_MklNativeFusedConv2D") == (
        "sequential/conv2d/Conv2D:_FusedConv2D")


def test_real_profile_ops_map_through_the_table(tf_profiles):
    """With oneDNN on every `_Mkl…` op in the real fixtures is a table entry (no fallback guess);
    with it off there are none and the analyses see TensorFlow's own names."""
    seen = {t for facts in tf_profiles.facts.values() for t in facts["onednn_op_types"]}
    assert bool(seen) == tf_profiles.onednn
    assert seen <= set(ONEDNN_OP_TYPES), seen - set(ONEDNN_OP_TYPES)
    result = analyze_precision(read_xplane(str(tf_profiles.xplane("loop_fixed"))))
    if tf_profiles.onednn:
        assert set(result.onednn_ops.values()) <= seen
        assert result.onednn_ops, "the loop's ops ran as oneDNN ops but none was recognised"
    else:
        assert result.onednn_ops == {}


def test_exports_show_the_familiar_name_with_the_onednn_name_beside_it():
    from tb_plugin_advisor.views.export.render import render

    op = {"name": "d/MatMul:MatMul", "category": "host_compute", "time_ms": 1.0, "count": 1.0,
          "onednn_op": "_MklMatMul"}
    assert "d/MatMul:MatMul (oneDNN _MklMatMul)" in render({"ops": [op]}, "text")
    assert "d/MatMul:MatMul (oneDNN _MklMatMul)" in render({"ops": [op]}, "html")
    assert "(oneDNN " in render({"ops": [op]}, "md")
    plain = dict(op, onednn_op=None)
    assert "oneDNN" not in render({"ops": [plain]}, "text")
