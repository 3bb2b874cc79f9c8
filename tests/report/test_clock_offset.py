"""A rank whose clock is off is no straggler: the cross-host views compare durations (step times,
input shares, compute per step), never one host's timestamps with another's, so shifting one host's
whole clock by 5 ms — profiler start skew, on the real two-host TF job of the corpus — changes none
of them. That job's devices show no collective kernels, so the offset itself cannot be measured on
it (tests/analysis/validity measures one on two NCCL ranks): the matrix says nothing rather than
guess."""

from __future__ import annotations

import dataclasses

import pytest
from paths import corpus_file

from tb_plugin_advisor.model import Profile, RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.report.run import build_report

SHIFT_NS = 5_000_000  # 5 ms
RUN = "xprof/demo/plugins/profile/GPU-multi-worker"


def shifted(profile: Profile, by_ns: int) -> Profile:
    """The same profile with every timestamp `by_ns` later (each column replaced by a shifted copy:
    the reader's columns are read-only views of the file)."""
    for plane in profile.planes:
        for line in plane.lines:
            line.start_ns = line.start_ns + by_ns
    for device in profile.devices:
        for table in (device.kernels, device.memcpys):
            object.__setattr__(table, "start_ns", table.start_ns + by_ns)
    profile.step_markers = [dataclasses.replace(m, start_ns=m.start_ns + by_ns) for m in profile.step_markers]
    return profile


@pytest.mark.sweep
def test_a_rank_shifted_by_5_ms_is_not_blamed():
    paths = sorted(corpus_file(RUN).glob("*.xplane.pb"))
    assert len(paths) == 2

    def report(shift_ns: int):
        profiles = [read_xplane(str(paths[0])), shifted(read_xplane(str(paths[1])), shift_ns)]
        return build_report(RunProfiles(run="GPU-multi-worker", profiles=profiles)).to_json()

    as_captured, skewed = report(0), report(SHIFT_NS)
    assert skewed["stragglers"] == as_captured["stragglers"]
    assert [h["straggler"] for h in skewed["per_host"]] == [h["straggler"] for h in as_captured["per_host"]]
    times = [[h["step_time_ms"] for h in r["per_host"]] for r in (skewed, as_captured)]
    assert times[0] == times[1]
    assert skewed["collectives"]["skew"] == as_captured["collectives"]["skew"]
    assert len(skewed["per_host"]) == 2
    assert skewed["validity"]["clock_skew_us"] is None
    first, second = skewed["hosts"]
    assert skewed["validity"]["clock_offset_us"] == {first: 0.0, second: None}
    assert skewed["verdict"]["bottleneck"] == as_captured["verdict"]["bottleneck"]
