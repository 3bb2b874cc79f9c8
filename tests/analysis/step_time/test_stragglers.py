"""Stragglers: each threshold of analysis/thresholds.py on both sides, and the merged run report."""

from __future__ import annotations

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.report.stragglers import HostFigures, find_stragglers


def hosts(step_ms, input_pct=None):
    input_pct = input_pct or [10.0] * len(step_ms)
    return [HostFigures(f"h{i}", s, p, 50.0) for i, (s, p) in enumerate(zip(step_ms, input_pct))]


def test_a_host_over_the_step_time_threshold_is_a_straggler_with_its_excess():
    over = 100.0 * (1 + (th.STRAGGLER_STEP_PCT + 1) / 100)
    found = find_stragglers(hosts([100.0, 100.0, 100.0, over]))
    assert [(s.host, s.metric) for s in found] == [("h3", "step_time")]
    assert abs(found[0].excess - (th.STRAGGLER_STEP_PCT + 1)) < 1e-9
    assert found[0].median == 100.0
    assert "+11.0%" in found[0].to_json()["message"]


def test_a_host_just_under_the_step_time_threshold_is_not():
    under = 100.0 * (1 + (th.STRAGGLER_STEP_PCT - 1) / 100)
    assert find_stragglers(hosts([100.0, 100.0, 100.0, under])) == []


def test_input_wait_above_the_median_by_the_threshold_is_a_straggler():
    median = 10.0
    found = find_stragglers(hosts([100.0] * 3, [median, median, median + th.STRAGGLER_INPUT_POINTS]))
    assert [(s.host, s.metric) for s in found] == [("h2", "input")]
    assert abs(found[0].excess - th.STRAGGLER_INPUT_POINTS) < 1e-9
    below = median + th.STRAGGLER_INPUT_POINTS - 0.5
    assert find_stragglers(hosts([100.0] * 3, [median, median, below])) == []


def test_one_host_has_no_stragglers_and_fast_hosts_are_never_stragglers():
    assert find_stragglers(hosts([500.0])) == []
    assert find_stragglers(hosts([100.0, 100.0, 100.0, 10.0], [10.0, 10.0, 10.0, 0.0])) == []


def test_the_worst_step_time_straggler_comes_first():
    found = find_stragglers(hosts([100.0, 100.0, 100.0, 130.0, 150.0]))
    assert [s.host for s in found] == ["h4", "h3"]
