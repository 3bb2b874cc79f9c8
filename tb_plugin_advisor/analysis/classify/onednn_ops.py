"""oneDNN names: the TensorFlow ops its op names stand for (the one table every analysis uses), and
the instruction set its kernel names say they ran on.

With its oneDNN graph rewrite on (default on x86 CPUs with AVX512-VNNI / AVX512-BF16 / AMX, anywhere
with TF_ENABLE_ONEDNN_OPTS=1) TensorFlow renames the ops it hands to oneDNN: `Conv2D` runs as
`_MklNativeConv2D`, `_FusedMatMul` as `_MklNativeFusedMatMul`, `MatMul` as `_MklMatMul`. A profile
then names ops users never wrote; categories, precision, Tensor Core eligibility, op tables and the
diff must read them as the familiar op and show the oneDNN name beside it.

Source: TensorFlow's own rewrite pass (tensorflow/core/common_runtime/mkl_layout_pass.cc: the op
types it registers; `_Mkl` + type, `_MklNative` + type for native-format kernels, a leading `_` of
an internal fused op dropped) and the grappler remapper's oneDNN fusions. The `_MklNative…` names of
TF 2.21's default build were read off real profiles (tests/analysis/classify/test_onednn_ops.py).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, Optional, Tuple

# Kernel names in a profile that are native 16-bit math on the CPU that ran them: oneDNN names its
# implementations after the instruction set (`brg:avx512_core_amx`, `jit:avx512_core_bf16`,
# `brgconv:avx512_core_amx_fp16`); an AMX-FP16 CPU also has AMX-BF16.
NATIVE_16BIT_KERNELS: Dict[str, re.Pattern] = {
    "bf16": re.compile(r"avx512_core_amx|avx512_core_bf16|amx_bf16|avx512_bf16", re.I),
    "fp16": re.compile(r"avx512_core_amx_fp16|avx512_core_fp16|amx_fp16|avx512_fp16", re.I),
}

# Op types the layout pass rewrites (`_Mkl<op>` and `_MklNative<op>`; `_FusedConv2D` → `_MklFusedConv2D`).
REWRITTEN_OP_TYPES: Tuple[str, ...] = (
    "Add", "AddN", "AddV2", "AvgPool", "AvgPool3D", "AvgPool3DGrad", "AvgPoolGrad", "BatchMatMul",
    "BatchMatMulV2", "Concat", "ConcatV2", "ConjugateTranspose", "Conv2D", "Conv2DBackpropFilter",
    "Conv2DBackpropInput", "Conv3D", "Conv3DBackpropFilterV2", "Conv3DBackpropInputV2",
    "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropFilter", "DepthwiseConv2dNativeBackpropInput",
    "Dequantize", "Einsum", "FusedBatchNorm", "FusedBatchNormGrad", "FusedBatchNormGradV2",
    "FusedBatchNormGradV3", "FusedBatchNormV2", "FusedBatchNormV3", "_FusedBatchNormEx", "_FusedConv2D",
    "_FusedConv3D", "_FusedDepthwiseConv2dNative", "_FusedMatMul", "Identity", "LRN", "LRNGrad",
    "LeakyRelu", "LeakyReluGrad", "MatMul", "MaxPool", "MaxPool3D", "MaxPool3DGrad", "MaxPoolGrad",
    "Maximum", "Mul", "QuantizeV2", "QuantizedAvgPool", "QuantizedConcatV2", "QuantizedConv2D",
    "QuantizedConv2DAndRelu", "QuantizedConv2DAndReluAndRequantize", "QuantizedConv2DAndRequantize",
    "QuantizedConv2DPerChannel", "QuantizedConv2DWithBias", "QuantizedConv2DWithBiasAndRelu",
    "QuantizedConv2DWithBiasAndReluAndRequantize", "QuantizedConv2DWithBiasAndRequantize",
    "QuantizedConv2DWithBiasSignedSumAndReluAndRequantize", "QuantizedConv2DWithBiasSumAndRelu",
    "QuantizedConv2DWithBiasSumAndReluAndRequantize", "QuantizedDepthwiseConv2D",
    "QuantizedDepthwiseConv2DWithBias", "QuantizedDepthwiseConv2DWithBiasAndRelu",
    "QuantizedDepthwiseConv2DWithBiasAndReluAndRequantize", "QuantizedMatMulWithBias",
    "QuantizedMatMulWithBiasAndDequantize", "QuantizedMatMulWithBiasAndRelu",
    "QuantizedMatMulWithBiasAndReluAndRequantize", "QuantizedMatMulWithBiasAndRequantize",
    "QuantizedMaxPool", "Relu", "Relu6", "Relu6Grad", "ReluGrad", "Requantize", "Reshape", "Slice",
    "Softmax", "Split", "SquaredDifference", "Sub", "Tanh", "TanhGrad", "Transpose",
)

# Names the rewrite pass builds by merging two ops, and oneDNN-only fusions of the grappler remapper:
# the op a user would look for (the heavy one of the merged pair).
MERGED_OP_TYPES: Dict[str, str] = {
    "Conv2DWithBias": "Conv2D",  # Conv2D + BiasAdd
    "Conv2DBackpropFilterWithBias": "Conv2DBackpropFilter",  # Conv2DBackpropFilter + BiasAddGrad
    "PadWithConv2D": "Conv2D",  # Pad + Conv2D
    "PadWithFusedConv2D": "_FusedConv2D",  # Pad + _FusedConv2D
    "FusedBatchMatMulV2": "BatchMatMulV2",  # BatchMatMulV2 + Mul/Add (remapper)
    "LayerNorm": "LayerNorm",  # Keras LayerNormalization's ops fused (remapper); no TF op of that name
    "FusedInstanceNorm": "InstanceNorm",  # instance normalisation fused (remapper)
    "Swish": "Swish",  # Sigmoid + Mul (remapper)
    "FusedMish": "Mish",
    "InputConversion": "layout conversion",  # oneDNN blocked layout ↔ TF layout, no user op
    "ToTf": "layout conversion",
}

ONEDNN_PREFIX = re.compile(r"^_Mkl(?:Native)?(?=[A-Z_])")


def _table() -> Dict[str, str]:
    table: Dict[str, str] = {}
    for op in REWRITTEN_OP_TYPES:
        for prefix in ("_Mkl", "_MklNative"):
            table[prefix + op.lstrip("_")] = op
    for merged, op in MERGED_OP_TYPES.items():
        for prefix in ("_Mkl", "_MklNative"):
            table[prefix + merged] = op
    return table


# THE table: oneDNN op type → familiar op type.
ONEDNN_OP_TYPES: Dict[str, str] = _table()


@lru_cache(maxsize=4096)
def familiar_op_type(op_type: str) -> str:
    """`_MklNativeFusedConv2D` → `_FusedConv2D`; any other type unchanged.

    A `_Mkl…` name missing from the table (a newer TensorFlow) loses its prefix, so it still reads as
    the op it wraps rather than as an unknown op.
    """
    known = ONEDNN_OP_TYPES.get(op_type)
    if known is not None:
        return known
    if ONEDNN_PREFIX.match(op_type):
        rest = ONEDNN_PREFIX.sub("", op_type)
        return "_" + rest if rest.startswith("Fused") else rest
    return op_type


def is_onednn_op_type(op_type: str) -> bool:
    return bool(ONEDNN_PREFIX.match(op_type))


def familiar_tf_op(event_name: str) -> Tuple[str, Optional[str]]:
    """A TF op event `scope/name:_MklMatMul` → (`scope/name:MatMul`, `_MklMatMul`); (name, None) otherwise."""
    if ":_Mkl" not in event_name:  # no oneDNN op type after the last ':' (most names: no cache entry)
        return event_name, None
    return _familiar_tf_op(event_name)


@lru_cache(maxsize=65536)
def _familiar_tf_op(event_name: str) -> Tuple[str, Optional[str]]:
    head, sep, op_type = event_name.rpartition(":")
    if not sep or not is_onednn_op_type(op_type):
        return event_name, None
    return f"{head}:{familiar_op_type(op_type)}", op_type
