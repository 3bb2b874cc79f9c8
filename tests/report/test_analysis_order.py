"""The second thread's order (report/analyze.py): the precision analyses first, so that the
sections never wait for them, unless the kernel names are many, when the deeper views go first (the
kernel statistics then run beside the breakdown, not beside the op tables). The report is the same
either way."""

from __future__ import annotations

from typing import List

import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.report import analyze
from tb_plugin_advisor.report.run import build_report

T0 = 1_700_000_000_000_000_000
MS = 1_000_000


def _profile():
    """4 steps of 10 ms with three distinct kernel names on one GPU."""
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python", id=1)
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    for s in range(4):
        t = T0 + s * 10 * MS
        python.event("train", t, 10 * MS - 1, stats={"step_num": s + 1, "_r": 1})
        for k, name in enumerate(("gemm_kernel", "reduce_kernel", "copy_kernel")):
            stream.kernel(name, t + (1 + k) * MS, MS // 2)
    return read_xplane_bytes(b.to_bytes(), source="h.xplane.pb", host="h")


@pytest.mark.parametrize("first_from, first", [(4, "precision"), (3, "deep")])
def test_the_deeper_views_go_first_only_with_many_kernel_names(first_from, first, monkeypatch):
    started: List[str] = []
    deep, precision = analyze.analyze_deep, analyze._precision_analyses
    monkeypatch.setattr(analyze, "analyze_deep", lambda *a: started.append("deep") or deep(*a))
    monkeypatch.setattr(analyze, "_precision_analyses",
                        lambda *a: started.append("precision") or precision(*a))
    monkeypatch.setattr(analyze, "DEEP_FIRST_FROM_NAMES", first_from)  # the profile has 3 names
    report = build_report(RunProfiles("run-1", [_profile()])).to_json()
    assert started[0] == first and sorted(started) == ["deep", "precision"]
    monkeypatch.undo()
    assert report == build_report(RunProfiles("run-1", [_profile()])).to_json()  # whichever ran first
