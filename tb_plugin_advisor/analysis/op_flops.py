"""FLOPs and bytes of matmul, convolution and attention ops computed from their input shapes.

PyTorch records input shapes (`Input Dims`) and dtypes (`Input type`) on each op when profiled with
record_shapes=True; with_flops=True adds its own `flops` arg for a few ops, which the roofline
prefers. These formulas fill in where only shapes are known. Counted as 2 FLOPs per multiply-add;
bytes are the inputs read plus the output written once (a lower bound: tiling re-reads inputs).
A convolution's output size depends on stride, padding and dilation: PyTorch records them in
`Concrete Inputs` (recent versions, record_shapes=True); where it does not, the output is taken as
stride 1 with "same" padding and the source label says so.
"""

from __future__ import annotations

import json
from math import prod
from typing import Callable, Dict, List, Optional, Sequence, Tuple

Shape = List[int]

# Bytes per element by PyTorch's `Input type` spelling.
DTYPE_WIDTH: Dict[str, int] = {
    "float": 4, "double": 8, "half": 2, "c10::half": 2, "c10::bfloat16": 2, "bfloat16": 2,
    "c10::float8_e4m3fn": 1, "c10::float8_e5m2": 1, "signed char": 1, "unsigned char": 1, "int": 4,
    "long int": 8, "float32": 4, "float16": 2,
}

SOURCE_SHAPES = "shapes"
SOURCE_SHAPES_CONV = "shapes (conv: stride 1, same padding assumed)"


def parse_dims(text: Optional[str]) -> Optional[List[Shape]]:
    """`Input Dims` as the reader keeps it (JSON text) → list of shapes; None when unreadable."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, list):
        return None
    out: List[Shape] = []
    for shape in value:
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            out.append([])
        else:
            out.append(shape)
    return out


def parse_types(text: Optional[str]) -> List[str]:
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _mm(dims: Sequence[Shape]) -> Optional[Tuple[float, Shape, List[Shape]]]:
    a, b = dims[0], dims[1]
    if len(a) != 2 or len(b) != 2 or a[1] != b[0]:
        return None
    return 2.0 * a[0] * a[1] * b[1], [a[0], b[1]], [a, b]


def _addmm(dims: Sequence[Shape]) -> Optional[Tuple[float, Shape, List[Shape]]]:
    if len(dims) < 3:
        return None
    found = _mm(dims[1:3])
    return None if found is None else (found[0], found[1], [dims[0], *found[2]])


def _bmm(dims: Sequence[Shape]) -> Optional[Tuple[float, Shape, List[Shape]]]:
    a, b = dims[0], dims[1]
    if len(a) != 3 or len(b) != 3 or a[0] != b[0] or a[2] != b[1]:
        return None
    return 2.0 * a[0] * a[1] * a[2] * b[2], [a[0], a[1], b[2]], [a, b]


def _matmul(dims: Sequence[Shape]) -> Optional[Tuple[float, Shape, List[Shape]]]:
    a, b = dims[0], dims[1]
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        return None
    ba, bb = a[:-2], b[:-2]
    width = max(len(ba), len(bb))
    ba, bb = [1] * (width - len(ba)) + ba, [1] * (width - len(bb)) + bb
    batch = [max(x, y) for x, y in zip(ba, bb)]  # broadcast batch dimensions
    m, k, n = a[-2], a[-1], b[-1]
    return 2.0 * prod(batch) * m * k * n, [*batch, m, n], [a, b]


def _linear(dims: Sequence[Shape]) -> Optional[Tuple[float, Shape, List[Shape]]]:
    x, w = dims[0], dims[1]
    if len(x) < 1 or len(w) != 2 or x[-1] != w[1]:
        return None
    rows = prod(x[:-1])
    inputs = [x, w] + ([dims[2]] if len(dims) > 2 and dims[2] else [])
    return 2.0 * rows * w[1] * w[0], [*x[:-1], w[0]], inputs


def conv_geometry(concrete: Optional[List[str]], spatial: int) -> Optional[Tuple[Shape, Shape, Shape]]:
    """(stride, padding, dilation) from PyTorch's `Concrete Inputs` of aten::conv{1,2,3}d (arguments
    3, 4, 5), or None when not recorded or not a plain list (padding="same" is a string: None)."""
    if not concrete or len(concrete) < 6:
        return None
    out = []
    for text in concrete[3:6]:
        try:
            value = json.loads(text) if text else None
        except ValueError:
            return None
        if isinstance(value, int):
            value = [value] * spatial
        if not isinstance(value, list) or len(value) != spatial or not all(isinstance(v, int) for v in value):
            return None
        out.append(value)
    return out[0], out[1], out[2]


def _conv(dims: Sequence[Shape], geometry: Optional[Tuple[Shape, Shape, Shape]] = None
          ) -> Optional[Tuple[float, Shape, List[Shape]]]:
    x, w = dims[0], dims[1]
    if len(x) < 3 or len(w) != len(x) or w[1] == 0 or x[1] % w[1]:
        return None
    if geometry is not None:
        stride, pad, dil = geometry
        spatial = [(n + 2 * p - d * (k - 1) - 1) // st + 1
                   for n, k, st, p, d in zip(x[2:], w[2:], stride, pad, dil)]
        if any(v <= 0 for v in spatial) or any(st <= 0 for st in stride):
            return None
    else:  # output spatial size = input spatial size (stride 1, same padding): see the module docstring
        spatial = list(x[2:])
    out = [x[0], w[0], *spatial]
    flops = 2.0 * prod(out) * w[1] * prod(w[2:])
    return flops, out, [x, w] + ([dims[2]] if len(dims) > 2 and dims[2] else [])


def _attention(dims: Sequence[Shape]) -> Optional[Tuple[float, Shape, List[Shape]]]:
    if len(dims) < 3:
        return None
    q, k, v = dims[0], dims[1], dims[2]
    if len(q) != 4 or len(k) != 4 or len(v) != 4 or q[-1] != k[-1] or k[-2] != v[-2]:
        return None
    b, h, lq, d = q
    s, dv = k[-2], v[-1]
    return 2.0 * b * h * lq * s * d + 2.0 * b * h * lq * s * dv, [b, h, lq, dv], [q, k, v]


# aten op name → (formula, source label). Names are PyTorch's; the innermost op that launches the
# kernels is the one the roofline times, so both the composite and the backend names are listed.
FORMULAS: Dict[str, Tuple[Callable[[Sequence[Shape]], Optional[Tuple[float, Shape, List[Shape]]]], str]] = {
    "aten::mm": (_mm, SOURCE_SHAPES),
    "aten::addmm": (_addmm, SOURCE_SHAPES),
    "aten::bmm": (_bmm, SOURCE_SHAPES),
    "aten::baddbmm": (lambda d: _bmm(d[1:3]) if len(d) >= 3 else None, SOURCE_SHAPES),
    "aten::matmul": (_matmul, SOURCE_SHAPES),
    "aten::linear": (_linear, SOURCE_SHAPES),
    "aten::conv1d": (_conv, SOURCE_SHAPES_CONV),
    "aten::conv2d": (_conv, SOURCE_SHAPES_CONV),
    "aten::conv3d": (_conv, SOURCE_SHAPES_CONV),
    "aten::cudnn_convolution": (_conv, SOURCE_SHAPES_CONV),
    "aten::scaled_dot_product_attention": (_attention, SOURCE_SHAPES),
    "aten::_scaled_dot_product_flash_attention": (_attention, SOURCE_SHAPES),
    "aten::_scaled_dot_product_efficient_attention": (_attention, SOURCE_SHAPES),
    "aten::_scaled_dot_product_cudnn_attention": (_attention, SOURCE_SHAPES),
}


def _conv_backward(dims: Sequence[Shape], concrete: Optional[List[str]]
                   ) -> Optional[Tuple[float, float]]:
    """(FLOPs, elements moved) of aten::convolution_backward(grad_output, input, weight, …,
    output_mask): each of the input and weight gradients costs one forward convolution, whose output
    is grad_output, so no stride is needed; output_mask (argument 10) says which were computed."""
    if len(dims) < 3:
        return None
    g, x, w = dims[0], dims[1], dims[2]
    if len(g) < 3 or len(x) != len(g) or len(w) != len(g) or g[1] != w[0]:
        return None
    forward = 2.0 * prod(g) * w[1] * prod(w[2:])
    mask_text = concrete[10] if concrete and len(concrete) > 10 else ""
    mask = [t == "True" for t in mask_text.replace(" ", "").strip("[]").split(",")] if mask_text else []
    mask = (mask + [True, True])[:2] if mask_text else [True, True]  # not recorded: both gradients
    grads = sum(mask)
    moved = prod(g) + prod(x) + prod(w) + (prod(x) if mask[0] else 0) + (prod(w) if mask[1] else 0)
    return forward * grads, float(moved)


# Ops whose `Concrete Inputs` hold stride, padding and dilation at arguments 3, 4 and 5 (their schema).
CONV_WITH_GEOMETRY = ("aten::conv1d", "aten::conv2d", "aten::conv3d")


MAX_FLOPS = 1e21  # per op call: beyond any real op; larger means broken or hostile shapes


def shape_cost(name: str, dims: Optional[List[Shape]], types: List[str], concrete: Optional[List[str]] = None
               ) -> Optional[Tuple[float, float, str]]:
    """(FLOPs, bytes, source) of op `name` from its input shapes and dtypes (and, for convolutions,
    stride/padding/dilation from its concrete inputs when recorded), or None."""
    try:
        found = _shape_cost(name, dims, types, concrete)
    except (OverflowError, ValueError):
        return None
    if found is None or not (0 < found[0] < MAX_FLOPS) or not (0 <= found[1] < MAX_FLOPS):
        return None
    return found


def _shape_cost(name: str, dims: Optional[List[Shape]], types: List[str], concrete: Optional[List[str]]
                ) -> Optional[Tuple[float, float, str]]:
    if name == "aten::convolution_backward" and dims:
        found_bwd = _conv_backward(dims, concrete)
        if found_bwd is None:
            return None
        return found_bwd[0], found_bwd[1] * element_width(types), SOURCE_SHAPES
    entry = FORMULAS.get(name)
    if entry is None or not dims or len(dims) < 2:
        return None
    formula, source = entry
    geometry = conv_geometry(concrete, len(dims[0]) - 2) if name in CONV_WITH_GEOMETRY and dims[0] else None
    if geometry is not None:
        found = _conv(dims, geometry)
        source = SOURCE_SHAPES
    else:
        found = formula(dims)
    if found is None:
        return None
    flops, out_shape, inputs = found
    width = element_width(types)
    elements = sum(prod(s) for s in inputs if s) + prod(out_shape)
    return flops, float(elements * width), source


def element_width(types: List[str]) -> int:
    """Bytes per element of the op's first typed input (4 when unknown)."""
    for t in types:
        width = DTYPE_WIDTH.get(t.lower())
        if width:
            return width
    return 4
