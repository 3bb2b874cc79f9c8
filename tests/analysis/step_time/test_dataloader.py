"""The DataLoader panel (input_pipeline.kind "dataloader"): which iterator, the wait in next() per step
and the longest waits, pinned memory, blocking or non_blocking copies, and the work in the training
process — checked on real traces against numbers read straight from the JSON files (the H200 ResNet-50
num_workers 0/8 captures, the corpus' torch-tb-profiler ResNet-50 num_workers 0/4 pair, the traces
torch.profiler writes in this session), and on synthetic traces where every duration is exact.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from paths import CORPUS, H200, NO_CORPUS
from synth_kineto import BASE_NS, KinetoTrace, training_trace

from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rules.input_pipeline import dataloader_workers
from tb_plugin_advisor.analysis.classify.torch_names import ITERATOR_WORKERS
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.views.export.render import render

WORKERS0 = H200 / "resnet50_fp32_workers0"
WORKERS8 = H200 / "resnet50_fp32_workers8"
CORPUS = CORPUS / "kineto" / "tb_plugin" / "samples"
CORPUS_0 = CORPUS / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
CORPUS_4 = CORPUS / "resnet50_num_workers_4" / "worker0.1623212756351.pt.trace.json.gz"
needs_corpus = pytest.mark.skipif(not CORPUS_0.is_file(), reason=NO_CORPUS)


def trace_file(run_dir: Path) -> Path:
    (path,) = sorted(run_dir.glob("*.pt.trace.json*"))
    return path


def report_of(path: Path) -> Dict[str, Any]:
    return build_report(RunProfiles(run=path.parent.name, profiles=[read_kineto(str(path))])).to_json()


def raw_events(path: Path) -> List[Dict[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def steady_step_spans(report: Dict[str, Any], events: List[Dict[str, Any]]) -> List[Tuple[float, float]]:
    """(start, end) in µs of the ProfilerStep ranges the report averages over, from the raw file."""
    steady = {s["step"] for s in report["steps"]["per_step"] if not s["warmup"]}
    marker_categories = ("user_annotation", "operator")
    return [(e["ts"], e["ts"] + e["dur"]) for e in events
            if e["name"].startswith("ProfilerStep#") and e.get("cat", "").lower() in marker_categories
            and int(e["name"].split("#")[1]) in steady]


def raw_dataloader_wait_ms(path: Path, report: Dict[str, Any]) -> Tuple[float, List[float]]:
    """Mean ms per steady step of the DataLoader next() ranges, and every one's ms, from the raw JSON."""
    events = raw_events(path)
    spans = steady_step_spans(report, events)
    waits = [e["dur"] / 1000 for e in events if e["name"].startswith("enumerate(DataLoader)#")
             and any(a <= e["ts"] < b for a, b in spans)]
    return sum(waits) / len(spans), waits


# ---------------------------------------------------------------------------------------------------
# The H200 pair: num_workers=0 (input-bound) vs 8 workers with pin_memory and non_blocking copies


def test_workers0_is_a_single_process_loader_with_pageable_copies_that_still_block():
    path = trace_file(WORKERS0)
    report = report_of(path)
    pipeline = report["input_pipeline"]
    assert pipeline["kind"] == "dataloader"
    dl = pipeline["dataloader"]
    assert dl["iterator"] == "_SingleProcessDataLoaderIter" and dl["num_workers"] == 0
    wait, every = raw_dataloader_wait_ms(path, report)
    assert dl["wait_ms_per_step"] == pytest.approx(wait, rel=1e-3)
    assert [w["ms"] for w in dl["longest_waits"]] == pytest.approx(sorted(every, reverse=True)[:3], rel=1e-3)
    assert dl["wait_pct"] > 50  # the capture's point: the GPU waits for the loader most of the step
    # the copies ask for non_blocking=True (copy_'s Concrete Inputs) but come from pageable memory
    assert dl["pinned_memory"] is False and dl["non_blocking"] is True
    assert dl["non_blocking_source"] == "concrete_inputs"
    copies = dl["h2d_copies"]
    assert copies["per_step"] == 2 and copies["pinned"] == 0 and copies["staged"] == copies["pageable"]
    assert copies["bytes_per_step"] == 64 * 3 * 224 * 224 * 4 + 64 * 8  # images fp32 + int64 labels
    # staging holds the host about as long as the GPU copies: non_blocking had no effect
    assert copies["host_blocked_ms_per_step"] >= 0.9 * copies["device_ms_per_step"]
    # samples are made by numpy in __getitem__ (no op recorded), collated by torch.stack
    inside = dl["main_process_ms_per_step"]
    assert inside["python"] > inside["collate"] > inside["dataset"]
    assert dl["main_process_ops"][0]["name"] == "aten::stack"
    assert sum(inside.values()) == pytest.approx(dl["wait_ms_per_step"], rel=1e-3)
    assert any("non_blocking has no effect" in e for e in pipeline["evidence"])
    assert pipeline["dominant_stage"] == "unknown" and pipeline["parallelism"] is None  # tf.data keys kept


def test_workers8_has_worker_processes_pinned_memory_and_overlapped_copies():
    path = trace_file(WORKERS8)
    report = report_of(path)
    dl = report["input_pipeline"]["dataloader"]
    assert report["input_pipeline"]["kind"] == "dataloader"
    assert dl["iterator"] == "_MultiProcessingDataLoaderIter" and dl["workers"] == "processes"
    assert dl["num_workers"] is None  # the count is not in the trace
    wait, _ = raw_dataloader_wait_ms(path, report)
    assert dl["wait_ms_per_step"] == pytest.approx(wait, rel=1e-3) and dl["wait_pct"] < 1
    assert dl["pinned_memory"] is True and dl["non_blocking"] is True
    copies = dl["h2d_copies"]
    assert copies["overlapped"] == copies["pinned"] > 0 and copies["waited"] == copies["staged"] == 0
    assert copies["host_blocked_ms_per_step"] < 0.2 * copies["device_ms_per_step"]


def test_the_pair_in_the_exports_and_the_workers8_panel_shown_although_not_input_bound():
    for run_dir in (WORKERS0, WORKERS8):
        report = report_of(trace_file(run_dir))
        text, md, page = (render(report, fmt) for fmt in ("text", "md", "html"))
        assert "Input pipeline · PyTorch DataLoader:" in text
        assert "## Input pipeline · PyTorch DataLoader" in md
        assert "<h2>Input pipeline · PyTorch DataLoader</h2>" in page
        iterator = report["input_pipeline"]["dataloader"]["iterator"]
        assert iterator in text and iterator in md and iterator in page
    assert "No tf.data iterator events" not in text


# ---------------------------------------------------------------------------------------------------
# The corpus pair (torch-tb-profiler's ResNet-50 samples, V100, 2021): no Concrete Inputs, a sync
# after every copy


@needs_corpus
def test_corpus_num_workers_0_waits_in_the_main_process_and_blocks_on_each_copy():
    report = report_of(CORPUS_0)
    dl = report["input_pipeline"]["dataloader"]
    assert dl["iterator"] == "_SingleProcessDataLoaderIter"
    wait, _ = raw_dataloader_wait_ms(CORPUS_0, report)
    assert dl["wait_ms_per_step"] == pytest.approx(wait, rel=1e-3)
    assert dl["pinned_memory"] is False
    assert dl["non_blocking"] is False and dl["non_blocking_source"] == "runtime_calls"
    assert dl["h2d_copies"]["waited"] == dl["h2d_copies"]["pageable"] > 0
    # ToTensor/Normalize run as ops in the training process, and default_collate stacks
    ops = [o["name"] for o in dl["main_process_ops"]]
    assert {"aten::div", "aten::to"} <= set(ops) and dl["main_process_ms_per_step"]["collate"] > 0


@needs_corpus
def test_corpus_num_workers_4_waits_little_in_next():
    zero, four = report_of(CORPUS_0), report_of(CORPUS_4)
    dl = four["input_pipeline"]["dataloader"]
    assert dl["iterator"] == "_MultiProcessingDataLoaderIter"
    wait, _ = raw_dataloader_wait_ms(CORPUS_4, four)
    assert dl["wait_ms_per_step"] == pytest.approx(wait, rel=1e-3)
    assert dl["wait_ms_per_step"] < zero["input_pipeline"]["dataloader"]["wait_ms_per_step"] / 10
    assert dl["non_blocking"] is False and dl["pinned_memory"] is False


# ---------------------------------------------------------------------------------------------------
# Traces torch.profiler writes in this session (CPU: no copies)


@pytest.mark.parametrize("name", ["slow_loader", "fast_loader"])
def test_session_traces_wait_matches_the_raw_ranges_and_have_no_copies(torch_traces, name):
    path = torch_traces.trace(name)
    report = report_of(path)
    dl = report["input_pipeline"]["dataloader"]
    assert dl["iterator"] == "_SingleProcessDataLoaderIter"
    wait, _ = raw_dataloader_wait_ms(path, report)
    assert dl["wait_ms_per_step"] == pytest.approx(wait, rel=1e-3)
    assert dl["h2d_copies"]["per_step"] == 0 and dl["pinned_memory"] is None and dl["non_blocking"] is None
    assert any("No host-to-device copies" in e for e in report["input_pipeline"]["evidence"])


def test_the_slow_loader_waits_longer_than_the_fast_one(torch_traces):
    slow, fast = (report_of(torch_traces.trace(n))["input_pipeline"]["dataloader"]
                  for n in ("slow_loader", "fast_loader"))
    assert slow["wait_ms_per_step"] > 3 * fast["wait_ms_per_step"]
    measured = torch_traces.measured("slow_loader")["wait_ms"]
    assert max(w["ms"] for w in slow["longest_waits"]) <= max(measured) * 1.05


# ---------------------------------------------------------------------------------------------------
# Synthetic traces: every duration exact

STEP = 10_000_000
FIRST = BASE_NS + 1_000_000_000
PIN_THREAD = 4343


def copy_trace(era: str = "current") -> KinetoTrace:
    """Three steps; per step a DataLoader next() (2 ms) holding aten::stack 0.5 ms and aten::div 0.3 ms,
    then three host-to-device copies: pinned and non_blocking, pageable with non_blocking=False (a
    sync follows), and a synchronous cudaMemcpy; plus a pin_memory op and a cudaHostAlloc."""
    trace = training_trace(era=era, steps=3, step_ns=STEP)
    copies = ("Memcpy", "cudaMemcpy")
    trace.events = [e for e in trace.events if not str(e.get("name", "")).startswith(copies)]
    for n in range(3):
        s = FIRST + n * STEP
        trace.op("aten::stack", s + 100_000, 500_000, ["float"], [[16, 256]])
        trace.op("aten::div", s + 700_000, 300_000, ["float"], [[16, 256]])
        # the pin-memory thread
        trace.op("aten::pin_memory", s + 1_100_000, 50_000, ["float"], [[16, 256]], tid=PIN_THREAD)
        trace.complete(trace.cat["runtime"], "cudaHostAlloc", s + 1_200_000, 40_000, tid=PIN_THREAD,
                       args={"correlation": 0})
        _copy(trace, s + 2_100_000, "Pinned", "True", "cudaMemcpyAsync", call_ns=20_000, sync_ns=0)
        _copy(trace, s + 2_250_000, "Pageable", "False" if era == "current" else None, "cudaMemcpyAsync",
              call_ns=30_000, sync_ns=70_000)
        _copy(trace, s + 2_400_000, "Pageable", None, "cudaMemcpy", call_ns=60_000, sync_ns=0)
    return trace


def _copy(trace: KinetoTrace, at: int, source: str, non_blocking: Optional[str], api: str, call_ns: int,
          sync_ns: int) -> None:
    concrete = ["", "", non_blocking] if non_blocking is not None else None
    trace.op("aten::copy_", at, call_ns + sync_ns + 10_000, ["float", "float", "Scalar"],
             [[16, 256], [16, 256], []], concrete=concrete)
    trace._correlation += 1
    corr = trace._correlation
    trace.complete(trace.cat["runtime"], api, at + 2_000, call_ns, args={"correlation": corr})
    if sync_ns:
        trace.complete(trace.cat["runtime"], "cudaStreamSynchronize", at + 3_000 + call_ns, sync_ns,
                       args={"correlation": corr + 10_000})
    trace.complete(trace.cat["memcpy"], f"Memcpy HtoD ({source} -> Device)", at + 5_000, 50_000, pid=0,
                   tid=trace._stream(7), args={"device": 0, "stream": 7, "correlation": corr, "bytes": 16384})


def synthetic_report(tmp_path: Path, trace: KinetoTrace) -> Dict[str, Any]:
    return report_of(trace.write(tmp_path / "run" / "w.1.pt.trace.json"))


def test_synthetic_copies_are_classified_exactly(tmp_path):
    dl = synthetic_report(tmp_path, copy_trace())["input_pipeline"]["dataloader"]
    copies = dl["h2d_copies"]
    assert (copies["pinned"], copies["pageable"], copies["per_step"]) == (3, 6, 3)
    assert (copies["overlapped"], copies["waited"], copies["staged"]) == (3, 6, 0)
    assert (copies["asked_non_blocking"], copies["asked_blocking"]) == (3, 3)
    assert dl["non_blocking"] is None  # a mix
    # host time: 20 µs (pinned call) + 30 + 70 µs (call and its sync) + 60 µs (synchronous API)
    assert copies["host_blocked_ms_per_step"] == pytest.approx(0.18)
    assert copies["device_ms_per_step"] == pytest.approx(0.15) and copies["bytes_per_step"] == 3 * 16384
    assert dl["pinned_memory"] is None and dl["pin_memory_ops_per_step"] == 1
    assert dl["host_alloc"] == {"calls": 3, "ms": pytest.approx(0.12)}
    # next(): 2 ms, of which stack 0.5 (collate), div 0.3 (dataset), the rest no op covers
    assert dl["wait_ms_per_step"] == pytest.approx(2.0)
    assert dl["main_process_ms_per_step"] == {"collate": pytest.approx(0.5), "dataset": pytest.approx(0.3),
                                              "python": pytest.approx(1.2)}


def test_without_concrete_inputs_a_sync_after_every_copy_means_non_blocking_false(tmp_path):
    trace = training_trace(era="2021", steps=3, step_ns=STEP)
    dl = synthetic_report(tmp_path, trace)["input_pipeline"]["dataloader"]
    assert dl["non_blocking"] is True and dl["non_blocking_source"] == "runtime_calls"  # no sync follows
    trace = training_trace(era="2021", steps=3, step_ns=STEP)
    for n in range(3):  # training_trace's copy call ends at +2.055 ms: a sync 1 µs later
        trace.complete(trace.cat["runtime"], "cudaStreamSynchronize", FIRST + n * STEP + 2_056_000, 200_000,
                       args={"correlation": 90_000 + n})
    dl = synthetic_report(tmp_path / "b", trace)["input_pipeline"]["dataloader"]
    assert dl["non_blocking"] is False and dl["h2d_copies"]["waited"] == 3
    assert dl["h2d_copies"]["host_blocked_ms_per_step"] == pytest.approx(0.005 + 0.2)


def test_a_worker_loader_is_told_apart_in_the_panel_and_the_advice(tmp_path):
    report = synthetic_report(tmp_path, training_trace(steps=6, workers=4))
    dl = report["input_pipeline"]["dataloader"]
    assert dl["workers"] == "processes" and dl["iterator"] == "_MultiProcessingDataLoaderIter"
    advice = {r["id"]: r for r in report["recommendations"]}
    assert "already loads in worker processes" in advice["input.dataloader_workers"]["evidence"]


# ---------------------------------------------------------------------------------------------------
# Tables and rule wording


@pytest.mark.parametrize("iterator, workers", sorted(ITERATOR_WORKERS.items()))
def test_every_iterator_class_is_read_from_a_real_name(iterator, workers, tmp_path):
    trace = training_trace(steps=3, workers=1 if workers == "processes" else 0)
    dl = synthetic_report(tmp_path, trace)["input_pipeline"]["dataloader"]
    assert (dl["iterator"], dl["workers"]) == (iterator, workers)


@pytest.mark.parametrize("changes, words", [
    ({}, "waits for the DataLoader's next batch"),
    ({"torch_dataloader": "multi", "input_kind": "dataloader"}, "already loads in worker processes"),
    ({"input_kind": "annotations", "input_annotation": "load_batch",
      "input_annotation_inside": "decode 9 ms"},
     "inside its annotation 'load_batch', mostly decode 9 ms, not in a DataLoader"),
])
def test_dataloader_workers_evidence_says_what_the_loop_waits_in(changes, words):
    facts = Facts(framework="pytorch", input_bound="high", breakdown_pct={"input": 40.0}, **changes)
    ((severity, evidence, *_),) = dataloader_workers(facts)
    assert severity == "high" and words in evidence
