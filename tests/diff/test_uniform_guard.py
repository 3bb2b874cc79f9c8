"""A diff whose ops all moved with the step keeps the step, the breakdown and the shares that counted
only because their compute moved out of its significant changes; a changed precision verdict stays."""

from __future__ import annotations

import copy

import pytest

from tb_plugin_advisor.diff.uniform import apply_uniform_guard


def _diff(verdicts=("fp32", "fp32"), factor=0.8):
    ops = [{"status": "changed", "baseline_ms": ms, "candidate_ms": ms * factor}
           for ms in (9.0, 7.0, 5.0, 4.0, 3.0)]
    return {
        "step_time": {"baseline_ms": 36.3, "candidate_ms": 36.3 * factor, "significant": True},
        "ops": ops,
        "breakdown": {"host_compute": {"significant": True}, "idle": {"significant": False}},
        "precision_verdict": {"baseline": verdicts[0], "candidate": verdicts[1]},
        "precision_significant": {"fp32": True, "bf16": False},
        "tensor_cores_significant": True,
    }


@pytest.mark.parametrize("factor", [0.8, 1.25])
def test_shares_moved_with_a_uniform_change_are_not_significant(factor):
    diff = _diff(factor=factor)
    apply_uniform_guard(diff)
    assert diff["step_time"]["reason_code"] == "uniform" and diff["step_time"]["significant"] is False
    assert not any(row["significant"] for row in diff["breakdown"].values())
    assert diff["precision_significant"] == {"fp32": False, "bf16": False}
    assert diff["tensor_cores_significant"] is False


def test_a_changed_precision_verdict_stays_significant():
    diff = _diff(verdicts=("fp32", "mixed"))
    apply_uniform_guard(diff)
    assert diff["step_time"]["significant"] is False
    assert diff["precision_significant"] == {"fp32": True, "bf16": False}


def test_a_change_that_is_not_uniform_keeps_every_significance():
    diff = _diff()
    diff["ops"][0]["candidate_ms"] = 9.0 * 2.5  # the largest op moved by another factor
    diff["ops"][1]["candidate_ms"] = 7.0 * 2.5
    before = copy.deepcopy(diff)
    apply_uniform_guard(diff)
    assert diff["step_time"]["uniform"] is None
    diff["step_time"].pop("uniform")
    assert diff == before
