"""The exports round like the tab: the same table of cases backs format.ts and formatting.py."""

import ast
import json
import math
import re
from typing import List

import pytest
from paths import ROOT

from tb_plugin_advisor.formatting import (
    fixed,
    format_bytes,
    format_elapsed,
    format_memory,
    format_ms,
    format_number,
    format_pct,
    plain,
    rounded,
    scientific,
    signed,
    significant,
    trace_micros,
)

CASES = json.loads((ROOT / "frontend/test/format_cases.json").read_text())


@pytest.mark.parametrize("x, text", CASES["pct"])
def test_percent_as_the_tab_writes_it(x, text):
    assert format_pct(x) == text


@pytest.mark.parametrize("x, text", CASES["number"])
def test_number_as_the_tab_writes_it(x, text):
    assert format_number(x) == text


@pytest.mark.parametrize("ms, text", CASES["elapsed"])
def test_elapsed_time_as_the_tab_writes_it(ms, text):
    assert format_elapsed(ms) == text


def test_missing_values_are_a_dash():
    assert format_pct(None) == format_pct(float("nan")) == format_ms(float("inf")) == "–"
    assert format_ms(200.4) == "200 ms"


@pytest.mark.parametrize(
    "x, digits, text",
    [(12.5, 0, "13"), (0.125, 2, "0.13"), (2.675, 2, "2.67"), (-0.04, 1, "-0.0"), (1424.5, 0, "1425")],
)
def test_fixed_rounds_the_exact_value_half_up_like_tofixed(x, digits, text):
    """2.675 is 2.67499… in binary, so it rounds down; 12.5 and 0.125 are exact halves and round up
    (Python's format() would give 12 and 0.12)."""
    assert fixed(x, digits) == text


@pytest.mark.parametrize("x, digits, text", [(12.5, 1, "+12.5"), (-3.25, 1, "-3.3"), (0.0, 1, "+0.0")])
def test_signed_always_writes_the_sign(x, digits, text):
    assert signed(x, digits) == text


@pytest.mark.parametrize(
    "x, text", [(0.000125, "0.00013"), (0.0125, "0.013"), (9.96, "10"), (0.5, "0.5"), (123456.0, "1.2e+05")]
)
def test_two_significant_digits_round_halves_up(x, text):
    assert significant(x, 2) == text


@pytest.mark.parametrize("x, text", [(1.25e-05, "1.3e-05"), (0.00012, "1.2e-04"), (0.0, "0.0e+00")])
def test_scientific_rounds_halves_up(x, text):
    assert scientific(x, 1) == text


@pytest.mark.parametrize(
    "x, digits, text",
    [(512, 1, "512 B"), (4224, 2, "4.13 KiB"), (1.5 * 2**30, 1, "1.5 GiB"), (3 * 2**40, 1, "3.0 TiB"),
     (None, 1, "–"), (float("nan"), 2, "–")],
)
def test_sizes_in_binary_units(x, digits, text):
    assert format_bytes(x, digits) == text


@pytest.mark.parametrize(
    "x, text",
    [(2**30, "1.00 GiB"), (1.5 * 2**40, "1536.00 GiB"), (2**30 - 1, "1024.0 MiB"), (512 * 1024, "0.5 MiB"),
     (0, "0.0 MiB"), (None, "–"), (float("inf"), "–")],
)
def test_memory_sizes_of_the_findings_in_gib_or_mib(x, text):
    assert format_memory(x) == text


def test_plain_writes_counts_and_constants_without_noise():
    assert (plain(3.0), plain(0.05), plain(12.0)) == ("3", "0.05", "12")


HOSTILE = [2**41 * 1e35, 4.2e47, 1e21, -1e21, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324,
           -5e-324, 1e-300, float("nan"), float("inf"), float("-inf"), 10**400, -(10**400), 2**1024 - 1]


@pytest.mark.parametrize("x", HOSTILE, ids=repr)
def test_no_formatter_raises_on_a_huge_tiny_or_non_finite_value(x):
    """A profile can hold any number (a shape of 2^41 gave an MFU of 1e47 %, and the exports died in
    decimal.quantize); every function a person's text goes through answers something."""
    texts = [format_pct(x), format_number(x), format_ms(x), format_bytes(x), format_memory(x), plain(x),
             trace_micros(x)]
    texts += [fixed(x, d) for d in (0, 1, 3)] + [signed(x, 1), significant(x, 2), scientific(x, 1)]
    assert all(isinstance(t, str) and t for t in texts)
    assert rounded(x) is None or math.isfinite(rounded(x))


def test_huge_values_are_written_as_tofixed_writes_them():
    assert fixed(4.2e47, 1) == "4.2e+47" and fixed(-1e21, 0) == "-1e+21"
    assert fixed(float("nan"), 1) == "NaN" and fixed(float("-inf"), 1) == "-Infinity"
    assert fixed(10**400, 0) == "Infinity"  # past the float range, as JavaScript would read it
    assert format_number(1.5e300) == "1.5e+300"  # the exponent's zeros are not decimals to trim
    assert format_pct(10**400) == format_number(float("nan")) == "–"
    assert significant(1.7976931348623157e308, 2) == "1.8e+308"  # rounding up past the largest float
    assert rounded(float("inf")) is None and rounded(10**400) is None and rounded(2.5e300) == 2.5e300


NUMBER_SPEC = re.compile(r"[,_]|[eEfFgGn%]$")  # a float presentation type or thousands grouping
PERCENT_SPEC = re.compile(r"%[-+ 0#]*\d*(\.\d+)?[dieEfFgG]")  # "%.2f" % x
PACKAGE = ROOT / "tb_plugin_advisor"


def _percent_spec(node: ast.AST) -> bool:
    text = node.value if isinstance(node, ast.Constant) else None
    return isinstance(text, str) and bool(PERCENT_SPEC.search(text))


def _number_formats(source: str) -> List[str]:
    """Every place in `source` that writes a number itself: an f-string or format() spec with a float
    type or grouping ("{x:.1f}", "{n:,}"), or %-formatting of a number ("%.2f" % x)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            spec = "".join(str(v.value) for v in node.format_spec.values if isinstance(v, ast.Constant))
            if NUMBER_SPEC.search(spec):
                found.append(f"line {node.lineno}: {{…:{spec}}}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "format" and len(node.args) == 2:
            found.append(f"line {node.lineno}: format(…)")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _percent_spec(node.left):
            found.append(f"line {node.lineno}: '…' % …")
    return found


def test_no_number_is_written_outside_formatting():
    """Every number a person reads goes through formatting.py (half up, as the tab's toFixed)."""
    found = {str(path.relative_to(PACKAGE)): _number_formats(path.read_text(encoding="utf-8"))
             for path in PACKAGE.rglob("*.py") if path.name != "formatting.py"}
    assert {path: where for path, where in found.items() if where} == {}


def test_the_scan_sees_each_way_of_writing_a_number():
    source = 'a = f"{x:.1f} ms"\nb = f"{n:,}"\nc = "%.2f" % x\nd = format(x, "g")\ne = f"{s:<12} {t:>{w}}"\n'
    lines = sorted(where.split(":")[0] for where in _number_formats(source))
    assert lines == ["line 1", "line 2", "line 3", "line 4"]  # widths and alignment are no number
