"""report/document.py, the one reader of report JSON: each view is named after the type of
report/schema.py that describes the same object and reads only keys that type lists; whatever a
report holds (old, partial, hostile), reading it never raises and gives the field's default."""

from __future__ import annotations

import gzip
import inspect
import json
import math
from typing import Any, Dict, List, Type

import msgspec
import pytest
from paths import TESTS

from tb_plugin_advisor.report import document
from tb_plugin_advisor.report import schema as shape
from tb_plugin_advisor.report.document import Node, number, read_report

GOLDEN = TESTS / "golden"


def _views() -> List[Type[Node]]:
    return [c for _, c in inspect.getmembers(document, inspect.isclass)
            if issubclass(c, Node) and c is not Node and c.__module__ == document.__name__]


def _fields(view: Type[Node]) -> Dict[str, Any]:
    return {name: f for name, f in vars(view).items() if isinstance(f, document._Field)}


def _shape_of(view: Type[Node]) -> Any:
    return shape.Report if view is document.ReportDocument else getattr(shape, view.__name__)


@pytest.mark.parametrize("view", _views(), ids=lambda v: v.__name__)
def test_every_view_reads_only_keys_its_schema_type_lists(view):
    described = {f.encode_name for f in msgspec.structs.fields(_shape_of(view))}
    read = {f.key for f in _fields(view).values()}
    assert read and read <= described, read - described


HOSTILE: List[Any] = [None, "y", 0, True, [], [1, None, "x"], {"a": 1}, float("nan"), 10**400, -1e308]


@pytest.mark.parametrize("view", _views(), ids=lambda v: v.__name__)
@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_any_value_under_any_key_reads_without_raising(view, value):
    for raw in (value, {name: value for name in _fields(view)}):
        node = view(raw)
        for name in _fields(view):
            out = getattr(node, name)
            if isinstance(out, float):
                assert math.isfinite(out)


def test_numbers_are_finite_floats_or_none():
    assert number(2) == 2.0 and number("1.5") == 1.5
    for value in (True, None, "x", [], {}, float("inf"), float("nan"), 10**400):
        assert number(value) is None


def test_counts_stay_whole_numbers_and_text_stays_text():
    ks = document.KernelStats({"launches": 12, "distinct": 3.0, "kernels": [{"name": 5}, "x", {"name": "k"}]})
    assert ks.launches == 12 and isinstance(ks.launches, int) and ks.distinct == 3.0
    assert [k.name for k in ks.kernels] == ["5", "k"]  # entries that are not objects dropped


def test_an_empty_report_reads_as_defaults():
    report = read_report(None)
    assert report.run == "" and report.hosts == [] and report.steps.count is None
    assert report.steps.times == [] and not report.memory and report.memory.main is None
    assert report.breakdown_ms.at("input") is None and report.kernel_rows == []


def test_steady_steps_leave_warm_up_out_unless_every_step_is_warm_up():
    rows = [{"total_ms": 9, "warmup": True}, {"total_ms": 2}, {"total_ms": "x"}]
    steps = document.Steps({"per_step": rows})
    assert steps.times == [2.0]
    warm = document.Steps({"per_step": [{"total_ms": 9, "warmup": True}]})
    assert warm.times == [9.0]
    old = document.Steps({"times_ms": [1, "y", 3]})  # a report from before per-step rows
    assert old.times == [1.0, 3.0]


def test_kernel_rows_fall_back_to_the_tensor_core_list_of_older_reports():
    old = read_report({"tensor_cores": {"kernels": [{"name": "gemm", "time_ms": 2}, {"time_ms": 1}]}})
    assert [(k.name, k.category, k.time_ms) for k in old.kernel_rows] == [("gemm", "kernel", 2.0)]
    new = read_report({"kernels": [{"name": "k", "category": "device_compute"}], "tensor_cores": {
        "kernels": [{"name": "gemm"}]}})
    assert [(k.name, k.category) for k in new.kernel_rows] == [("k", "device_compute")]


def test_a_host_row_without_figures_reads_them_from_its_steps_and_breakdown():
    row = document.HostRow({"steps": {"mean_ms": 5}, "breakdown_pct": {"input": 7}})
    assert (row.step_ms, row.input_share_pct) == (5.0, 7.0)
    row = document.HostRow({"step_time_ms": 4, "input_pct": 1, "steps": {"mean_ms": 5}})
    assert (row.step_ms, row.input_share_pct) == (4.0, 1.0)


def test_written_values_are_the_report_s_own():
    raw = {"verdict": {"summary": "s", "extra": [1]}, "roofline": {"device": None}}
    report = read_report(raw)
    assert report.verdict.raw is raw["verdict"] and report.roofline.written("device") is None
    assert read_report(report) is report


def test_a_golden_report_reads_as_it_is_written():
    text = gzip.decompress((GOLDEN / "synthetic__report.pod.json.gz").read_bytes()).decode()
    raw = json.loads(text.split("\n--- exit")[0])
    report = read_report(raw)
    assert report.steps.count == raw["steps"]["count"] and report.hosts == raw["hosts"]
    assert [h.host for h in report.per_host] == [h["host"] for h in raw["per_host"]]
    assert report.kernel_stats.launches == raw["kernel_stats"]["launches"]
    assert report.breakdown_ms.items() == list(raw["breakdown_ms"].items())
