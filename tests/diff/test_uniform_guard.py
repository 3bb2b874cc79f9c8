"""A diff whose ops all moved with the step keeps the step, the breakdown and the shares that counted
only because their compute moved out of its significant changes; a changed precision verdict stays.

Built through `diff_reports` on two hand-made reports, so the order of the guard and the share rule
inside the diff is what is tested, not the guard alone."""

from __future__ import annotations

import pytest
from test_diff_reports import make_report, steps

from tb_plugin_advisor.diff.compare import diff_reports

OPS_MS = (9.0, 7.0, 5.0, 4.0, 3.0)


def _report(run, factor, verdict, fp32_pct, tensor_core_pct, moved=(1.0, 1.0)):
    """Ten steps of host and device compute scaled by `factor`, five ops that follow (or, with
    `moved`, the first two by their own factor), and the given precision and Tensor Core shares."""
    per_step = steps(10, wobble=0.3, host_compute=6.0 * factor, device_compute=30.0 * factor)
    op_factors = [factor * m for m in moved] + [factor] * (len(OPS_MS) - len(moved))
    ops = [
        {"name": f"op{i}", "category": "device_compute", "time_ms": ms * f, "count": 1.0}
        for i, (ms, f) in enumerate(zip(OPS_MS, op_factors))
    ]
    report = make_report(
        run, per_step, ops=ops, precision_pct={"fp32": fp32_pct, "bf16": 100.0 - fp32_pct},
        tensor_core_pct=tensor_core_pct,
    )
    report["precision"] = {"verdict": verdict, "summary": "", "basis": "device"}
    return report


def _diff(factor, verdicts=("fp32", "fp32"), moved=(1.0, 1.0)):
    base = _report("a", 1.0, verdicts[0], 58.0, 20.0)
    cand = _report("b", factor, verdicts[1], 66.0, 30.0, moved)
    return diff_reports(base, cand)


@pytest.mark.parametrize("factor", [0.8, 1.25])
def test_shares_moved_with_a_uniform_change_are_not_significant(factor):
    diff = _diff(factor)
    assert diff["step_time"]["reason_code"] == "uniform" and diff["step_time"]["significant"] is False
    assert not any(row["significant"] for row in diff["breakdown"].values())
    assert diff["precision_significant"] == {"fp32": False, "bf16": False}
    assert diff["tensor_cores_significant"] is False
    assert diff["significant_change"] is False


def test_a_changed_precision_verdict_stays_significant():
    diff = _diff(0.8, verdicts=("fp32", "mixed"))
    assert diff["step_time"]["significant"] is False
    assert diff["precision_significant"] == {"fp32": True, "bf16": True}
    assert diff["tensor_cores_significant"] is False  # no verdict of its own: its compute did not count


def test_a_change_that_is_not_uniform_keeps_every_significance():
    diff = _diff(0.8, moved=(2.5, 2.5))  # the two largest ops moved by another factor: the code
    assert diff["step_time"]["uniform"] is None
    assert diff["step_time"]["significant"] is True
    assert diff["breakdown"]["device_compute"]["significant"] is True
    assert diff["precision_significant"] == {"fp32": True, "bf16": True}
    assert diff["tensor_cores_significant"] is True
