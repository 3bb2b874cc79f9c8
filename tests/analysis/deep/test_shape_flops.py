"""Every rule of analysis/deep/shape_flops.py against arithmetic done here, with each op's arguments
written the way Kineto records them (`Input Dims`, `Concrete Inputs` as strings), position for
position from PyTorch's op signatures (several copied from real traces: the H200 captures, a
torch 2.13 CPU trace). Values are chosen so that a swapped position gives a different answer (stride 2
and padding 1 vs stride 1 and padding 2; causal vs not)."""

from __future__ import annotations

from math import prod

import pytest

from tb_plugin_advisor.analysis.classify.torch_names import TORCH_NAMES
from tb_plugin_advisor.analysis.deep.shape_flops import (
    ATTENTION,
    ATTENTION_BACKWARD_FACTOR,
    CONV_BACKWARD,
    CONV_FORWARD,
    CONV_GRADIENT_CHILDREN,
    MATMUL_OPS,
    has_rule,
    shape_cost,
)

# --- convolutions forward: x [2, 8, 16, 16] (1-D/3-D alike), w [16, 8, 3 …], stride 2, padding 1 → 8
X2, W2 = [2, 8, 16, 16], [16, 8, 3, 3]
CONV_CASES = {
    # name: (dims, concrete)
    "aten::conv1d": ([[2, 8, 16], [16, 8, 3], [], [], [], [], []], ["", "", "", "[2]", "[1]", "[1]", "1"]),
    "aten::conv2d": ([X2, W2, [16], [], [], [], []], ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]),
    "aten::conv3d": ([[2, 8, 16, 16, 16], [16, 8, 3, 3, 3], [], [], [], [], []],
                     ["", "", "", "[2, 2, 2]", "[1, 1, 1]", "[1, 1, 1]", "1"]),
    "aten::convolution": ([X2, W2, [16]] + [[]] * 6,
                          ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]),
    "aten::_convolution": ([X2, W2, [16]] + [[]] * 10,
                           ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "False",
                            "False", "True", "True"]),
    # (self, weight, padding, stride, dilation, groups, benchmark, deterministic, allow_tf32)
    "aten::cudnn_convolution": ([X2, W2] + [[]] * 7,
                                ["", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False", "True"]),
    # (self, weight, bias, stride, padding, dilation, groups)
    "aten::cudnn_convolution_relu": ([X2, W2, [16]] + [[]] * 4,
                                     ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]),
    # (self, weight, bias, padding, stride, dilation, groups, benchmark, deterministic)
    "aten::miopen_convolution": ([X2, W2, [16]] + [[]] * 6,
                                 ["", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False"]),
    # (self, weight, bias, padding, stride, dilation, groups): as a torch 2.13 CPU trace writes it
    "aten::mkldnn_convolution": ([X2, W2, [16]] + [[]] * 4, ["", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1"]),
    # (self, weight, kernel_size, bias, stride, padding)
    "aten::_slow_conv2d_forward": ([X2, W2, [], [16], [], []], ["", "", "[3, 3]", "", "[2, 2]", "[1, 1]"]),
}
TRANSPOSED = ["aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d",
              "aten::cudnn_convolution_transpose", "aten::miopen_convolution_transpose"]


def _conv_flops(x, w):
    out = [(s + 2 * 1 - 3) // 2 + 1 for s in x[2:]]  # stride 2, padding 1, dilation 1, kernel 3
    return 2.0 * x[0] * w[0] * prod(out) * w[1] * prod(w[2:]), out


def test_every_forward_convolution_has_a_case():
    assert set(CONV_CASES) | set(TRANSPOSED) == set(CONV_FORWARD)


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_forward_convolution_from_recorded_strides(name):
    dims, concrete = CONV_CASES[name]
    flops, out = _conv_flops(dims[0], dims[1])
    assert out == [8] * (len(dims[0]) - 2)
    cost = shape_cost(name, dims, concrete)
    assert cost is not None and cost.flops == flops
    output = dims[0][0] * 16 * 8 ** len(out)
    bias = 16 if dims[2] == [16] else 0
    inputs = sum(prod(d) for d in dims[:2])
    assert cost.elements == inputs + bias + output
    # no strides recorded (traces before PyTorch 2.1): nothing, unless the output shape is found elsewhere
    assert shape_cost(name, dims, None) is None
    assert shape_cost(name, dims, None, [dims[0][0], 16] + out).flops == flops
    assert shape_cost(name, dims, None, [dims[0][0], 15] + out) is None  # not this convolution's output


@pytest.mark.parametrize("name", TRANSPOSED)
def test_transposed_convolution_needs_no_output_size(name):
    x, w = [2, 8, 16, 16], [8, 4, 4, 4]  # weight [C_in, C_out/groups, k, k]
    cost = shape_cost(name, [x, w, [4]], None)
    assert cost.flops == 2.0 * prod(x) * 4 * 16 and cost.elements is None


def test_grouped_convolution_counts_channels_per_group():
    x, w = [2, 8, 16, 16], [16, 2, 3, 3]  # 4 groups: each output sees 2 input channels
    concrete = ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "4"]
    cost = shape_cost("aten::conv2d", [x, w, [], [], [], [], []], concrete)
    assert cost.flops == 2.0 * 2 * 16 * 64 * 2 * 9


# --- convolution backward: g [2, 16, 8, 8], x [2, 8, 16, 16], w [16, 8, 3, 3]; one forward = F
G = [2, 16, 8, 8]
F = 2.0 * prod(G) * 8 * 9
BACKWARD_CASES = {
    # name: (dims, concrete, gradients asked for)
    "aten::convolution_backward": (
        [G, X2, W2] + [[]] * 8,
        ["", "", "", "[16]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[False, True, True]"], 1),
    # (self, grad_output, weight, padding, stride, dilation, groups, benchmark, deterministic, allow_tf32,
    # output_mask)
    "aten::cudnn_convolution_backward": (
        [X2, G, W2] + [[]] * 8,
        ["", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False", "True", "[True, True]"], 2),
    # (self, grad_output, weight, padding, stride, dilation, groups, benchmark, deterministic, output_mask)
    "aten::miopen_convolution_backward": (
        [X2, G, W2] + [[]] * 7,
        ["", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False", "[True, False, False]"], 1),
    # (self, grad_output, weight, padding, stride, dilation, groups, output_mask)
    "aten::mkldnn_convolution_backward": (
        [X2, G, W2] + [[]] * 5, ["", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "[False, True, False]"], 1),
    # (grad_output, self, weight, kernel_size, stride, padding, output_mask)
    "aten::_slow_conv2d_backward": (
        [G, X2, W2] + [[]] * 4, ["", "", "", "[3, 3]", "[2, 2]", "[1, 1]", "[True, True, False]"], 2),
}


def test_every_backward_convolution_has_a_case():
    assert set(BACKWARD_CASES) == set(CONV_BACKWARD)


@pytest.mark.parametrize("name", sorted(BACKWARD_CASES))
def test_backward_costs_one_forward_per_gradient(name):
    dims, concrete, asked = BACKWARD_CASES[name]
    cost = shape_cost(name, dims, concrete)
    assert cost.flops == asked * F and cost.per_gradient == 0.0
    unknown = shape_cost(name, dims, None)  # mask not recorded: both, and the caller may count children
    assert unknown.flops == 2 * F and unknown.per_gradient == F


def test_gradient_children_and_autograd_nodes_are_recognised():
    assert CONV_GRADIENT_CHILDREN == {"_backward_input": 0, "_backward_weight": 1}
    for node in ("CudnnConvolutionBackward", "ConvolutionBackward0", "MkldnnConvolutionBackward0",
                 "SlowConv2DBackward0", "CudnnConvolutionTransposeBackward0"):
        assert TORCH_NAMES["conv_backward_node"].search(node), node
    for other in ("CudnnBatchNormBackward", "autograd::engine::evaluate_function: ConvolutionBackward0",
                  "aten::convolution_backward"):
        assert not TORCH_NAMES["conv_backward_node"].search(other) or other.startswith("autograd::"), other


# --- attention: q = k = v, B 2, H 4, S 32, D 16 → forward 4·B·H·S·S·D; backward 2.5×; causal half
BHSD, BSHD = [2, 4, 32, 16], [2, 32, 4, 16]
ATTENTION_FORWARD = 4.0 * 2 * 4 * 32 * 32 * 16
ATTENTION_CASES = {
    # name: (q/k/v shape, tensors before q, concrete with the causal flag set, the flag's position)
    "aten::scaled_dot_product_attention": (BHSD, 0, ["", "", "", "", "0.", "True", "", "False"], 5),
    "aten::_scaled_dot_product_attention_math": (BHSD, 0, ["", "", "", "", "0.", "True", "", "", "False"], 5),
    "aten::_scaled_dot_product_flash_attention": (BHSD, 0, ["", "", "", "0.", "True", "False", ""], 4),
    "aten::_scaled_dot_product_flash_attention_for_cpu": (BHSD, 0, ["", "", "", "0.", "True", "", ""], 4),
    "aten::_scaled_dot_product_efficient_attention": (
        BHSD, 0, ["", "", "", "", "True", "0.1", "True", ""], 6),
    "aten::_scaled_dot_product_cudnn_attention": (
        BHSD, 0, ["", "", "", "", "True", "0.1", "True", "False", ""], 6),
    "aten::_scaled_dot_product_fused_attention_overrideable": (
        BHSD, 0, ["", "", "", "", "0.", "True", "False", ""], 5),
    "aten::_flash_attention_forward": (
        BSHD, 0, ["", "", "", "", "", "32", "32", "0.", "True", "False", ""], 8),
    "aten::_efficient_attention_forward": (
        BSHD, 0, ["", "", "", "", "", "", "", "", "0.1", "1", "True", "", "", ""], 9),
    "aten::_cudnn_attention_forward": (
        BHSD, 0, ["", "", "", "", "", "", "32", "32", "True", "0.1", "True", "False", ""], 10),
    "aten::_scaled_dot_product_flash_attention_backward": (
        BHSD, 1, [""] * 10 + ["0.", "True", "", "", ""], 11),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": (
        BHSD, 1, ["", "", "", "", "", "", "0.", "True", "", ""], 7),
    "aten::_scaled_dot_product_efficient_attention_backward": (
        BHSD, 1, [""] * 9 + ["0.1", "[True, True, True, False]", "True", ""], 11),
    "aten::_scaled_dot_product_cudnn_attention_backward": (
        BHSD, 1, [""] * 11 + ["32", "32", "0.1", "True", ""], 14),
    "aten::_cudnn_attention_backward": (BHSD, 1, [""] * 11 + ["32", "32", "0.1", "True", ""], 14),
    "aten::_flash_attention_backward": (BSHD, 1, [""] * 10 + ["0.", "True"] + [""] * 5, 11),
    "aten::_efficient_attention_backward": (
        BSHD, 1, [""] * 11 + ["0.1", "", "", "1", "False"] + [""] * 4, 14),
}


def test_every_attention_op_has_a_case():
    assert set(ATTENTION_CASES) == set(ATTENTION)


@pytest.mark.parametrize("name", sorted(ATTENTION_CASES))
def test_attention_flops_direction_and_causal_flag(name):
    shape, before, concrete, position = ATTENTION_CASES[name]
    dims = [shape] * before + [shape] * 3 + [[]] * (len(concrete) - before - 3)
    backward = ATTENTION[name].backward
    full = ATTENTION_FORWARD * (ATTENTION_BACKWARD_FACTOR if backward else 1.0)
    assert shape_cost(name, dims, concrete).flops == full / 2  # causal
    off = list(concrete)
    off[position] = "0" if concrete[position].isdigit() else "False"
    assert shape_cost(name, dims, off).flops == full
    assert shape_cost(name, dims, None).flops == full  # not recorded: no mask assumed


def test_grouped_query_attention_counts_the_query_heads():
    q, kv = [2, 8, 32, 16], [2, 2, 64, 16]  # 8 query heads over 2 key/value heads, 64 keys
    cost = shape_cost("aten::scaled_dot_product_attention", [q, kv, kv], None)
    assert cost.flops == 4.0 * 2 * 8 * 32 * 64 * 16


# --- matrix products
MATMUL_CASES = {
    "aten::mm": ([[8, 16], [16, 32]], 2 * 8 * 16 * 32),
    "aten::bmm": ([[4, 8, 16], [4, 16, 32]], 2 * 4 * 8 * 16 * 32),
    "aten::matmul": ([[3, 8, 16], [16, 32]], 2 * 3 * 8 * 16 * 32),
    "aten::_scaled_mm": ([[8, 16], [16, 32], [], []], 2 * 8 * 16 * 32),
    "aten::addmm": ([[32], [8, 16], [16, 32], [], []], 2 * 8 * 16 * 32),
    "aten::_addmm_activation": ([[32], [8, 16], [16, 32], [], [], []], 2 * 8 * 16 * 32),
    "aten::baddbmm": ([[4, 8, 32], [4, 8, 16], [4, 16, 32], [], []], 2 * 4 * 8 * 16 * 32),
    "aten::linear": ([[2, 3, 16], [32, 16], [32]], 2 * 6 * 16 * 32),
}


def test_every_matrix_product_has_a_case():
    assert set(MATMUL_CASES) == set(MATMUL_OPS)


@pytest.mark.parametrize("name", sorted(MATMUL_CASES))
def test_matrix_product(name):
    dims, flops = MATMUL_CASES[name]
    assert shape_cost(name, dims).flops == flops
    assert shape_cost(name, dims[:1]) is None
    if name != "aten::_scaled_mm":  # (its scales are tensors too)
        assert shape_cost(name, dims + [[4, 4], [4, 4]]) is None  # not this op's inputs


def test_einsum_needs_its_equation():
    """Traces record no einsum equation today (the bmm it runs as is costed instead); one that does is
    costed from it."""
    dims = [[], [[3, 5, 7], [3, 7, 9]], []]
    assert shape_cost("aten::einsum", dims, ["", "", ""]) is None
    assert shape_cost("aten::einsum", dims, ["bij,bjk->bik", "", ""]).flops == 2 * 3 * 5 * 7 * 9
    assert shape_cost("aten::einsum", dims, ["bij,bjk,bkl->bil", "", ""]) is None


def test_ops_without_a_rule():
    for name in ("aten::relu", "aten::batch_norm", "aten::add", "aten::cudnn_convolution_backward_weight"):
        assert not has_rule(name) and shape_cost(name, [[8, 8]]) is None
    for table in (MATMUL_OPS, CONV_FORWARD, CONV_BACKWARD, ATTENTION):
        assert all(has_rule(name) for name in table)
