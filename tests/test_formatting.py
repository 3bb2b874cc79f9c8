"""The exports round like the tab: the same table of cases backs format.ts and formatting.py."""

import json
from pathlib import Path

import pytest

from tb_plugin_advisor.formatting import format_ms, format_number, format_pct

CASES = json.loads((Path(__file__).resolve().parents[1] / "frontend/test/format_cases.json").read_text())


@pytest.mark.parametrize("x, text", CASES["pct"])
def test_percent_as_the_tab_writes_it(x, text):
    assert format_pct(x) == text


@pytest.mark.parametrize("x, text", CASES["number"])
def test_number_as_the_tab_writes_it(x, text):
    assert format_number(x) == text


def test_missing_values_are_a_dash():
    assert format_pct(None) == format_pct(float("nan")) == format_ms(float("inf")) == "–"
    assert format_ms(200.4) == "200 ms"
