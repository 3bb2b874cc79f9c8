"""FLOPs and elements moved of one PyTorch op, from what `record_shapes=True` writes about its inputs.

Kineto records each aten op's `Input Dims` (tensor shapes) and, from PyTorch 2.1 on, `Concrete Inputs`
(its scalar and list arguments as strings: a convolution's stride, padding, dilation, groups, the
`output_mask` of its backward, an attention's `is_causal`). The rules here turn those into FLOPs — a
multiply-add counts 2 — and the elements the op reads and writes (inputs + output; the caller
multiplies by the element width). Each rule family is one table keyed by the exact op name, because
argument positions differ from op to op and a wrong position would silently give a wrong number:

- matrix products (mm, addmm, bmm, baddbmm, matmul, linear, einsum with a recorded equation);
- convolutions forward: 2 · N · C_out · prod(output spatial) · C_in/groups · prod(kernel). The output
  size comes from the recorded stride/padding/dilation, else from a hint the caller found elsewhere in
  the trace (the backward's grad_output, the next op's input) — older traces record no scalars.
  Transposed convolutions need no output size: 2 · prod(input) · C_out/groups · prod(kernel);
- convolution backward: each gradient asked for (input, weight) costs one forward convolution, whose
  output is grad_output, so no stride is needed; when `output_mask` is not recorded both are assumed
  and `per_gradient` lets the caller count the gradients its child ops show;
- attention (scaled_dot_product_attention and the flash / memory-efficient / cuDNN kernels it
  dispatches to): forward 4 · B · H · S_q · S_k · D (two matrix products), backward 2.5 × that
  (five products), half of each when the op says it is causal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from tb_plugin_advisor.analysis.thresholds import MAX_TENSOR_ELEMENTS

Dims = List[List[int]]


class ShapeCost(NamedTuple):
    """FLOPs of one op call and the elements it moves (None when its output size is not known)."""

    flops: float
    elements: Optional[float]
    # A convolution backward whose output_mask was not recorded: FLOPs of one gradient (the total
    # assumes both); 0 otherwise.
    per_gradient: float = 0.0


# ---------------------------------------------------------------------------------------------------
# Tables

# Matrix products → how the operands are laid out: "mm" (a, b), "addmm" (bias, a, b), "linear"
# (x[..., K], w[N, K], bias).
MATMUL_OPS: Dict[str, str] = {
    "aten::mm": "mm",
    "aten::bmm": "mm",
    "aten::matmul": "mm",
    "aten::_scaled_mm": "mm",
    "aten::addmm": "addmm",
    "aten::_addmm_activation": "addmm",
    "aten::baddbmm": "addmm",
    "aten::linear": "linear",
}
EINSUM = "aten::einsum"


@dataclass(frozen=True)
class ConvSignature:
    """Where a forward convolution keeps stride, padding and dilation in `Concrete Inputs` (dilation -1:
    not an argument, 1). `transposed` is a position, or a bool for ops that are always one or the
    other; a transposed convolution needs none of the three."""

    stride: int
    padding: int
    dilation: int
    transposed: Union[int, bool] = False


_TRANSPOSED = ConvSignature(-1, -1, -1, transposed=True)
CONV_FORWARD: Dict[str, ConvSignature] = {
    "aten::conv1d": ConvSignature(3, 4, 5),
    "aten::conv2d": ConvSignature(3, 4, 5),
    "aten::conv3d": ConvSignature(3, 4, 5),
    "aten::convolution": ConvSignature(3, 4, 5, transposed=6),
    "aten::_convolution": ConvSignature(3, 4, 5, transposed=6),
    "aten::cudnn_convolution": ConvSignature(3, 2, 4),
    "aten::cudnn_convolution_relu": ConvSignature(3, 4, 5),
    "aten::miopen_convolution": ConvSignature(4, 3, 5),
    "aten::mkldnn_convolution": ConvSignature(4, 3, 5),
    "aten::_slow_conv2d_forward": ConvSignature(4, 5, -1),
    "aten::conv_transpose1d": _TRANSPOSED,
    "aten::conv_transpose2d": _TRANSPOSED,
    "aten::conv_transpose3d": _TRANSPOSED,
    "aten::cudnn_convolution_transpose": _TRANSPOSED,
    "aten::miopen_convolution_transpose": _TRANSPOSED,
}


@dataclass(frozen=True)
class ConvBackwardSignature:
    """Positions of grad_output, input and weight in `Input Dims`, of output_mask in `Concrete Inputs`,
    and of `transposed` (or False for ops that only do ordinary convolutions)."""

    grad_output: int
    input: int
    weight: int
    mask: int
    transposed: Union[int, bool] = False


CONV_BACKWARD: Dict[str, ConvBackwardSignature] = {
    "aten::convolution_backward": ConvBackwardSignature(0, 1, 2, 10, transposed=7),
    "aten::cudnn_convolution_backward": ConvBackwardSignature(1, 0, 2, 10),
    "aten::miopen_convolution_backward": ConvBackwardSignature(1, 0, 2, 9),
    "aten::mkldnn_convolution_backward": ConvBackwardSignature(1, 0, 2, 7),
    "aten::_slow_conv2d_backward": ConvBackwardSignature(0, 1, 2, 6),
}
# Child ops that compute one gradient of a convolution backward (PyTorch ≤ 1.10 split cuDNN's and
# MIOpen's backward in two): name suffix → which gradient (0: input, 1: weight).
CONV_GRADIENT_CHILDREN: Dict[str, int] = {"_backward_input": 0, "_backward_weight": 1}


@dataclass(frozen=True)
class AttentionSignature:
    """An attention op: where q, k, v are in `Input Dims`, their layout ("bhsd" or "bshd"), where its
    causal flag is in `Concrete Inputs` (a bool, or the memory-efficient kernels' custom_mask_type,
    non-zero when causal) and whether it is a backward."""

    q: int
    k: int
    v: int
    layout: str
    causal: int
    backward: bool = False


def _fwd(causal: int, layout: str = "bhsd") -> AttentionSignature:
    return AttentionSignature(0, 1, 2, layout, causal)


def _bwd(causal: int, layout: str = "bhsd") -> AttentionSignature:
    return AttentionSignature(1, 2, 3, layout, causal, backward=True)


ATTENTION: Dict[str, AttentionSignature] = {
    "aten::scaled_dot_product_attention": _fwd(5),
    "aten::_scaled_dot_product_attention_math": _fwd(5),
    "aten::_scaled_dot_product_flash_attention": _fwd(4),
    "aten::_scaled_dot_product_flash_attention_for_cpu": _fwd(4),
    "aten::_scaled_dot_product_efficient_attention": _fwd(6),
    "aten::_scaled_dot_product_cudnn_attention": _fwd(6),
    "aten::_scaled_dot_product_fused_attention_overrideable": _fwd(5),
    "aten::_flash_attention_forward": _fwd(8, "bshd"),
    "aten::_efficient_attention_forward": _fwd(9, "bshd"),
    "aten::_cudnn_attention_forward": _fwd(10),
    "aten::_scaled_dot_product_flash_attention_backward": _bwd(11),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": _bwd(7),
    "aten::_scaled_dot_product_efficient_attention_backward": _bwd(11),
    "aten::_scaled_dot_product_cudnn_attention_backward": _bwd(14),
    "aten::_cudnn_attention_backward": _bwd(14),
    "aten::_flash_attention_backward": _bwd(11, "bshd"),
    "aten::_efficient_attention_backward": _bwd(14, "bshd"),
}
ATTENTION_BACKWARD_FACTOR = 2.5  # five matrix products against the forward's two
CAUSAL_FACTOR = 0.5  # a causal mask skips the upper triangle of S_q × S_k


def has_rule(name: str) -> bool:
    """Does any rule here cost this op name?"""
    return (name in MATMUL_OPS or name in CONV_FORWARD or name in CONV_BACKWARD or name in ATTENTION
            or name == EINSUM)


# ---------------------------------------------------------------------------------------------------
# Rules


def _prod(dims: Sequence[int]) -> int:
    out = 1
    for d in dims:
        out *= int(d)
    return out


def _is_shape(value: object) -> bool:
    """A tensor shape a device can hold: non-negative ints, at most MAX_TENSOR_ELEMENTS elements."""
    return (isinstance(value, list) and bool(value) and all(isinstance(x, int) and x >= 0 for x in value)
            and _prod(value) <= MAX_TENSOR_ELEMENTS)


def _flag(concrete: Optional[Sequence[str]], position: Union[int, bool]) -> Optional[bool]:
    """A recorded bool (or non-zero int) argument; None when not recorded."""
    if isinstance(position, bool):
        return position
    if not concrete or position < 0 or position >= len(concrete) or concrete[position] == "":
        return None
    text = concrete[position].strip()
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    return int(text) != 0 if text.lstrip("-").isdigit() else None


def _int_list(text: str, nd: int) -> List[int]:
    value = json.loads(text)
    value = [value] * nd if isinstance(value, int) else value
    if not (isinstance(value, list) and len(value) == nd and all(isinstance(v, int) for v in value)):
        raise ValueError(text)
    return value


def _conv_output(sig: ConvSignature, x: List[int], w: List[int], concrete: Optional[Sequence[str]]
                 ) -> Optional[List[int]]:
    """Output spatial size from the recorded stride, padding and dilation."""
    nd = len(x) - 2
    if not concrete or len(concrete) <= max(sig.stride, sig.padding, sig.dilation):
        return None
    stride, padding = _int_list(concrete[sig.stride], nd), _int_list(concrete[sig.padding], nd)
    dilation = _int_list(concrete[sig.dilation], nd) if sig.dilation >= 0 else [1] * nd
    return [(x[2 + i] + 2 * padding[i] - dilation[i] * (w[2 + i] - 1) - 1) // stride[i] + 1
            for i in range(nd)]


def conv_forward_cost(name: str, dims: Dims, concrete: Optional[Sequence[str]] = None,
                      output_hint: Optional[List[int]] = None) -> Optional[ShapeCost]:
    """A forward convolution; `output_hint` is its output shape [N, C_out, *spatial] when found
    elsewhere in the trace (used only when the stride is not recorded)."""
    sig = CONV_FORWARD[name]
    if len(dims) < 2 or not (_is_shape(dims[0]) and _is_shape(dims[1])):
        return None
    x, w = dims[0], dims[1]
    if len(x) < 3 or len(w) != len(x):
        return None
    bias = dims[2][0] if len(dims) > 2 and _is_shape(dims[2]) and dims[2] == [w[0]] else 0
    transposed = _flag(concrete, sig.transposed)
    if transposed is None:
        transposed = x[1] == w[0] and x[1] % w[1] != 0  # only a transposed conv's weight fits this way
    if transposed:
        if x[1] != w[0]:
            return None
        return ShapeCost(2.0 * _prod(x) * w[1] * _prod(w[2:]), None)
    if w[1] <= 0 or x[1] % w[1]:
        return None
    try:
        out = _conv_output(sig, x, w, concrete)
    except (ValueError, TypeError, IndexError, ZeroDivisionError):
        out = None
    if out is None and output_hint is not None and len(output_hint) == len(x) \
            and output_hint[:2] == [x[0], w[0]]:
        out = list(output_hint[2:])
    if out is None or min(out) <= 0:
        return None
    output = x[0] * w[0] * _prod(out)
    flops = 2.0 * output * w[1] * _prod(w[2:])
    return ShapeCost(flops, float(_prod(x) + _prod(w) + bias + output))


def _mask(concrete: Optional[Sequence[str]], position: int) -> Optional[List[bool]]:
    """output_mask (input, weight, bias) as recorded: "[True, True, False]"; None when not recorded."""
    if not concrete or position >= len(concrete) or not concrete[position].startswith("["):
        return None
    parts = concrete[position].replace(" ", "").strip("[]").split(",")
    return [p == "True" for p in parts[:2]] + [True] * max(0, 2 - len(parts))


def conv_backward_cost(name: str, dims: Dims, concrete: Optional[Sequence[str]] = None
                       ) -> Optional[ShapeCost]:
    """A convolution backward: one forward convolution per gradient asked for."""
    sig = CONV_BACKWARD[name]
    if len(dims) <= max(sig.grad_output, sig.input, sig.weight):
        return None
    g, x, w = dims[sig.grad_output], dims[sig.input], dims[sig.weight]
    if not (_is_shape(g) and _is_shape(x) and _is_shape(w)) or len(g) < 3 or not len(x) == len(w) == len(g):
        return None
    transposed = _flag(concrete, sig.transposed)
    if transposed is None:
        transposed = g[1] != w[0] and x[1] == w[0]
    if transposed:
        if x[1] != w[0]:
            return None
        forward = 2.0 * _prod(x) * w[1] * _prod(w[2:])
    else:
        if g[1] != w[0]:
            return None
        forward = 2.0 * _prod(g) * w[1] * _prod(w[2:])
    mask = _mask(concrete, sig.mask)
    asked = mask if mask is not None else [True, True]
    moved = _prod(g) + _prod(x) + _prod(w) + (_prod(x) if asked[0] else 0) + (_prod(w) if asked[1] else 0)
    return ShapeCost(forward * sum(asked), float(moved), 0.0 if mask is not None else forward)


# Tensor inputs each layout takes (scalars record no dims): more means the dims are not this op's.
MATMUL_TENSORS: Dict[str, Tuple[int, int]] = {"mm": (2, 2), "addmm": (3, 3), "linear": (2, 3)}


def matmul_cost(name: str, dims: Dims) -> Optional[ShapeCost]:
    """A matrix product: 2 · batch · M · K · N."""
    layout = MATMUL_OPS[name]
    tensors = [d for d in dims if _is_shape(d)]
    low, high = MATMUL_TENSORS[layout]
    if not low <= len(tensors) <= high and name != "aten::_scaled_mm":  # _scaled_mm: + scale tensors
        return None
    if layout == "addmm":
        bias, a, b = tensors[0], tensors[1], tensors[2]
        moved = _prod(bias)
    else:
        a, b = tensors[0], tensors[1]
        moved = _prod(tensors[2]) if layout == "linear" and len(tensors) > 2 else 0
    if layout == "linear":  # x[..., K] · w[N, K]ᵀ
        if len(b) != 2 or a[-1] != b[1]:
            return None
        m, k, n, batch = _prod(a[:-1]), a[-1], b[0], 1
    else:
        a2 = [1] + a if len(a) == 1 else a
        b2 = b + [1] if len(b) == 1 else b
        if a2[-1] != b2[-2]:
            return None
        m, k, n = a2[-2], a2[-1], b2[-1]
        batch = max(_prod(a2[:-2]), _prod(b2[:-2]))
    moved += _prod(a) + _prod(b) + batch * m * n
    return ShapeCost(2.0 * batch * m * k * n, float(moved))


def einsum_cost(dims: Dims, concrete: Optional[Sequence[str]]) -> Optional[ShapeCost]:
    """A two-operand einsum whose equation is recorded: 2 × the product of every index's size. Traces
    record no equation today; then None, and the bmm/mm the einsum runs as is costed instead."""
    if not concrete or not concrete[0] or "->" not in concrete[0] or "." in concrete[0]:
        return None
    operands = dims[1] if len(dims) > 1 and isinstance(dims[1], list) else []
    inputs, output = concrete[0].replace(" ", "").split("->")
    terms = inputs.split(",")
    if len(terms) != 2 or len(operands) != 2 or not all(_is_shape(o) for o in operands):
        return None
    sizes: Dict[str, int] = {}
    for term, shape in zip(terms, operands):
        if len(term) != len(shape):
            return None
        for letter, size in zip(term, shape):
            if sizes.setdefault(letter, size) != size and size != 1:
                return None
    out = _prod(sizes[c] for c in output if c in sizes)
    return ShapeCost(2.0 * _prod(sizes.values()), float(sum(_prod(o) for o in operands) + out))


def attention_cost(name: str, dims: Dims, concrete: Optional[Sequence[str]] = None
                   ) -> Optional[ShapeCost]:
    """Attention: 2 · B·H · S_q · S_k · (D + D_v) forward, 2.5 × that backward, halved when causal."""
    sig = ATTENTION[name]
    if len(dims) <= max(sig.q, sig.k, sig.v):
        return None
    q, k, v = dims[sig.q], dims[sig.k], dims[sig.v]
    if not (_is_shape(q) and _is_shape(k) and _is_shape(v)) or len(q) < 3 or len(k) != len(q):
        return None
    if sig.layout == "bshd":
        if len(q) != 4:
            return None
        heads, length, span = q[0] * q[2], q[1], k[1]
    else:
        heads, length, span = _prod(q[:-2]), q[-2], k[-2]
    flops = 2.0 * heads * length * span * (q[-1] + v[-1])
    out = heads * length * v[-1]
    moved = _prod(q) + _prod(k) + _prod(v) + out
    if sig.backward:
        flops *= ATTENTION_BACKWARD_FACTOR
        moved = 2 * moved  # reads dO, q, k, v, O; writes dq, dk, dv
    if _flag(concrete, sig.causal):
        flops *= CAUSAL_FACTOR
    return ShapeCost(flops, float(moved))


def shape_cost(name: str, dims: Dims, concrete: Optional[Sequence[str]] = None,
               output_hint: Optional[List[int]] = None) -> Optional[ShapeCost]:
    """The cost of one op call from its input dims (and scalars); None when no rule understands it."""
    try:
        if name in MATMUL_OPS:
            return matmul_cost(name, dims)
        if name in CONV_FORWARD:
            return conv_forward_cost(name, dims, concrete, output_hint)
        if name in CONV_BACKWARD:
            return conv_backward_cost(name, dims, concrete)
        if name in ATTENTION:
            return attention_cost(name, dims, concrete)
        if name == EINSUM:
            return einsum_cost(dims, concrete)
    except (IndexError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return None
