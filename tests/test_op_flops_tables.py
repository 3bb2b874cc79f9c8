"""Every entry of the roofline's data tables, each against a hand-worked truth: the FLOP formulas per
aten op, the bytes per dtype, the dtype → peak precision map, and the diff's MFU thresholds."""

from __future__ import annotations

import pytest

from tb_plugin_advisor.analysis.accelerator_peaks import DTYPE_PRECISION, PRECISIONS, precision_of
from tb_plugin_advisor.analysis.diff_roofline import ROOFLINE_EXPLAIN, roofline_sentence
from tb_plugin_advisor.analysis.op_flops import (
    DTYPE_WIDTH,
    FORMULAS,
    SOURCE_SHAPES,
    SOURCE_SHAPES_CONV,
    shape_cost,
)

MM = 2 * 8 * 16 * 4
CONV = 2 * 2 * 6 * 10 * 3 * 5  # N=2, O=6, 10 outputs (same size as input), C=3, kernel 5
CONV2D = 2 * 2 * 6 * (10 * 10) * 3 * 9
ATTN = 4 * 2 * 4 * 32 * 32 * 16
CASES = {
    "aten::mm": ([[8, 16], [16, 4]], MM, SOURCE_SHAPES),
    "aten::addmm": ([[4], [8, 16], [16, 4]], MM, SOURCE_SHAPES),
    "aten::bmm": ([[3, 8, 16], [3, 16, 4]], 3 * MM, SOURCE_SHAPES),
    "aten::baddbmm": ([[3, 8, 4], [3, 8, 16], [3, 16, 4]], 3 * MM, SOURCE_SHAPES),
    "aten::matmul": ([[5, 8, 16], [16, 4]], 5 * MM, SOURCE_SHAPES),
    "aten::linear": ([[8, 16], [4, 16], [4]], MM, SOURCE_SHAPES),
    "aten::conv1d": ([[2, 3, 10], [6, 3, 5], [6]], CONV, SOURCE_SHAPES_CONV),
    "aten::conv2d": ([[2, 3, 10, 10], [6, 3, 3, 3]], CONV2D, SOURCE_SHAPES_CONV),
    "aten::conv3d": ([[2, 3, 4, 4, 4], [6, 3, 1, 1, 1]], 2 * 2 * 6 * 64 * 3, SOURCE_SHAPES_CONV),
    "aten::cudnn_convolution": ([[2, 3, 10, 10], [6, 3, 3, 3]], CONV2D, SOURCE_SHAPES_CONV),
    "aten::scaled_dot_product_attention": ([[2, 4, 32, 16]] * 3, ATTN, SOURCE_SHAPES),
    "aten::_scaled_dot_product_flash_attention": ([[2, 4, 32, 16]] * 3, ATTN, SOURCE_SHAPES),
    "aten::_scaled_dot_product_efficient_attention": ([[2, 4, 32, 16]] * 3, ATTN, SOURCE_SHAPES),
    "aten::_scaled_dot_product_cudnn_attention": ([[2, 4, 32, 16]] * 3, ATTN, SOURCE_SHAPES),
}


def test_every_formula_has_a_case():
    assert set(CASES) == set(FORMULAS)


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_formula(name):
    dims, flops, source = CASES[name]
    found = shape_cost(name, dims, ["float"])
    assert found is not None and found[0] == flops and found[2] == source
    assert found[1] > 0 and found[1] % 4 == 0  # whole fp32 elements


WIDTHS = {"float": 4, "double": 8, "half": 2, "c10::half": 2, "c10::bfloat16": 2, "bfloat16": 2,
          "c10::float8_e4m3fn": 1, "c10::float8_e5m2": 1, "signed char": 1, "unsigned char": 1, "int": 4,
          "long int": 8, "float32": 4, "float16": 2}


@pytest.mark.parametrize("dtype", sorted(DTYPE_WIDTH))
def test_dtype_width(dtype):
    assert DTYPE_WIDTH[dtype] == WIDTHS[dtype]
    _, nbytes, _ = shape_cost("aten::mm", [[1, 1], [1, 1]], [dtype])
    assert nbytes == 3 * WIDTHS[dtype]


PRECISION = {"float": "fp32", "float32": "fp32", "f32": "fp32", "double": "fp64", "float64": "fp64",
             "f64": "fp64", "half": "fp16", "float16": "fp16", "f16": "fp16", "bfloat16": "bf16",
             "bf16": "bf16",
             "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "f8e4m3fn": "fp8", "f8e5m2": "fp8", "int8": "int8",
             "s8": "int8", "char": "int8", "signed char": "int8"}


@pytest.mark.parametrize("dtype", sorted(DTYPE_PRECISION))
def test_dtype_precision(dtype):
    assert precision_of(dtype) == PRECISION[dtype] and PRECISION[dtype] in PRECISIONS
    assert precision_of(f"c10::{dtype.upper()}") == PRECISION[dtype]  # PyTorch's spelling, any case


def _mfu(base, cand):
    return {"roofline": {"mfu_pct": {"baseline": base, "candidate": cand, "delta": cand - base}}}


def test_mfu_sentence_thresholds():
    points, rel = ROOFLINE_EXPLAIN["mfu_min_points"], ROOFLINE_EXPLAIN["mfu_min_rel_pct"]
    assert roofline_sentence(_mfu(10.0, 10.0 + points)) == "MFU rose: 10 % \u2192 12 % of the device's peak."
    assert roofline_sentence(_mfu(10.0, 10.0 + points - 0.01)) is None  # under the points
    big = 100.0 * points / rel * 1.5  # a baseline where the points pass but the relative move does not
    assert roofline_sentence(_mfu(big, big + points)) is None
    assert roofline_sentence(_mfu(big, big - big * rel / 100)).startswith("MFU fell")
    assert roofline_sentence({"roofline": {}}) is None
