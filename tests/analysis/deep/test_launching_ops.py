"""PyTorch kernels tied to the op that launched them (kernel → correlation → runtime call →
outermost aten op), on real H200 captures and on a trace whose links are known exactly; and the
short kernel names the tables show."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from paths import H200
from synth_kineto import BASE_NS, KinetoTrace

from tb_plugin_advisor.analysis.classify.launching_ops import attach_launching_ops, launching_ops
from tb_plugin_advisor.analysis.classify.patterns import short_kernel_name
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto, read_kineto_bytes
from tb_plugin_advisor.report.run import build_report


def _trace(name: str) -> Path:
    (path,) = sorted((H200 / name).glob("*.pt.trace.json.gz"))
    return path


def test_each_kernel_goes_to_the_outermost_op_around_its_launch():
    trace = KinetoTrace()
    t = BASE_NS + 1_000_000_000
    trace.step(1, t, 10_000_000)
    trace.op("aten::conv2d", t + 1_000_000, 3_000_000)
    trace.op("aten::convolution", t + 1_100_000, 2_800_000)
    trace.launch("conv_kernel", t + 1_200_000, 20_000, t + 1_300_000, 500_000)
    trace.op("aten::relu", t + 5_000_000, 1_000_000)
    trace.launch("relu_kernel", t + 5_100_000, 20_000, t + 5_200_000, 100_000)
    trace.launch("stray_kernel", t + 7_000_000, 20_000, t + 7_100_000, 100_000)  # outside any op
    profile = read_kineto_bytes(trace.to_bytes(), "t.pt.trace.json")
    attach_launching_ops(profile)
    (device,) = [d for d in profile.devices if len(d.kernels)]
    per_kernel, labels = launching_ops(device)
    kernels = device.kernels
    found = {kernels.names[int(n)]: (labels[int(i)] if i >= 0 else None)
             for n, i in zip(kernels.name_index, per_kernel)}
    assert found == {"conv_kernel": "aten::conv2d", "relu_kernel": "aten::relu", "stray_kernel": None}


@pytest.mark.parametrize("name", ["resnet50_fp32_workers8", "transformer_bf16"])
def test_nearly_all_kernel_time_of_a_real_capture_has_its_op(name):
    profile = read_kineto(str(_trace(name)))
    attach_launching_ops(profile)
    (device,) = [d for d in profile.devices if len(d.kernels)]
    per_kernel, labels = launching_ops(device)
    duration = device.kernels.duration_ns.astype(np.float64)
    assert duration[per_kernel >= 0].sum() / duration.sum() > 0.95
    assert all(label.startswith("aten::") for label in labels)


def test_the_op_table_of_a_gpu_capture_lists_aten_ops_with_their_device_time():
    report = build_report(RunProfiles(run="r", profiles=[read_kineto(str(_trace("resnet50_fp32_workers8")))]))
    ops = {}
    for op in report.to_json()["ops"]:  # the largest row of each op (its memsets are rows of their own)
        ops.setdefault(op["name"], op)
    assert {"aten::convolution_backward", "aten::conv2d", "aten::batch_norm"} <= set(ops)
    assert {op["category"] for name, op in ops.items() if name.startswith("aten::conv")} == {"device_compute"}
    # backward convolutions cost about twice the forward ones (input and weight gradients)
    ratio = ops["aten::convolution_backward"]["time_ms"] / ops["aten::conv2d"]["time_ms"]
    assert 1.5 < ratio < 3.5, ratio


@pytest.mark.parametrize("full,short", [
    ("void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, true, false, true>"
     "(int, int, int, float const*, int, float*)", "cudnn::detail::implicit_convolve_sgemm"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
     "at::native::vectorized_elementwise_kernel"),
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>"
     "(cutlass_80_simt_sgemm_128x256_8x4_nt_align1::Params)",
     "cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>"),
    ("volta_sgemm_64x64_nt", "volta_sgemm_64x64_nt"),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*)",
     "softmax_warp_forward"),
])
def test_short_kernel_names(full, short):
    assert short_kernel_name(full) == short
