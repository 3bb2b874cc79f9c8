"""The kernel table shows each kernel by its short name (HLO text cut to the op's name), summed per name
over the steady steps: against a kernel-by-kernel reading, with HLO text and plain names mixed, names
launched only outside the steady steps, and names defined by no kernel."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis.classify.event_names import short_op_name
from tb_plugin_advisor.analysis.step_time.breakdown import compute_breakdown
from tb_plugin_advisor.analysis.step_time.ops import _windows, kernel_table
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
STEP = 10_000_000

KERNELS = [
    "%fusion.3 = f32[8]{0} fusion(f32[8]{0} %p.1)",
    "%copy.1 = bf16[4]{0} copy(bf16[4]{0} %p.2)",
    "ampere_sgemm_128x64_nn",
    "%broken text without an equals sign",
    "void at::native::vectorized_elementwise_kernel<4>(int)",
]


def _profile(hlo: bool):
    b = XSpaceBuilder()
    python = b.plane("/host:CPU").line("python", id=1)
    for step in range(5):
        python.event("train", T0 + step * STEP, STEP - 1_000, stats={"step_num": step, "_r": 1})
    gpu = b.gpu_plane(0)
    gpu.event_id("fusion.defined_but_never_launched")  # (the reader drops it)
    gpu.line("Stream #9(MemcpyH2D)", id=9).memcpy("MemcpyH2D", T0 + 5_000, 2_000, bytes=4096)  # not a kernel
    stream = gpu.line("Stream #7(Kernel)", id=7)
    kernels = KERNELS if hlo else [k.lstrip("%") for k in KERNELS]
    stream.kernel(kernels[0], T0 - 50_000, 1_000)  # before the first step only: in no window
    for step in range(5):
        for i, name in enumerate(kernels[1:], start=1):
            stream.kernel(name, T0 + step * STEP + 10_000 * (i + 1), 1_000 * (i + 1) + step)
    return read_xplane_bytes(b.to_bytes())


@pytest.mark.parametrize("hlo", [True, False])
def test_kernel_rows_match_a_kernel_by_kernel_reading(hlo):
    profile = _profile(hlo)
    steps = find_steps(profile)
    breakdown = compute_breakdown(profile, steps)
    lo, hi, n = _windows(breakdown)
    expected = defaultdict(float)
    (device,) = profile.devices
    table = device.kernels
    for start, duration, code in zip(table.start_ns.tolist(), table.duration_ns.tolist(),
                                     table.name_index.tolist()):
        if lo.size and not np.any((lo <= start) & (start < hi)):
            continue
        expected[short_op_name(table.names[code])] += duration / 1e6 / n
    rows = kernel_table(profile, breakdown)
    assert {r.name: r.time_ms for r in rows} == pytest.approx(dict(expected), rel=1e-12)
    assert len(rows) == len(expected) >= 3
    if hlo:
        assert {r.name for r in rows} == {"copy.1", "ampere_sgemm_128x64_nn",
                                          "%broken text without an equals sign",
                                          "void at::native::vectorized_elementwise_kernel<4>(int)"}


def test_devices_sum_by_name_and_leave_each_device_its_names():
    """The first device's rows are its names' own list (no copy while one device is read); merging a
    second device's rows copies them first, so the device keeps its names."""
    b = XSpaceBuilder()
    python = b.plane("/host:CPU").line("python", id=1)
    for step in range(4):
        python.event("train", T0 + step * STEP, STEP - 1_000, stats={"step_num": step, "_r": 1})
    for gpu_id, names in ((0, ["gemm_a", "relu_b"]), (1, ["relu_b", "copy_c", "gemm_a"])):
        stream = b.gpu_plane(gpu_id).line("Stream #7(Kernel)", id=7)
        for step in range(4):
            for i, name in enumerate(names):
                stream.kernel(name, T0 + step * STEP + 10_000 * (i + 1), 1_000 * (gpu_id + 1))
    profile = read_xplane_bytes(b.to_bytes())
    breakdown = compute_breakdown(profile, find_steps(profile))
    _, _, n = _windows(breakdown)
    before = [list(device.kernels.names) for device in profile.devices]
    rows = kernel_table(profile, breakdown)
    assert {r.name: r.time_ms for r in rows} == pytest.approx(
        {"gemm_a": 12_000 / 1e6 / n, "relu_b": 12_000 / 1e6 / n, "copy_c": 8_000 / 1e6 / n}, rel=1e-12)
    assert [list(device.kernels.names) for device in profile.devices] == before
