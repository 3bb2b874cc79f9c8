"""What a trace can support (analysis/validity/): every rule of the table on both sides of its
condition, and real H200 traces degraded on purpose (tests/degraded_traces.py) — each edit removes
exactly what one rule needs, and the report must then mark the named row not `supported` and
withhold the numbers that depended on it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pytest
from degraded_traces import DEGRADATIONS, load_trace, write_trace
from paths import CORPUS, H200, corpus_file

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.validity.clock_offset import HostClocks, host_clocks
from tb_plugin_advisor.analysis.validity.matrix import matrix_of
from tb_plugin_advisor.analysis.validity.rules import (
    ANALYSES,
    HOST_CLOCKS_DISAGREE,
    RULES,
    RUN_RULES,
    STATUSES,
    SUPPORTED,
)
from tb_plugin_advisor.analysis.validity.trace_facts import TraceFacts
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.formats.registry import file_format
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.report.run import build_report

# A trace that supports everything: a PyTorch GPU run with markers, shapes, memory and correlation.
WHOLE = TraceFacts(
    framework="pytorch", gpu_planes=1, device_events=3000, launch_share=1.0, steps=8,
    step_source="profiler_step", step_clock="device", steady_steps=7, cut_off_steps=0,
    steps_without_device_work=0, shaped_ops=9000, flops_ops=0, memory_records=6000,
    clipped_host_events=0, clipped_device_events=40, host_events=23000,
)

# Per rule: facts that make it hold (changed from WHOLE), and the row it must then mark.
BROKEN: Dict[str, Dict[str, Any]] = {
    "no_device_events": {"device_events": 0, "launch_share": None},
    "no_launch_correlation": {"launch_share": 0.0, "step_clock": "host"},
    "partial_launch_correlation": {"launch_share": th.DEVICE_CLOCK_MIN_SHARE / 2, "step_clock": "host"},
    "no_steps": {"steps": 0, "steady_steps": 0, "step_source": "none", "launch_share": None},
    "inferred_steps": {"step_source": "inferred"},
    "few_steps": {"steady_steps": th.FEW_STEPS - 1},
    "cut_off_steps": {"cut_off_steps": 1},
    "steps_without_device_work": {"steps_without_device_work": 2},
    "no_shapes": {"shaped_ops": 0},
    "no_memory_records": {"memory_records": 0},
    "clipped_events": {"clipped_host_events": 2000},
}
# The same facts just on the other side of each rule's condition.
KEPT: Dict[str, Dict[str, Any]] = {
    "no_device_events": {"gpu_planes": 0, "device_events": 0, "launch_share": None},  # a CPU run
    "no_launch_correlation": {"launch_share": 0.01},
    "partial_launch_correlation": {"launch_share": th.DEVICE_CLOCK_MIN_SHARE},
    "no_steps": {"steps": 1, "steady_steps": 1},
    "inferred_steps": {"step_source": "root_marker"},
    "few_steps": {"steady_steps": th.FEW_STEPS},
    "cut_off_steps": {"cut_off_steps": 0},
    "steps_without_device_work": {"steps_without_device_work": 0},
    "no_shapes": {"shaped_ops": 0, "flops_ops": 10},  # with_flops=True alone costs the matmuls
    "no_memory_records": {"memory_records": 1},
    "clipped_events": {"clipped_host_events": int(0.009 * 23000)},
}


def test_the_whole_trace_supports_every_analysis():
    validity = matrix_of(WHOLE)
    assert [r.analysis for r in validity.rows] == list(ANALYSES)
    assert all(r.status == SUPPORTED and not r.reasons for r in validity.rows)
    assert validity.held == ()


def test_every_rule_is_tested_on_both_sides():
    assert set(BROKEN) == set(KEPT) == {r.id for r in RULES}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_each_rule_marks_what_it_affects(rule):
    broken = matrix_of(dataclasses.replace(WHOLE, **BROKEN[rule.id]))
    assert rule.id in broken.held
    for analysis, status in rule.affects.items():
        assert analysis in ANALYSES and status in STATUSES[1:]
        row = next(r for r in broken.rows if r.analysis == analysis)
        assert STATUSES.index(row.status) >= STATUSES.index(status)
        assert rule.id in row.rules and rule.reason(broken.facts) in row.to_json()["reason"]
        assert row.to_json()["fix"]  # a capture setting that fixes it, for PyTorch at least
    kept = matrix_of(dataclasses.replace(WHOLE, **KEPT[rule.id]))
    assert rule.id not in kept.held


def test_the_fix_is_the_frameworks_own():
    facts = dataclasses.replace(WHOLE, framework="jax", steps=0, steady_steps=0, step_source="none")
    row = next(r for r in matrix_of(facts).rows if r.analysis == "steps")
    assert "StepTraceAnnotation" in row.to_json()["fix"]
    facts = dataclasses.replace(facts, framework="tf")
    row = next(r for r in matrix_of(facts).rows if r.analysis == "steps")
    assert "_r=1" in row.to_json()["fix"]


# -- real traces degraded on purpose -------------------------------------------------------------------

TRANSFORMER = H200 / "transformer_fp32" / "gpu0.1795771384025155384.pt.trace.json.gz"


@pytest.fixture(scope="module")
def degraded_reports(tmp_path_factory) -> Dict[str, Dict[str, Any]]:
    """The report of the transformer capture as captured, and with each degradation."""
    out = {}
    for name in ("as_captured", *DEGRADATIONS):
        trace = load_trace(TRANSFORMER)
        if name != "as_captured":
            trace = DEGRADATIONS[name](trace)
        path = write_trace(trace, tmp_path_factory.mktemp(name), TRANSFORMER.name)
        out[name] = build_report(RunProfiles(run=name, profiles=[read_kineto(str(path))])).to_json()
    return out


def _rows(report: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {row["analysis"]: row for row in report["validity"]["rows"]}


def test_the_capture_as_it_is_supports_what_the_edits_take_away(degraded_reports):
    rows = _rows(degraded_reports["as_captured"])
    for analysis in ("op_attribution", "roofline", "tensor_cores", "memory"):
        assert rows[analysis]["status"] == SUPPORTED, rows[analysis]
    report = degraded_reports["as_captured"]
    assert report["steps"]["clock"] == "device" and report["roofline"]["mfu_pct"] is not None
    assert report["memory"]["allocators"]
    assert not any(s["cut_off"] for s in report["steps"]["per_step"])


def test_without_correlation_op_attribution_and_device_clock_steps_are_withheld(degraded_reports):
    report = degraded_reports["no_correlation"]
    rows = _rows(report)
    assert rows["op_attribution"]["status"] == "unsupported"
    assert rows["steps"]["status"] != SUPPORTED and "no_launch_correlation" in rows["steps"]["rules"]
    assert "correlation" in rows["op_attribution"]["reason"]
    assert report["steps"]["clock"] == "host" and report["steps"]["host_ahead_ms"] is None
    assert all(s["host_ahead_ms"] is None for s in report["steps"]["per_step"])
    assert report["roofline"]["mfu_pct"] is None
    assert report["validity"]["facts"]["launch_share"] == 0.0


def test_without_input_dims_flops_and_mfu_are_withheld(degraded_reports):
    report = degraded_reports["no_input_dims"]
    rows = _rows(report)
    assert rows["roofline"]["status"] == "unsupported" and "record_shapes=True" in rows["roofline"]["fix"]
    assert rows["tensor_cores"]["status"] == "degraded"
    roofline = report["roofline"]
    assert roofline["mfu_pct"] is None and roofline["achieved_tflops"] is None
    assert not roofline["model_flops_per_step"]


def test_without_memory_events_memory_is_withheld(degraded_reports):
    report = degraded_reports["no_memory"]
    rows = _rows(report)
    assert rows["memory"]["status"] == "unsupported" and "profile_memory=True" in rows["memory"]["fix"]
    assert report["peak_memory_bytes"] is None and report["memory"]["allocators"] == []
    assert report["memory_peak_bytes_by_allocator"] == {}


def test_a_last_step_cut_off_is_out_of_the_steps(degraded_reports):
    report = degraded_reports["last_step_cut_off"]
    rows = _rows(report)
    assert rows["steps"]["status"] != SUPPORTED and "cut_off_steps" in rows["steps"]["rules"]
    assert "prof.step()" in rows["steps"]["fix"]
    last = report["steps"]["per_step"][-1]
    assert last["cut_off"] and report["steps"]["steady_count"] == len(report["steps"]["per_step"]) - 1


def test_reader_housekeeping_is_no_warning(degraded_reports):
    """Events clipped by rounding were the verdict card's second line on every H200 capture; they
    are a validity fact now, and only a rule's problem where they affect something."""
    for report in degraded_reports.values():
        assert not any("overlapped" in w for w in report["warnings"])


# -- every real trace at hand, unmodified -------------------------------------------------------------

def _real_profiles():
    paths = sorted(H200.rglob("*.pt.trace.json.gz")) + sorted(H200.rglob("*.xplane.pb"))
    if CORPUS.is_dir():
        paths += [p for p in sorted(CORPUS.rglob("*.pt.trace.json*")) + sorted(CORPUS.rglob("*.xplane.pb"))
                  if "_corrupt" not in p.parts]
    return paths


def _label(path: Path) -> str:
    for root in (H200, CORPUS):
        if root in path.parents:
            return str(path.relative_to(root))
    return path.name


@pytest.mark.sweep
@pytest.mark.parametrize("path", _real_profiles(), ids=_label)
def test_no_real_trace_is_marked_unsupported_without_a_reason_in_it(path):
    """Each row not supported names its rules and says, with the trace's own figure, why; the facts it
    was decided on are in the report for a reader to check against the trace."""
    found = file_format(path.name)
    if found is None:
        pytest.skip("not a format the Advisor analyses")
    fmt, host = found
    try:
        profile = fmt.read(str(path), host, None)
    except Exception as exc:  # a corpus file the readers refuse says so elsewhere (its own tests)
        pytest.skip(f"unreadable: {exc}")
    report = build_report(RunProfiles(run=path.parent.name, profiles=[profile])).to_json()
    validity = report["validity"]
    rule_ids = {r.id for r in RULES}
    facts = TraceFacts(**validity["facts"])
    for row in validity["rows"]:
        if row["status"] == SUPPORTED:
            assert not row["rules"]
            continue
        assert row["reason"] and row["rules"] and set(row["rules"]) <= rule_ids, row
        for rule in (r for r in RULES if r.id in row["rules"]):
            assert rule.holds(facts) and rule.reason(facts) in row["reason"]
    print(_label(path), {r["analysis"]: r["status"] for r in validity["rows"] if r["status"] != SUPPORTED})


def test_the_exports_print_what_the_trace_does_not_support(degraded_reports):
    from tb_plugin_advisor.views.export.render import render_html, render_markdown, render_text

    report = degraded_reports["no_memory"]
    text = render_text(report, width=100)
    assert "What this trace supports:" in text
    assert "memory — unsupported: The trace holds no allocator" in text
    assert "profile_memory=True" in text
    md = render_markdown(report)
    assert "## What this trace supports" in md and "| memory | unsupported |" in md
    page = render_html(report)
    assert '<h2 id="validity">' in page and "no allocator records" in page


def test_cli_section_validity(tmp_path, capsys):
    from tb_plugin_advisor.views.cli.main import main as cli_main

    trace = DEGRADATIONS["no_input_dims"](load_trace(TRANSFORMER))
    run = tmp_path / "logs" / "no_shapes"
    write_trace(trace, run, TRANSFORMER.name)
    assert cli_main(["report", str(tmp_path / "logs"), "--section", "validity", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "roofline — unsupported" in out and "record_shapes=True" in out and "Recommendations" not in out


def test_a_withheld_number_is_skipped_by_the_diff_and_the_trend_not_taken_as_zero(degraded_reports):
    from tb_plugin_advisor.diff.compare import diff_reports
    from tb_plugin_advisor.trend.series import capture_from_report

    whole, no_shapes = degraded_reports["as_captured"], degraded_reports["no_input_dims"]
    mfu = diff_reports(whole, no_shapes)["roofline"]["mfu_pct"]
    assert mfu["baseline"] == whole["roofline"]["mfu_pct"] is not None
    assert mfu["candidate"] is None and mfu["delta"] is None and mfu["delta_pct"] is None
    capture = capture_from_report("no_shapes", "2026-11-27T09:23:04", no_shapes)
    assert capture.summary["mfu_pct"] is None


# -- several hosts: their clocks -----------------------------------------------------------------------

def test_the_clock_offset_is_the_mode_of_same_named_collective_ends():
    rng = np.random.default_rng(0)
    ends = np.sort(rng.integers(0, 10**9, 200)).astype(np.int64)
    offset_ns = 5_000_000
    other = ends + offset_ns + rng.integers(-20_000, 20_000, ends.size)  # leave within ±20 µs
    extra = rng.integers(0, 10**9, 50).astype(np.int64)  # calls the first host has no partner for
    clocks = host_clocks(["a", "b"], [{"ncclAllReduce": ends, "ncclSendRecv": extra},
                                       {"ncclAllReduce": np.sort(np.concatenate([other, extra[:5]]))}])
    assert clocks.offsets_us["a"] == 0.0
    assert abs(clocks.offsets_us["b"] - 5000.0) < 20.0 and abs(clocks.skew_us - 5000.0) < 20.0
    alone = host_clocks(["a", "b"], [{"ncclAllReduce": ends}, {"ncclBroadcast": ends}])
    assert alone.offsets_us["b"] is None and alone.skew_us is None


def test_the_run_rule_on_both_sides_of_its_threshold():
    assert RUN_RULES == (HOST_CLOCKS_DISAGREE,)
    over = HostClocks({"a": 0.0, "b": th.CLOCK_SKEW_DEGRADED_US + 1}, th.CLOCK_SKEW_DEGRADED_US + 1, 10)
    under = HostClocks({"a": 0.0, "b": th.CLOCK_SKEW_DEGRADED_US}, th.CLOCK_SKEW_DEGRADED_US, 10)
    unknown = HostClocks({"a": 0.0, "b": None}, None, 0)
    assert HOST_CLOCKS_DISAGREE.holds(over) and "µs" in HOST_CLOCKS_DISAGREE.reason(over)
    assert not HOST_CLOCKS_DISAGREE.holds(under) and not HOST_CLOCKS_DISAGREE.holds(unknown)
    assert HOST_CLOCKS_DISAGREE.fix_for("pytorch")


def test_one_rank_shifted_by_5_ms_is_measured_and_not_blamed(tmp_path):
    """HTA's two sampled ranks (their NCCL SendRecv kernels), rank 1's every timestamp 5 ms later."""
    ranks = [corpus_file(f"hta/tests/data/trace_filter/sampled_rank-{r}.json.gz") for r in (0, 1)]

    def report(shift_us: float) -> Dict[str, Any]:
        profiles = []
        for r, path in enumerate(ranks):
            trace = load_trace(path)
            if r == 1:
                for e in trace["traceEvents"]:
                    if isinstance(e.get("ts"), (int, float)):
                        e["ts"] += shift_us
            written = write_trace(trace, tmp_path / f"shift{shift_us}", f"rank{r}.pt.trace.json.gz")
            profiles.append(read_kineto(str(written), host=f"rank{r}"))
        return build_report(RunProfiles(run="sampled", profiles=profiles)).to_json()

    as_captured, shifted = report(0), report(5000)
    assert as_captured["validity"]["clock_skew_us"] < th.CLOCK_SKEW_DEGRADED_US
    assert abs(shifted["validity"]["clock_skew_us"] - 5000.0) <= th.CLOCK_OFFSET_BIN_US
    assert abs(shifted["validity"]["clock_offset_us"]["rank1"] - 5000.0) <= th.CLOCK_OFFSET_BIN_US
    row = next(r for r in shifted["validity"]["rows"] if r["analysis"] == "multi_host")
    assert row["status"] == "degraded" and row["rules"] == ["host_clocks_disagree"]
    # no rank is blamed for its clock: the stragglers and per-host figures are the unshifted run's
    assert shifted["stragglers"] == as_captured["stragglers"]
    times = [[h["step_time_ms"] for h in r["per_host"]] for r in (shifted, as_captured)]
    assert times[0] == times[1] and not any(h["straggler"] for h in shifted["per_host"])
