"""Op tables count each microsecond once: host ops nest (`aten::conv2d` > `aten::convolution` >
`aten::_convolution` > `aten::mkldnn_convolution`), so a row's `time_ms` is its self time, `total_ms`
its inclusive time and `within` the outermost op it runs inside. Checked on a trace whose nesting is
known exactly, on real PyTorch captures made in the test session and on the corpus' CPU traces."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

import pytest
from paths import CORPUS, needs_corpus
from synth_kineto import BASE_NS, KinetoTrace

from tb_plugin_advisor.diff.compare import diff_reports
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto, read_kineto_bytes
from tb_plugin_advisor.report.run import build_report

MS = 1_000_000


def _report(path: Path) -> Dict:
    return build_report(RunProfiles(run=path.name, profiles=[read_kineto(str(path))])).to_json()


def _report_of_bytes(data: bytes) -> Dict:
    return build_report(RunProfiles(run="t", profiles=[read_kineto_bytes(data, "t.pt.trace.json")])).to_json()


def _convolution_steps(steps: int = 3) -> bytes:
    """CPU-only steps of 20 ms: a 10 ms conv2d chain nested four deep, then a 4 ms relu."""
    trace = KinetoTrace(devices=[])
    t = BASE_NS + 1_000_000_000
    for n in range(steps):
        s = t + n * 20 * MS
        trace.step(n + 1, s, 20 * MS - 1_000)
        for depth, (name, length) in enumerate((("aten::conv2d", 10 * MS), ("aten::convolution", 9 * MS),
                                                ("aten::_convolution", 8_500_000),
                                                ("aten::mkldnn_convolution", 8 * MS))):
            trace.op(name, s + 1 * MS + depth * 250_000, length, ["float"], [[8, 3, 32, 32]])
        trace.op("aten::relu", s + 12 * MS, 4 * MS, ["float"], [[8, 16, 32, 32]])
    return trace.to_bytes()


def test_nested_ops_report_self_time_total_time_and_the_enclosing_op():
    ops = {op["name"]: op for op in _report_of_bytes(_convolution_steps())["ops"]}
    expected_self = {"aten::conv2d": 1.0, "aten::convolution": 0.5, "aten::_convolution": 0.5,
                     "aten::mkldnn_convolution": 8.0, "aten::relu": 4.0}
    for name, self_ms in expected_self.items():
        assert ops[name]["time_ms"] == pytest.approx(self_ms, abs=1e-6), (name, ops[name])
    assert ops["aten::conv2d"]["total_ms"] == pytest.approx(10.0)
    assert ops["aten::mkldnn_convolution"]["total_ms"] == pytest.approx(8.0)
    assert ops["aten::mkldnn_convolution"]["within"] == "aten::conv2d"
    assert "within" not in ops["aten::conv2d"] and "within" not in ops["aten::relu"]
    assert sum(op["time_ms"] for op in ops.values()) == pytest.approx(14.0)  # the 14 ms of op work


def _rows_add_up_to_at_most_the_step(report: Dict) -> None:
    ops: List[Dict] = report["ops"]
    assert any("total_ms" in op for op in ops), "host op rows carry their inclusive time"
    for op in ops:
        assert op["total_ms"] >= op["time_ms"] - 1e-9, op
    step_ms = report["steps"]["mean_ms"]
    assert sum(op["time_ms"] for op in ops) <= step_ms * 1.001, (sum(op["time_ms"] for op in ops), step_ms)


@pytest.mark.needs_torch
@pytest.mark.parametrize("name", ["slow_loader", "fast_loader", "bf16"])
def test_self_times_of_real_captures_add_up_to_at_most_the_step(torch_traces, name):
    _rows_add_up_to_at_most_the_step(_report(torch_traces.trace(name)))


@pytest.mark.needs_torch
def test_the_diff_of_a_slow_and_a_fast_loader_lists_each_op_change_once(torch_traces):
    reports = {name: _report(torch_traces.trace(name)) for name in ("slow_loader", "fast_loader")}
    within = {op["name"]: op.get("within") for r in reports.values() for op in r["ops"]}
    total = {name: {op["name"]: op["total_ms"] for op in r["ops"] if "total_ms" in op}
             for name, r in reports.items()}
    rows = [r for r in diff_reports(reports["slow_loader"], reports["fast_loader"])["ops"]
            if abs(r["delta_ms"]) > 0.05][:20]
    assert rows and len({r["name"] for r in rows}) == len(rows)
    for a in rows:
        for b in rows:
            if a is b or within.get(a["name"]) != b["name"]:
                continue
            if b["baseline_count"] and b["candidate_count"]:
                # a nested op and its enclosing op may both change, but never by the same time
                assert abs(a["delta_ms"] - b["delta_ms"]) > 0.02 * abs(b["delta_ms"]), (a, b)
            else:
                # an enclosing op only one run has: its change is its own time there, which leaves
                # out the nested op's (its inclusive time does not). The two deltas may then be
                # close by chance: aten::randn's own time is about that of the aten::empty it calls
                run = "slow_loader" if b["baseline_count"] else "fast_loader"
                assert abs(b["delta_ms"]) < total[run][b["name"]] - 1e-6, (a, b, total[run][b["name"]])


PYTORCH_FOLDERS = ("kineto", "hta", "tracelens")
CORPUS_TRACES = sorted(
    p for folder in PYTORCH_FOLDERS if (CORPUS / folder).is_dir()
    for p in (CORPUS / folder).rglob("*.json*") if p.name.endswith((".json", ".json.gz")))


@pytest.mark.sweep
@needs_corpus
def test_corpus_host_op_rows_add_up_to_at_most_the_step():
    checked = 0
    for path in CORPUS_TRACES:
        try:
            profile = read_kineto(str(path))
        except Exception:  # noqa: BLE001 - corpus files that are refused are tested elsewhere
            continue
        report = build_report(RunProfiles(run=path.name, profiles=[profile])).to_json()
        if not report["ops"] or "total_ms" not in report["ops"][0] or not report["steps"].get("mean_ms"):
            continue
        _rows_add_up_to_at_most_the_step(report)
        checked += 1
    assert checked >= 1, "no corpus trace with host op rows"


def _nested_intervals(rng, count: int):
    """Random properly nested events sorted by start, longest first: each new event starts inside
    the innermost open one that still has room, or after every open one ended."""
    import numpy as np

    starts, ends, open_ends, t = [], [], [], 0
    while len(starts) < count:
        t += int(rng.integers(0, 3))
        while open_ends and open_ends[-1] <= t:
            open_ends.pop()
        limit = open_ends[-1] if open_ends else t + 10_000
        if limit - t < 2:
            t = limit
            continue
        end = t + int(rng.integers(1, limit - t))
        starts.append(t)
        ends.append(end)
        open_ends.append(end)
    return np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64) - np.array(starts, dtype=np.int64)


@pytest.mark.parametrize("block", [1, 3, 64, 1 << 16])
def test_self_times_walked_in_blocks_follow_the_nesting_rule(block, monkeypatch):
    """Self time = duration less the direct children's; the outermost op is the root of the chain of
    parents. Written out here with each event's parent found by search, against the walk in blocks
    of any size (the open events carried over)."""
    import numpy as np

    from tb_plugin_advisor.analysis.step_time import ops

    starts, durations = _nested_intervals(np.random.default_rng(7), 3_000)
    start_list, end_list = starts.tolist(), (starts + durations).tolist()
    parent = []
    for i, start in enumerate(start_list):  # the latest earlier event still open at this one's start
        parent.append(next((j for j in range(i - 1, -1, -1) if end_list[j] > start), -1))
    own = durations.copy()
    for i, up in enumerate(parent):
        if up >= 0:
            own[up] -= durations[i]
    roots = list(range(starts.size))
    for i, up in enumerate(parent):
        if up >= 0:
            roots[i] = roots[up]
    assert sum(p >= 0 for p in parent) > 1_000 and max(np.bincount(roots)) > 5  # real nesting
    monkeypatch.setattr(ops, "NEST_BLOCK", block)
    self_ns, outermost = ops.nested_op_times(starts, durations)
    assert self_ns.tolist() == np.maximum(own, 0).tolist()
    assert outermost.tolist() == roots
