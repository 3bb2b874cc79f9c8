"""The CLI's indented JSON (views/export/json_text.py) is json.dumps(value, indent=…, allow_nan=False)
to the character, made faster."""

from __future__ import annotations

import json
import math

import pytest
from paths import ROOT

from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.runs import find_run, load_run
from tb_plugin_advisor.views.export.json_text import indented_json

AWKWARD = [
    {"empty list": [], "empty dict": {}, "nested": [{}, [[]], {"a": []}], "": ""},
    {"text": "é\u2028\x00\"\\/\t😀", "ключ": "значение", "float": 1.5e-300, "big": 2 ** 70, "neg": -0.0},
    {3: "int key", 2.5: "float key", True: "bool key", None: "null key"},
    [], {}, "a string", 7, 0.1, None, False, [None, True, [1, [2, []]]],
]


@pytest.mark.parametrize("indent", [1, 2])
@pytest.mark.parametrize("value", AWKWARD, ids=range(len(AWKWARD)))
def test_awkward_values_come_out_as_json_dumps_writes_them(value, indent):
    assert indented_json(value, indent) == json.dumps(value, indent=indent, allow_nan=False)


@pytest.mark.parametrize("indent", [1, 2])
def test_a_whole_report_comes_out_as_json_dumps_writes_it(indent):
    scan = scan_logdir(str(ROOT / "tb_plugin_advisor" / "sample_logdir"))
    runs = [s.run for s in scan.sessions if s.run.startswith("run3_mixed/")]
    report = build_report(load_run(find_run(scan, runs[0]))).to_json()
    text = indented_json(report, indent)
    assert len(text) > 50_000 and text == json.dumps(report, indent=indent, allow_nan=False)


@pytest.mark.parametrize("bad", [math.nan, math.inf, {"x": [-math.inf]}])
def test_a_number_json_cannot_hold_is_refused_as_json_dumps_refuses_it(bad):
    with pytest.raises(ValueError):
        indented_json(bad, 1)


def test_a_value_json_cannot_hold_is_a_type_error():
    with pytest.raises(TypeError):
        indented_json({"set": {1, 2}}, 1)
