"""The verdict: thresholds on both sides, the bottleneck chosen, and the sentence people read."""

from __future__ import annotations

import numpy as np
import pytest

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES
from tb_plugin_advisor.analysis.step_time.inputs import InputPipeline
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.step_time.verdict import decide_verdict, input_level

MS = 1_000_000


def breakdown_of(**ms) -> Breakdown:
    """One 100 ms step split as given (the rest idle), repeated over 5 steps."""
    row = np.zeros(len(CATEGORIES), dtype=np.int64)
    for category, value in ms.items():
        row[CATEGORIES.index(category)] = int(value * MS)
    row[CATEGORIES.index("idle")] += 100 * MS - int(row.sum())
    rows = np.tile(row, (5, 1))
    starts = np.arange(5, dtype=np.int64) * 200 * MS
    return Breakdown(starts, starts + 100 * MS, rows, np.ones(5, dtype=bool))


def steps_of(count=5, source="root_marker") -> Steps:
    starts = np.arange(count, dtype=np.int64) * 200 * MS
    return Steps(source, "test", starts, starts + 100 * MS, list(range(count)), [], np.zeros(count, bool))


def pipeline(stage="map") -> InputPipeline:
    return InputPipeline(stage, {}, 1, False, False, False, False, False, True)


@pytest.mark.parametrize(
    ("pct", "level"),
    [
        (th.INPUT_HIGH_PCT, "high"),
        (th.INPUT_HIGH_PCT - 0.01, "moderate"),
        (th.INPUT_MODERATE_PCT, "moderate"),
        (th.INPUT_MODERATE_PCT - 0.01, "low"),
        (0.0, "low"),
    ],
)
def test_input_levels_follow_the_builtin_thresholds(pct, level):
    assert input_level(pct) == level


def test_input_bound_summary_names_the_share_and_the_stage():
    verdict = decide_verdict(breakdown_of(input=41, device_compute=59), steps_of(), pipeline("map"), "GPU")
    assert (verdict.bottleneck, verdict.input_bound) == ("input", "high")
    assert verdict.input_pct == pytest.approx(41.0)
    assert verdict.summary.startswith("Input-bound: 41 % of each step waits for the input pipeline")
    assert "map stage" in verdict.summary
    assert any("input wait 41 ms (41 %)" in e for e in verdict.evidence)  # the tab's rounding


def test_device_bound_with_moderate_input_says_both():
    verdict = decide_verdict(breakdown_of(input=10, device_compute=85), steps_of(), pipeline(), "GPU")
    assert (verdict.bottleneck, verdict.input_bound) == ("device", "moderate")
    assert verdict.summary.startswith("GPU-bound: 85 % of each step is GPU compute")
    assert "10 % of each step (moderate)" in verdict.summary


def test_just_below_high_input_is_not_the_bottleneck():
    verdict = decide_verdict(breakdown_of(input=19.9, device_compute=80.1), steps_of(), pipeline(), "GPU")
    assert verdict.bottleneck == "device" and verdict.input_bound == "moderate"


@pytest.mark.parametrize(
    ("split", "bottleneck"),
    [
        ({"kernel_launch": th.OVERHEAD_HIGH_PCT, "device_compute": 40}, "launch"),
        ({"kernel_launch": th.OVERHEAD_HIGH_PCT - 0.1, "device_compute": 40}, "balanced"),
        ({"communication": 30, "device_compute": 60}, "communication"),
        ({"memcpy": 20, "device_compute": 50}, "memcpy"),
        ({"host_compute": 70, "device_compute": 20}, "host"),
        ({"other": 40, "host_compute": 15}, "host"),
        ({"device_compute": th.COMPUTE_BOUND_PCT}, "device"),
        ({"device_compute": th.COMPUTE_BOUND_PCT - 0.1, "host_compute": 30}, "balanced"),
    ],
)
def test_bottleneck_choice(split, bottleneck):
    assert decide_verdict(breakdown_of(**split), steps_of(), pipeline(), "GPU").bottleneck == bottleneck


def test_cpu_only_compute_bound_wording():
    verdict = decide_verdict(breakdown_of(host_compute=96, input=3), steps_of(), pipeline(), "")
    assert verdict.bottleneck == "host" and verdict.input_bound == "low"
    assert verdict.summary.startswith("Compute-bound on the CPU: for 96 % of each step")


def test_large_idle_share_is_called_out():
    verdict = decide_verdict(breakdown_of(device_compute=30), steps_of(), pipeline(), "GPU")
    assert verdict.bottleneck == "balanced"
    assert "70 % of each step has no recorded activity" in verdict.summary


def test_no_steps_and_nothing_recorded_is_unknown():
    empty = Breakdown(
        np.zeros(0, np.int64),
        np.zeros(0, np.int64),
        np.zeros((0, len(CATEGORIES)), np.int64),
        np.zeros(0, bool),
    )
    verdict = decide_verdict(empty, steps_of(0, "none"), None, "")
    assert (verdict.bottleneck, verdict.input_bound) == ("unknown", "unknown")


def test_without_steps_the_summary_says_the_shares_are_of_the_whole_profile():
    verdict = decide_verdict(breakdown_of(input=50, host_compute=50), steps_of(0, "none"), pipeline(), "")
    assert "no steps were found" in verdict.summary
