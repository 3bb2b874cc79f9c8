"""Reports on real TensorFlow CPU profiles written in this test session (tests/fixtures_tf.py).

The oracle for the input share is the fixture's own reading of each file with TensorFlow's xplane
proto (`facts[run]["input_wait_pct"]`: union of get-next time inside the step markers), independent
of the Advisor's reader and breakdown.
"""

from __future__ import annotations

import json

import pytest

from tb_plugin_advisor.formatting import format_pct
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.views.export.render import render_text

TOLERANCE_POINTS = 1.5


def report_of(tf_profiles, name: str):
    profile = read_xplane(tf_profiles.xplane(name))
    return build_report(RunProfiles(run=tf_profiles.run_name(name), profiles=[profile])).to_json()


@pytest.fixture(scope="module")
def reports(tf_profiles):
    return {name: report_of(tf_profiles, name) for name in ("keras_fit", "loop_input_bound", "loop_fixed")}


def test_input_bound_loop_is_input_bound_high(reports, tf_profiles):
    report = reports["loop_input_bound"]
    oracle = tf_profiles.facts["loop_input_bound"]["input_wait_pct"]
    assert report["verdict"]["input_bound"] == "high"
    assert report["verdict"]["bottleneck"] == "input"
    assert abs(report["verdict"]["input_pct"] - oracle) <= TOLERANCE_POINTS
    # the summary names the share as the tab shows it: the project's one rounding rule (half up, as
    # toFixed), not Python's `:.0f` (half to even: a captured 58.5 % read "58" beside the summary's 59)
    shown = format_pct(report["verdict"]["input_pct"])
    assert report["verdict"]["summary"].startswith(f"Input-bound: {shown} of each step"), shown
    assert report["steps"]["source"] == "root_marker"
    assert report["steps"]["numbers"] == tf_profiles.steps("loop_input_bound")
    assert sum(report["breakdown_pct"].values()) == pytest.approx(100.0, abs=0.05)
    assert report["breakdown_pct"]["device_compute"] == 0.0  # a CPU profile


def test_input_bound_loop_pipeline_and_advice(reports):
    report = reports["loop_input_bound"]
    pipeline = report["input_pipeline"]
    assert pipeline["dominant_stage"] == "map"
    assert pipeline["sequential_map"] is True and pipeline["parallelism"] == 1
    assert pipeline["prefetch"] is False and pipeline["autotune"] is False
    ids = {r["id"]: r["severity"] for r in report["recommendations"]}
    assert ids.get("input.parallel_map") == "high"
    assert ids.get("input.prefetch") == "high"
    assert "Input-bound" in render_text(report, width=100)


def test_fixed_loop_is_not_input_bound(reports, tf_profiles):
    report = reports["loop_fixed"]
    oracle = tf_profiles.facts["loop_fixed"]["input_wait_pct"]
    assert report["verdict"]["input_bound"] != "high"
    assert report["verdict"]["bottleneck"] != "input"
    assert abs(report["verdict"]["input_pct"] - oracle) <= TOLERANCE_POINTS
    assert report["verdict"]["bottleneck"] == "host"  # compute-bound on the CPU
    pipeline = report["input_pipeline"]
    assert pipeline["prefetch"] is True and pipeline["autotune"] is True and pipeline["parallelism"] >= 2
    ids = {r["id"] for r in report["recommendations"]}
    assert not ids & {"input.parallel_map", "input.prefetch", "input.interleave"}  # all already done
    # The construction accepts up to FIXED_MAX_PCT of input wait. A fixed loop that still waits at least
    # the "moderate" 5 % (a fast CPU, e.g. AMX, shrinks the step while the map costs the same) is told
    # to move preprocessing out of the step, and only then.
    moderate = report["verdict"]["input_bound"] == "moderate"
    told = "input.preprocess_offline" in ids
    assert told == (moderate and pipeline["dominant_stage"] == "map"), (report["verdict"]["input_pct"], ids)


def test_input_share_drops_from_the_bound_loop_to_the_fixed_one(reports):
    bound = reports["loop_input_bound"]["breakdown_ms"]["input"]
    fixed = reports["loop_fixed"]["breakdown_ms"]["input"]
    assert fixed < bound / 3


def test_keras_fit_yields_its_profiled_batches(reports, tf_profiles):
    report = reports["keras_fit"]
    expected = tf_profiles.steps("keras_fit")
    assert report["steps"]["source"] == "keras3_marker"
    assert report["steps"]["count"] == len(expected) > 0
    assert report["steps"]["numbers"] == expected
    measured = tf_profiles.facts["keras_fit"]["step_ms"]
    assert report["steps"]["times_ms"] == pytest.approx(measured, abs=0.01)
    assert report["verdict"]["bottleneck"] in ("host", "input", "balanced")
    json.dumps(report, allow_nan=False)
