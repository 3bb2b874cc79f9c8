"""The trend's series patterns: globs mean what fnmatch.fnmatchcase says, but are matched without a
process-wide cache (fnmatch keeps 32,768 compiled patterns: 3,000 long ones sent to the trend route
grew TensorBoard by 169 MB), and a pattern is at most rules.SELECT["max_pattern_chars"] long."""

from __future__ import annotations

import fnmatch
import re
import shutil
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import H200

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.sources.session import HostFile, Session
from tb_plugin_advisor.trend.rules import SELECT
from tb_plugin_advisor.trend.run_glob import glob_match
from tb_plugin_advisor.trend.select import match_pattern

EDGES = "ab-]![*?/^\\z"  # every character a class or a star treats specially, and plain ones


@settings(max_examples=3000, deadline=None)
@given(st.text(EDGES, max_size=10), st.text(EDGES.replace("*", "").replace("?", ""), max_size=8))
def test_a_glob_means_what_fnmatchcase_says(pattern, name):
    assert glob_match(name, pattern) == fnmatch.fnmatchcase(name, pattern)


@pytest.mark.parametrize("name, pattern", [("[[[", "?[[-?!]?"), ("[a", "[[-?!a]?"), ("b", "[z-a!]")])
def test_classes_keep_fnmatchs_quirks(name, pattern):
    """Where a reversed range is dropped, CPython reads a `!` it leaves first as a negation."""
    assert glob_match(name, pattern) == fnmatch.fnmatchcase(name, pattern)


@pytest.mark.parametrize("name, pattern, expected", [
    ("resnet50_fp32_workers8_repeat1/2024", "resnet50_fp32_workers8*", True),
    ("ctl5", "ctl[0-9]", True), ("ctlx", "ctl[!x]", False), ("a]", "a[]]", True), ("a-", "a[z-a-]", True),
    ("[x", "[x", True), ("ab", "a[z-a]", False), ("ab", "a[!z-a]", True), ("a/b/c", "a*c", True),
])
def test_the_class_rules_people_meet(name, pattern, expected):
    assert glob_match(name, pattern) is expected


def _session(run: str) -> Session:
    host = HostFile("w", f"/logs/{run}/w.1.pt.trace.json", 10, 1)
    return Session(run=run, path=f"/logs/{run}", run_dir=f"/logs/{run.split('/')[0]}",
                   run_dir_rel=run.split("/")[0], name=run.split("/")[-1], format="kineto", hosts=(host,),
                   files=("w.1.pt.trace.json",))


def test_distinct_patterns_leave_no_cache_behind():
    sessions = [_session(f"job{i}/2024_01_0{i}") for i in range(1, 6)]
    assert [s.run for s in match_pattern(sessions, "job[24]*")] == ["job2/2024_01_02", "job4/2024_01_04"]
    before = (fnmatch._compile_pattern.cache_info().currsize, len(re._cache))
    for i in range(2000):
        match_pattern(sessions, f"job*{i}?*[!x]" + "*y" * 100)
    assert (fnmatch._compile_pattern.cache_info().currsize, len(re._cache)) == before


def test_a_pattern_is_bounded_in_length():
    sessions = [_session("job1/2024_01_01")]
    longest = "job1*" + "*" * (SELECT["max_pattern_chars"] - 5)
    assert match_pattern(sessions, longest)
    with pytest.raises(AdvisorError, match="characters long; at most 256"):
        match_pattern(sessions, longest + "*")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_long_patterns_sent_to_tensorboard_are_refused_and_cost_no_memory(tensorboard_factory, tmp_path):
    logdir = tmp_path / "logs"
    shutil.copytree(H200 / "mlp_host_sync", logdir / "mlp_host_sync")
    tb = tensorboard_factory(logdir, "--advisor_cache_dir=off", "--advisor_write_markers=false")
    tb.wait_for(lambda: tb.plugin("runs")[1]["runs"])
    status, body = tb.plugin("trend", run="nothing*" + "x" * 300)
    assert status == 400 and "at most 256" in body["error"]
    before = _rss_mb(tb.process.pid)
    for i in range(1500):  # each distinct, as long as a query parameter may be (4,000 characters)
        query = urllib.parse.urlencode({"run": f"{i}*" + "ab*" * 1330})
        assert tb.get("/data/plugin/advisor/trend?" + query).status == 400
    assert _rss_mb(tb.process.pid) - before < 32  # fnmatch's cache took 253 MB for these
