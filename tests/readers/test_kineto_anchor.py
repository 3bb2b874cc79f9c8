"""The anchor: torch-tb-profiler's ResNet-50 tutorial runs (num_workers=0 vs 4, V100, 2021).

torch-tb-profiler's tutorial published DataLoader 33.4 % vs 0.84 % of the step and GPU utilisation
55.5 % vs 70.3 %. Its figures come from the first capture of each run directory (the second capture of
num_workers_0 waits less: 29.7 % raw DataLoader time against 39.6 %), so these tests read those files.
Our input share counts the DataLoader wait only where no kernel or copy runs (torch-tb-profiler's
priority order puts kernels first too); our GPU busy share counts kernels and copies over the steps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import CORPUS

from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.views.cli.main import main

SAMPLES = CORPUS / "kineto" / "tb_plugin" / "samples"
WORKERS_0 = SAMPLES / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
WORKERS_4 = SAMPLES / "resnet50_num_workers_4" / "worker0.1623212756351.pt.trace.json.gz"

pytestmark = pytest.mark.skipif(not WORKERS_0.is_file() or not WORKERS_4.is_file(),
                                reason=f"the shared corpus' ResNet-50 samples are not at {SAMPLES}")

# (published by torch-tb-profiler, ours as established on these files, tolerance in points)
ANCHOR = {
    WORKERS_0: {"input_pct": (33.4, 33.94, 1.0), "gpu_busy_pct": (55.5, 56.0, 1.0)},
    WORKERS_4: {"input_pct": (0.84, 0.89, 0.5), "gpu_busy_pct": (70.3, 72.39, 1.0)},
}


def _report(path: Path) -> dict:
    return build_report(RunProfiles(run=path.parent.name, profiles=[read_kineto(str(path))])).to_json()


@pytest.mark.parametrize("path", list(ANCHOR), ids=lambda p: p.parent.name)
def test_dataloader_share_and_gpu_busy_match_the_published_figures(path):
    report = _report(path)
    ours = {"input_pct": report["verdict"]["input_pct"], "gpu_busy_pct": report["devices"][0]["busy_pct"]}
    for key, (published, established, tolerance) in ANCHOR[path].items():
        assert ours[key] == pytest.approx(established, abs=tolerance), (key, ours[key], published)
        # every difference to the published figure stays within the 2.5 points explained in the note
        assert abs(ours[key] - published) <= 2.5, (key, ours[key], published)


def test_the_dataloader_wait_is_named_and_the_verdicts_differ():
    slow, fast = _report(WORKERS_0), _report(WORKERS_4)
    assert slow["verdict"]["bottleneck"] == "input"
    assert fast["verdict"]["bottleneck"] != "input"
    assert any("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" in line
               for line in slow["verdict"]["evidence"])


def test_the_diff_names_the_dataloader_wait_as_what_changed(capsys):
    code = main(["diff", str(WORKERS_0), str(WORKERS_4), "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    diff = json.loads(out.out)
    assert diff["summary"].startswith("Step time")
    assert "DataLoader wait −" in diff["summary"]
    assert "no longer on the critical path" in diff["summary"]
    deltas = diff["breakdown_delta_ms"]
    assert min(deltas, key=deltas.get) == "input"
    assert deltas["input"] < -50  # 59.3 → 1.2 ms per step, ±5 ms


def test_the_slow_run_is_told_to_use_dataloader_workers_in_pytorch_terms():
    advice = {r["id"]: r for r in _report(WORKERS_0)["recommendations"]}
    assert "input.dataloader_workers" in advice
    assert "num_workers=" in advice["input.dataloader_workers"]["snippet"]
    assert "DataLoader" in advice["input.dataloader_workers"]["evidence"]
    for r in advice.values():
        assert r["snippet_label"] == "PyTorch" and not r["snippet_jax"]
        assert "keras" not in r["snippet"] and "tf.data" not in r["snippet"], r["id"]
    assert "input.dataloader_workers" not in {r["id"] for r in _report(WORKERS_4)["recommendations"]}
