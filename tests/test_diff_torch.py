"""Diffs with PyTorch runs: two real PyTorch runs (tests/torch_traces.py), and a PyTorch run against
a TensorFlow run, which works with a stated caveat (README: "Comparing runs")."""

from __future__ import annotations

import json

from tb_plugin_advisor.diff.compare import cross_framework_caveat
from tb_plugin_advisor.views.cli.main import main


def _diff(capsys, *paths) -> dict:
    code = main(["diff", *[str(p) for p in paths], "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_the_caveat_only_for_pytorch_against_another_framework():
    assert cross_framework_caveat("pytorch", "tf")
    assert cross_framework_caveat("jax", "pytorch")
    assert cross_framework_caveat("pytorch", "")  # XSpace of unknown framework
    assert cross_framework_caveat("pytorch", "pytorch") == ""
    assert cross_framework_caveat("tf", "jax") == ""
    assert cross_framework_caveat("", "") == ""


def test_pytorch_against_tensorflow_works_with_the_caveat(capsys, torch_traces, tf_profiles):
    diff = _diff(capsys, tf_profiles.xplane("loop_fixed"), torch_traces.trace("fast_loader"))
    assert diff["frameworks"]["candidate"] == "pytorch" and diff["frameworks"]["baseline"] != "pytorch"
    assert diff["warnings"][0].startswith("cross-framework diff")
    assert diff["step_time"]["baseline_ms"] > 0 and diff["step_time"]["candidate_ms"] > 0
    statuses = {row["status"] for row in diff["ops"]}
    assert "changed" not in statuses  # no op name is shared between TF and aten
    code = main(["diff", str(tf_profiles.xplane("loop_fixed")), str(torch_traces.trace("fast_loader"))])
    text = capsys.readouterr().out
    assert code == 0 and "cross-framework diff" in text


def test_two_pytorch_runs_have_no_caveat_and_match_ops_by_name(capsys, torch_traces):
    diff = _diff(capsys, torch_traces.trace("fast_loader"), torch_traces.trace("slow_loader"))
    assert not any(w.startswith("cross-framework") for w in diff["warnings"])
    assert diff["frameworks"] == {"baseline": "pytorch", "candidate": "pytorch"}
    names = {row["name"] for row in diff["ops"] if row["status"] == "changed"}
    assert "aten::addmm" in names
