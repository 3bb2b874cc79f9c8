"""Evidence spans (docs/ARCHITECTURE.md §2): every span of every recommendation and finding is a real
event of the trace file it came from — name, pid, tid, ts and dur exactly as a Kineto JSON writes them,
or plane id, line id, start and duration of an XSpace event — read back with json/protobuf
(tests/evidence_oracle.py), on the committed H200 captures, the corpus, and the torch and TF profiles
captured in this session. And the spans the recommendations need are there: the DataLoader wait, the
host syncs, the worst steps, the slowest kernels."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest
from paths import CORPUS, H200

from tb_plugin_advisor.advice.evidence import FALLBACK, kinds_for, spans_for
from tb_plugin_advisor.advice.registry import EVERY_RULE
from tb_plugin_advisor.analysis.evidence.gather import gather_spans
from tb_plugin_advisor.analysis.evidence.span import KINDS, EvidenceSpan
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.formatting import format_elapsed
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto, read_kineto_bytes
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.report.run import build_report
from tests.evidence_oracle import kineto_missing, report_spans, xspace_missing

H200_TORCH = sorted(H200.glob("*/*.pt.trace.json.gz"))
H200_JAX = sorted(H200.glob("jax_*/plugins/profile/*/*.xplane.pb"))
# other people's traces, 2021 to 2025: CUDA and ROCm, absolute µs and relative-ns eras, string tids
CORPUS_TRACES = [
    "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
    "kineto/legacy_2021-01/tb_plugin/samples/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz",
    "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/tests/data/call_stack/backward_thread.json",
    "hta/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz",
    "hta/tests/data/df_index_resolver/df_index_resolver.json.gz",
    "hta/tests/data/nccl_parser_config/nccl_data.json.gz",
    "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
]


def _report_of(path: Path) -> Dict[str, Any]:
    is_xspace = path.name.endswith(".xplane.pb")
    profile = read_xplane(str(path)) if is_xspace else read_kineto(str(path))
    return build_report(RunProfiles(run=path.parent.name, profiles=[profile])).to_json()


def _check_every_span(path: Path, report: Dict[str, Any]) -> List[Dict[str, Any]]:
    spans = [span for _, span in report_spans(report)]
    xspace = path.name.endswith(".xplane.pb")
    assert all(s["format"] == ("xspace" if xspace else "kineto") for s in spans)
    missing = (xspace_missing if xspace else kineto_missing)(path, spans)
    assert missing == [], f"{path.name}: spans that are no event of the file: {missing[:3]}"
    for s in spans:
        assert s["dur_us"] >= 0 and s["host"] and s["name"] and s["kind"] in KINDS
    return spans


def _ids_with_spans(report: Dict[str, Any]) -> Dict[str, List[Dict[str, Any]]]:
    return {r["id"]: r["evidence_spans"] for r in report["recommendations"]}


def _capture_name(path: Path) -> str:
    return path.parent.name if path.suffix == ".gz" else path.parts[-5]


@pytest.mark.sweep
@pytest.mark.parametrize("path", H200_TORCH + H200_JAX, ids=_capture_name)
def test_every_span_of_the_h200_captures_is_an_event_of_the_file(path):
    report = _report_of(path)
    spans = _check_every_span(path, report)
    assert spans, "a real GPU capture with recommendations shows them in the trace"
    assert all(r["evidence_spans"] for r in report["recommendations"]), "every recommendation has spans"


def test_the_spans_show_what_each_recommendation_is_about():
    """The DataLoader wait, the host syncs, the worst steps and the slowest kernels, on the captures
    made to show them."""
    loader = _ids_with_spans(_report_of(next(H200.glob("resnet50_fp32_workers0/*.gz"))))
    waits = loader["input.dataloader_workers"]
    assert {s["kind"] for s in waits} == {"input_wait", "worst_step"}
    assert all("DataLoader" in s["name"] for s in waits if s["kind"] == "input_wait")
    assert [s["dur_us"] for s in waits if s["kind"] == "input_wait"] == sorted(
        (s["dur_us"] for s in waits if s["kind"] == "input_wait"), reverse=True)
    worst = [s for s in waits if s["kind"] == "worst_step"][0]
    assert worst["name"].startswith("ProfilerStep#") and worst["step"] == int(worst["name"].split("#")[1])
    transposes = loader["layout.transpose"]  # the layout transposes the rule names, on their stream
    named = [s for s in transposes if s["kind"] == "transpose_kernel"]
    assert named and transposes[: len(named)] == named  # first, then the slowest kernel beside them
    assert all("nhwc" in s["name"].lower() or "transpose" in s["name"].lower() for s in named)
    fp32 = _ids_with_spans(_report_of(next(H200.glob("transformer_fp32/*.gz"))))["precision.mixed"]
    assert fp32[0]["kind"] == "fp32_matmul" and "f32" in fp32[0]["name"]

    # host.sync does not fire there (the syncs are short beside the step), but its spans are gathered
    path = next(H200.glob("mlp_host_sync/*.gz"))
    profile = read_kineto(str(path))
    sync = [s.to_json() for s in gather_spans(profile, find_steps(profile))["host_sync"]]
    assert sync and all("Synchronize" in s["name"] or "Memcpy" in s["name"] or "item" in s["name"]
                        or "local_scalar" in s["name"] for s in sync)
    assert kineto_missing(path, sync) == []

    jax = _ids_with_spans(_report_of(next(H200.glob("jax_mlp_slow_input/plugins/profile/*/*.xplane.pb"))))
    annotated = jax["input.background_prefetch"]
    assert annotated[0]["kind"] == "input_annotation" and annotated[0]["name"] == "input"


@pytest.mark.sweep
@pytest.mark.parametrize("rel", CORPUS_TRACES)
def test_every_span_of_a_corpus_trace_is_an_event_of_the_file(rel):
    path = CORPUS / rel
    if not path.is_file():
        pytest.skip(f"corpus file not present: {path}")
    _check_every_span(path, _report_of(path))


@pytest.mark.parametrize("name", ["slow_loader", "fast_loader", "bf16", "no_step"])
def test_every_span_of_a_torch_trace_of_this_session_is_an_event_of_the_file(torch_traces, name):
    path = torch_traces.trace(name)
    report = _report_of(path)
    spans = _check_every_span(path, report)
    if name == "slow_loader":
        waits = _ids_with_spans(report)["input.dataloader_workers"]
        assert waits[0]["kind"] == "input_wait" and "DataLoader" in waits[0]["name"]
    if name != "no_step":  # (a run with nothing to recommend has nothing to show)
        assert all(r["evidence_spans"] for r in report["recommendations"])
        assert spans or not report["recommendations"]


@pytest.mark.parametrize("name", ["keras_fit", "loop_input_bound", "loop_fixed"])
def test_every_span_of_a_tf_profile_of_this_session_is_an_event_of_the_xspace(tf_profiles, name):
    path = tf_profiles.xplane(name)
    report = _report_of(path)
    spans = _check_every_span(path, report)
    assert spans and all(r["evidence_spans"] for r in report["recommendations"])
    if name == "loop_input_bound":
        kinds = {s["kind"] for r in report["recommendations"] if r["id"].startswith("input.")
                 for s in r["evidence_spans"]}
        assert "input_wait" in kinds  # IteratorGetNext and friends, the waits the verdict names


def test_string_thread_ids_and_a_base_time_are_given_back_as_written():
    """2021 traces write tids as strings; relative-ns traces write ts from baseTimeNanoseconds: the span
    keeps the tid's type and the ts as the JSON has it, not the reader's epoch ns."""
    trace = (
        b'{"baseTimeNanoseconds": 1700000000000000000, "traceEvents": ['
        b'{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": "5555", '
        b'"ts": 1000.5, "dur": 900.25},'
        b'{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 7, "tid": "5555", '
        b'"ts": 1901.0, "dur": 2000.125},'
        b'{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 7, "tid": "5555", '
        b'"ts": 3902.0, "dur": 950.0}]}'
    )
    profile = read_kineto_bytes(trace, "t.pt.trace.json", "worker0")
    report = build_report(RunProfiles(run="r", profiles=[profile])).to_json()
    spans = [s for _, s in report_spans(report)]
    assert spans
    worst = [s for s in spans if s["kind"] == "worst_step"][0]
    assert (worst["pid"], worst["tid"], worst["ts_us"], worst["dur_us"]) == (7, "5555", 1901.0, 2000.125)
    assert worst["start_ns"] == 1_901_000 and worst["step"] == 2


def test_every_rule_names_kinds_that_exist():
    for rule in EVERY_RULE:
        assert rule.evidence and set(rule.evidence) <= set(KINDS), rule.id
        assert kinds_for(rule.id) == rule.evidence
    assert set(FALLBACK) <= set(KINDS)
    assert kinds_for("host.sync")[0] == "host_sync" and kinds_for("input.prefetch")[0] == "input_annotation"
    assert kinds_for("unknown.rule") == FALLBACK


def test_spans_for_takes_the_first_kind_whole_and_one_of_each_later_kind():
    def span(kind: str, ts: float) -> EvidenceSpan:
        return EvidenceSpan(kind, "h", 1, 2, ts, 1.0, int(ts * 1000), 1000, kind, None, "t", "kineto")

    spans = {"input_wait": [span("input_wait", t) for t in (1, 2, 3)],
             "worst_step": [span("worst_step", t) for t in (4, 5)]}
    chosen = spans_for("input.prefetch", spans)
    assert [s.ts_us for s in chosen] == [1, 2, 3, 4]
    assert spans_for("host.sync", spans) == tuple(spans["worst_step"])  # the first kind there, whole
    assert spans_for("host.sync", {}) == ()


def test_the_cli_prints_each_span_and_how_to_open_it(capsys):
    from tb_plugin_advisor.views.cli.main import main

    jax = next(H200.glob("jax_mlp_slow_input/plugins/profile/*/*.xplane.pb"))
    report = _report_of(jax)
    span = report["recommendations"][0]["evidence_spans"][0]
    assert main(["report", str(jax)]) == 0
    text = capsys.readouterr().out
    assert "In the trace:" in text
    # the short name, the step and how far into it and into the trace, then the raw ts for a viewer
    assert f"{span['short_name']}: step {span['step']}, " in text
    assert f"{format_elapsed(span['step_offset_ms'])} into the step, " in text
    into_trace = f"{format_elapsed(span['trace_offset_ms'])} into the trace"
    assert f"{into_trace}, at {span['ts_us']:.3f}".rstrip("0") in text
    # xprof's trace viewer page on the span's window (the Profile tab keeps no window in its URL)
    assert "open: <tensorboard>/data/plugin/profile/trace_viewer_index.html?is_streaming=true" in text
    assert "tag%3Dtrace_viewer%2540%26host%3Dvm" in text and "view_start=" in text
    torch = next(H200.glob("resnet50_fp32_workers0/*.gz"))
    assert main(["report", str(torch), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "In the trace:" in md and "Open in Perfetto" in md and "pid 591, tid 591" in md


def test_each_span_says_how_far_into_its_step_and_into_the_trace():
    """The offsets agree with the raw times: two spans' trace offsets differ by their ts, and a span
    lies inside its step (device spans on the step's own clock, host spans in the host's range)."""
    torch = next(H200.glob("resnet50_fp32_workers0/*.gz"))
    report = _report_of(torch)
    steps = {s["step"]: s for s in report["steps"]["per_step"]}
    spans = [s for r in report["recommendations"] for s in r["evidence_spans"]]
    assert spans
    first = spans[0]
    for span in spans:
        assert span["trace_offset_ms"] >= 0
        assert span["trace_offset_ms"] - first["trace_offset_ms"] == pytest.approx(
            (span["ts_us"] - first["ts_us"]) / 1000, abs=1e-3)
        if span["step"] is None:
            assert span["step_offset_ms"] is None
            continue
        step = steps[span["step"]]
        assert 0 <= span["step_offset_ms"] <= max(step["total_ms"], step["host_ms"] or 0)
        assert span["step_offset_ms"] <= span["trace_offset_ms"]
