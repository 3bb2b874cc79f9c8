"""Short names: the one function (analysis/classify/short_names.py) and the exports that show it, held
to the table the tab's tests read too (frontend/test/short_name_cases.json)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from paths import ROOT

from tb_plugin_advisor.analysis.classify import short_names
from tb_plugin_advisor.analysis.classify.short_names import SHORT_NAME_CHARS, elided, leading_name, short_name
from tb_plugin_advisor.views.export.render import render

CASES = json.loads((ROOT / "frontend" / "test" / "short_name_cases.json").read_text())["cases"]
MANGLED = [c for c in CASES if c["name"].startswith("_Z")]


@pytest.mark.parametrize("case", CASES, ids=[c["short"][:40] for c in CASES])
def test_the_short_name_of_each_case(case):
    assert short_name(case["name"]) == case["short"]


def test_the_table_has_a_raw_symbol_a_signature_an_op_path_and_a_generated_name():
    names = [c["name"] for c in CASES]
    assert MANGLED
    assert any(n.startswith("void ") for n in names)
    assert any("/" in n and "(" in n for n in names)  # an op path whose parentheses are its own
    assert any(len(n) > SHORT_NAME_CHARS and " " not in n and not n.startswith("_Z") for n in names)


def test_a_symbol_the_demangler_declines_keeps_the_name_it_opens_with():
    assert leading_name("_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernelEEEvNT_6ParamsE") == (
        "cutlass__5x_cudnn::Kernel")
    assert leading_name("_Zgarbage") == "_Zgarbage"  # nothing length-prefixed: the symbol as it is
    assert leading_name("_ZN99short") == "_ZN99short"  # a length past the end reads nothing


def test_without_a_demangler_a_raw_symbol_still_gets_its_leading_name(monkeypatch):
    monkeypatch.setattr(short_names, "demangler", lambda: None)
    short_name.cache_clear()
    try:
        for case in MANGLED:
            assert short_name(case["name"]) == case["short"]
    finally:
        short_name.cache_clear()


def test_a_demangled_name_is_never_demangled_again():
    assert short_names.demangled("void f<int>(int)") == "void f<int>(int)"


@pytest.mark.parametrize("limit", [20, 40, 60, 96])
def test_every_name_fits_its_limit_and_is_cut_between_parts(limit):
    for case in CASES:
        cut = elided(short_name(case["name"], 10**6), limit)
        assert len(cut) <= limit
        if cut != short_name(case["name"], 10**6):
            assert "…" in cut


def _report(rows):
    """A report with the cases as its top ops and its kernels (document.py reads what it is given)."""
    ops = [{"name": c["name"], "short_name": c["short"], "category": "device_compute", "time_ms": 1.0,
            "count": 1.0} for c in rows]
    kernels = [{"name": c["name"], "short_name": c["short"], "launches": 1, "total_ms": 1.0} for c in rows]
    return {"schema": "tb-advisor/report/1", "run": "r", "hosts": ["h"], "ops": ops,
            "kernel_stats": {"launches": len(rows), "distinct": len(rows), "kernels": kernels}}


def test_text_markdown_and_html_show_the_short_name_and_only_html_the_full_one_on_hover():
    # the text page clips longer names to its width; the Markdown lists its top rows
    rows = [c for c in CASES if len(c["short"]) <= 60][:8]
    report = _report(rows)
    text, markdown, page = render(report, "text"), render(report, "md"), render(report, "html")
    for case in rows:
        assert case["short"] in text, case["short"]
        assert case["short"].replace("<", "&lt;").replace(">", "&gt;") in page
        plain_md = re.sub(r"\\(.)", r"\1", markdown).replace("&lt;", "<").replace("&gt;", ">")
        assert case["short"] in plain_md
        if case["name"] != case["short"]:
            assert case["name"] not in text and case["name"] not in plain_md
    for case in rows:
        full = case["name"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert f'title="{full}"' in page.replace("&#x27;", "'").replace("&quot;", '"')


@pytest.mark.parametrize("first", range(0, len(CASES), 5))
def test_a_report_written_before_short_names_gets_the_same_ones(first):
    rows = CASES[first:first + 5]  # within the Markdown's top-ops rows
    report = _report(rows)
    for row in report["ops"] + report["kernel_stats"]["kernels"]:
        del row["short_name"]
    markdown = re.sub(r"\\(.)", r"\1", render(report, "md")).replace("&lt;", "<").replace("&gt;", ">")
    for case in rows:
        assert case["short"] in markdown


def test_the_demangler_is_loaded_at_the_first_raw_symbol_not_at_import():
    """cxxfilt runs `ldconfig -p` twice when imported: a profile without raw symbols never pays it."""
    code = ("import sys; from tb_plugin_advisor.analysis.classify.short_names import demangled; "
            "assert demangled('aten::mm') == 'aten::mm'; print('cxxfilt' in sys.modules, end=' '); "
            "demangled('_Z1fv'); print('cxxfilt' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
