"""PyTorch signals and the rules that read them: copies from pageable memory (pin_memory /
non_blocking) and zero_grad filling gradients (set_to_none), each firing on the trace made for it and
staying quiet otherwise; every pattern of analysis/torch_signals.py backed by a real Kineto name."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_kineto import BASE_NS, training_trace

from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rules import input_pipeline, optimizer
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.report.run import build_report

STEP_NS = 10_000_000  # training_trace's step


def report_of(trace, tmp_path: Path, name: str) -> dict:
    path = trace.write(tmp_path / name)
    return build_report(RunProfiles(run=name, profiles=[read_kineto(str(path))])).to_json()


def ids(report: dict) -> list:
    return [r["id"] for r in report["recommendations"]]


def with_zero_grad(trace, steps: int, fills: int):
    """Add Optimizer.zero_grad with `fills` aten::zero_ inside to each step of training_trace."""
    start = BASE_NS + 1_000_000_000  # training_trace's first step
    for n in range(steps):
        s = start + n * STEP_NS + 8_000_000
        trace.annotation("Optimizer.zero_grad#SGD.zero_grad", s, 500_000)
        for k in range(fills):
            trace.op("aten::zero_", s + 10_000 + k * 120_000, 100_000, ["float"], [[64]])
    return trace


def test_pageable_copies_fire_pin_memory_with_the_measured_time(tmp_path):
    # training_trace copies 0.3 ms per 10 ms step from pageable memory: 3 % of the step
    report = report_of(training_trace(steps=6), tmp_path, "a.1.pt.trace.json")
    advice = {r["id"]: r for r in report["recommendations"]}
    assert "input.pin_memory" in advice
    assert "0.30 ms per step (3 % of the step)" in advice["input.pin_memory"]["evidence"]
    assert "non_blocking=True" in advice["input.pin_memory"]["snippet"]


def test_zero_grad_fills_are_counted_per_step(tmp_path):
    quiet = report_of(training_trace(steps=6), tmp_path, "b.1.pt.trace.json")
    assert "optimizer.zero_grad_set_to_none" not in ids(quiet)
    fired = report_of(with_zero_grad(training_trace(steps=6), 6, fills=3), tmp_path, "c.1.pt.trace.json")
    advice = {r["id"]: r for r in fired["recommendations"]}
    assert "runs 3 zero-filling ops" in advice["optimizer.zero_grad_set_to_none"]["evidence"]
    assert "set_to_none=True" in advice["optimizer.zero_grad_set_to_none"]["snippet"]


@pytest.mark.parametrize("check, facts, fires", [
    (input_pipeline.pin_memory, dict(torch_pageable_h2d_pct=1.5), True),
    (input_pipeline.pin_memory, dict(torch_pageable_h2d_pct=0.5), False),
    (optimizer.zero_grad_set_to_none, dict(torch_zero_grad_fills=10), True),
    (optimizer.zero_grad_set_to_none, dict(torch_zero_grad_fills=0), False),
])
def test_rules_on_both_sides_and_never_for_tensorflow(check, facts, fires):
    assert bool(list(check(Facts(framework="pytorch", **facts)))) == fires
    assert not list(check(Facts(framework="tf", **facts)))


@pytest.mark.parametrize("rule", [input_pipeline.PIN_MEMORY, optimizer.ZERO_GRAD_SET_TO_NONE])
def test_every_pytorch_rule_has_a_pytorch_snippet(rule):
    assert rule.snippets_for(Facts(framework="pytorch")).pytorch.strip(), rule.id




def test_name_masks_hold_exactly_the_names_each_signal_counts():
    """Each mask against the name-by-name reading of torch_names: near misses (another case, a longer
    name, the text elsewhere in a name), non-ASCII names, and the padding row."""
    from tb_plugin_advisor.analysis.classify.torch_names import (
        ITERATOR_WORKERS,
        TORCH_NAMES,
        copy_source,
        dataloader_iterator,
    )
    from tb_plugin_advisor.analysis.step_time.torch_signals import _masks

    names = ["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
             "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
             "enumerate(DataLoader)#_MyDataLoaderIter.__next__",
             "ENUMERATE(DataLoader)#_SingleProcessDataLoaderIter.__next__",
             "Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pinned -> Device)",
             "Memcpy DtoH (Device -> Pageable)", "x Memcpy HtoD (Pageable -> Device)",
             "Optimizer.zero_grad#SGD.zero_grad", "optimizer.zero_grad#SGD",
             "aten::zero_", "aten::fill_", "aten::zero_s", "aten::fill_ é", "é aten::zero_", "aten::add"]
    masks = _masks(names)
    expected = {
        "dataloader_single": [ITERATOR_WORKERS.get(dataloader_iterator(n)) == "none" for n in names],
        "dataloader_multi": [ITERATOR_WORKERS.get(dataloader_iterator(n)) == "processes" for n in names],
        "pageable_h2d": [copy_source(n) == "pageable" for n in names],
        "zero_grad": [bool(TORCH_NAMES["zero_grad"].match(n)) for n in names],
        "zero_fill": [bool(TORCH_NAMES["zero_fill"].match(n)) for n in names],
    }
    assert {key: mask.tolist() for key, mask in masks.items()} == {
        key: mask + [False] for key, mask in expected.items()}
    assert [sum(v) for v in expected.values()] == [1, 1, 1, 1, 2]  # the list tries every mask both ways
