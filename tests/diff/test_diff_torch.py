"""Diffs with PyTorch runs: two real PyTorch runs (tests/torch_traces.py), the H200 GPU captures
(4 steps each: what `active=4` gives), and a PyTorch run against a TensorFlow run, which works with a
stated caveat (README: "Comparing runs")."""

from __future__ import annotations

import itertools
import json

import pytest
from paths import H200

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


def test_h200_input_fix_on_four_steps_a_run_is_significant_and_names_its_test(capsys):
    """`workers0` (the DataLoader decodes in the main process) → `workers8_repeat1` (eight workers):
    a few steps each (`active=4`), about 4x apart, the slowest fixed step far below the fastest
    input-bound one. The exact rank test could not go below p = 0.029 with 4 and 4 steps."""
    diff = _diff(capsys, H200, "resnet50_fp32_workers0", "resnet50_fp32_workers8_repeat1")
    st = diff["step_time"]
    assert 3 <= st["baseline_steps"] <= 4 and 3 <= st["candidate_steps"] <= 4
    assert st["delta_pct"] < -50  # at least 2x faster
    assert st["test"] == "welch_log" and st["p_value"] < 0.01
    assert st["significant"] is True and st["reason_code"] == "significant"
    assert diff["summary"].startswith("Step time ") and "ms, significant)" in diff["summary"]
    assert "noise" not in diff["summary"]
    assert diff["breakdown"]["input"]["significant"] is True  # the DataLoader wait went


@pytest.mark.parametrize("base, cand", itertools.combinations(("1", "2", "3"), 2))
def test_h200_same_config_repeats_on_four_steps_a_run_are_not_significant(capsys, base, cand):
    """Three captures of one configuration: Welch's t can test 4 and 4 steps, but a drift between runs
    is no change (below the few-step minimum effect, or every op moved alike: the machine)."""
    diff = _diff(capsys, H200, f"resnet50_fp32_workers8_repeat{base}", f"resnet50_fp32_workers8_repeat{cand}")
    st = diff["step_time"]
    assert st["test"] == "welch_log" and st["significant"] is False
    assert st["reason_code"] in {"noise", "below_min_effect", "uniform"}
    assert not diff["significant_change"] or not any(r["significant"] for r in diff["breakdown"].values())
