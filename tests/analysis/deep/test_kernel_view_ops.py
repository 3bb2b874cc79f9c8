"""The kernel view's op label per kernel (kernel_view._op_columns) is found and coded a chunk of rows
at a time (issue 12: memory); the labels must not depend on the chunk size."""

from __future__ import annotations

import numpy as np
import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor import lookup
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.readers.xplane.reader import read_xplane

T0 = 1_700_000_000_000_000_000
GEMM = "ampere_sgemm_128x64_nn"


def _profile(tmp_path):
    """Kernels labelled by HLO op (with and without a module), by TF op, and not at all, mixed."""
    space = XSpaceBuilder()
    gpu = space.gpu_plane(0)
    stream = gpu.line("Stream #7(Kernel)", id=7)
    for k in range(40):
        kind = k % 4
        stream.kernel(
            GEMM, T0 + k * 10_000, 2_000,
            tf_op=f"model/dense_{k % 3}/MatMul:MatMul" if kind == 1 else None,
            hlo_op=f"dot.{k % 5}" if kind in (0, 2) else None,
            hlo_module="jit_train" if kind == 0 else None,
        )
    return space.write(tmp_path / "ops.xplane.pb")


def _labels(path):
    view = kernel_view(read_xplane(str(path)).devices[0])
    return [view.op_labels[i] if i >= 0 else None for i in view.op.tolist()], view.op_eligible.tolist()


@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 18])
def test_op_labels_do_not_depend_on_the_chunk_size(tmp_path, monkeypatch, chunk):
    path = _profile(tmp_path)
    monkeypatch.setattr(lookup, "ROW_CHUNK", chunk)
    labels, eligible = _labels(path)
    for k, label in enumerate(labels):
        expected = {0: f"jit_train/dot.{k % 5}", 1: f"model/dense_{k % 3}/MatMul:MatMul", 2: f"dot.{k % 5}",
                    3: None}[k % 4]
        assert label == expected, k
    assert len(eligible) == len(set(label for label in labels if label))  # one entry per distinct label


def test_a_line_stat_on_some_kernels_reads_minus_one_on_the_others(tmp_path):
    """line_stat_strings reads a string stat at each kernel's event (by binary search in the sparse
    column): kernels without it get -1, and a stat no line carries gives None."""
    from tb_plugin_advisor.analysis.classify.kernel_view import line_stat_strings

    space = XSpaceBuilder()
    stream = space.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    for k in range(9):
        stats = {"shape": f"(half[{k}])"} if k % 3 == 0 else {}
        stream.kernel(GEMM, T0 + k * 10_000, 2_000, stats=stats)
    device = read_xplane(str(space.write(tmp_path / "shapes.xplane.pb"))).devices[0]
    ids = line_stat_strings(device, "shape")
    texts = [device.kernels.strings[i] if i >= 0 else None for i in ids.tolist()]
    assert texts == [f"(half[{k}])" if k % 3 == 0 else None for k in range(9)]
    assert line_stat_strings(device, "shape", np.array([3, 4])).tolist() == ids[[3, 4]].tolist()
    assert line_stat_strings(device, "no_such_stat") is None
