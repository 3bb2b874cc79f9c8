"""Allocations of a PyTorch trace named by the op that made them: Kineto's allocator records carry
no op, so each allocation live at the peak gets the outermost op running when it was made, and the
shape and dtype `aten::empty` was given. Columns no row fills are left out of every table."""

from __future__ import annotations

import math

import pytest
from paths import H200

from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.views.export.render import render

BYTES_PER_ELEMENT = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8}


def _report(name: str):
    (path,) = sorted((H200 / name).glob("*.pt.trace.json.gz"))
    return build_report(RunProfiles(run=name, profiles=[read_kineto(str(path))])).to_json()


@pytest.mark.parametrize("name", ["resnet50_fp32_workers8", "resnet50_bf16_workers8", "transformer_fp32"])
def test_most_allocations_live_at_the_gpu_peak_carry_their_op(name):
    gpu = next(a for a in _report(name)["memory"]["allocators"] if a["allocator"].startswith("GPU"))
    live = gpu["live_at_peak"]
    assert live
    named = [row for row in live if row["op"] and row["op"].startswith("aten::")]
    assert len(named) >= len(live) / 2, [row["op"] for row in live]
    for row in live:
        if row.get("shape") and row.get("dtype") in BYTES_PER_ELEMENT:
            elements = math.prod(int(d) for d in row["shape"].strip("[]").split(","))
            # the caching allocator rounds a request up (to 512 bytes, or 2 MiB blocks), never down
            assert elements * BYTES_PER_ELEMENT[row["dtype"]] <= row["bytes"] + 512, row


def test_columns_no_allocation_fills_are_left_out_of_the_exports():
    report = _report("resnet50_fp32_workers8")
    gpu = next(a for a in report["memory"]["allocators"] if a["allocator"].startswith("GPU"))
    assert not any(row.get("region") for row in gpu["live_at_peak"])
    markdown = render(report, "md")
    table = markdown[markdown.index("Largest allocations live at the peak"):]
    header = next(line for line in table.splitlines() if line.startswith("|"))
    assert "op" in header and "region" not in header, header
