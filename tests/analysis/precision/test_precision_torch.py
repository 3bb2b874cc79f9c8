"""Precision of CPU-only PyTorch traces from aten ops' `Input type`: the dtype table, self time, and the
real bf16-autocast and fp32 traces captured in this session (tests/torch_traces.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tb_plugin_advisor.analysis.classify.torch_names import TORCH_NAMES
from tb_plugin_advisor.analysis.precision.cpu_torch import (
    TORCH_DTYPES,
    _self_time,
    precision_of_input_types,
)
from tb_plugin_advisor.analysis.precision.device import analyze_precision
from tb_plugin_advisor.readers.kineto.reader import read_kineto


@pytest.mark.parametrize(("text", "precision"), [
    ('["c10::BFloat16","c10::BFloat16",""]', "bf16"),
    ('["c10::Half","float"]', "fp16"),
    ('["float","ScalarList"]', "fp32"),
    ('["double"]', "fp64"),
    ('["c10::Float8_e4m3fn","c10::Float8_e4m3fn","float"]', "fp8"),
    ('["long int","float"]', "fp32"),  # the first floating input decides
    ('["long int","Scalar"]', None),
    ('["TensorList","Scalar"]', None),
    ("", None),
    ("not json", None),
])  # fmt: skip
def test_input_types_to_precision(text, precision):
    assert precision_of_input_types(text) == precision


def test_every_dtype_entry_maps_to_a_known_precision():
    from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS

    assert set(TORCH_DTYPES.values()) <= set(PRECISIONS)
    for dtype, precision in TORCH_DTYPES.items():
        assert precision_of_input_types(f'["{dtype}"]') == precision


@pytest.mark.parametrize("name", ["aten::mm", "aten::addmm", "aten::bmm", "aten::linear", "aten::matmul",
                                  "aten::conv2d", "aten::cudnn_convolution", "aten::_convolution",
                                  "aten::scaled_dot_product_attention", "aten::_flash_attention_forward"])
def test_matrix_ops_are_eligible(name):
    assert TORCH_NAMES["matrix_op"].match(name)


@pytest.mark.parametrize("name", ["aten::add", "aten::relu", "aten::mm_backward_hook", "aten::t"])
def test_other_ops_are_not(name):
    assert not TORCH_NAMES["matrix_op"].match(name)


def test_self_time_subtracts_direct_children_once():
    # linear [0,100) ⊃ addmm [10,90) ⊃ mm-internal [20,50); sibling add [100,120)
    starts = np.array([0, 10, 20, 100])
    durations = np.array([100, 80, 30, 20])
    assert _self_time(starts, durations).tolist() == [20, 50, 30, 20]


def test_real_bf16_autocast_trace_is_mixed_and_fp32_trace_is_not(torch_traces):
    bf16 = analyze_precision(read_kineto(str(torch_traces.trace("bf16"))))
    fp32 = analyze_precision(read_kineto(str(torch_traces.trace("fast_loader"))))
    assert bf16.basis == fp32.basis == "host"
    # autocast runs every Linear (addmm) in bf16; the loss and SGD stay fp32
    assert bf16.matrix_low_precision_pct is not None and bf16.matrix_low_precision_pct > 90
    assert bf16.time_ns["bf16"] > 0
    assert fp32.matrix_low_precision_pct == 0
    assert fp32.time_ns["bf16"] == 0 and fp32.time_ns["fp32"] > 0
