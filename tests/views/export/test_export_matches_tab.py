"""The HTML export and the tab show a category in the same colour (frontend/src/categories.ts is the
tab's table; the export's table must agree with it entry by entry)."""

from __future__ import annotations

import re

from paths import ROOT, SAMPLE_LOGDIR

from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES, COLORS, LABELS
from tb_plugin_advisor.views.export.render import render

CATEGORIES_TS = ROOT / "frontend" / "src" / "categories.ts"


def tab_colours() -> dict:
    text = CATEGORIES_TS.read_text(encoding="utf-8")
    rows = re.findall(r'\{ key: "(\w+)", label: "[^"]*", help: "[^"]*", light: "(#[0-9a-fA-F]{6})"', text)
    return {key: colour.lower() for key, colour in rows}


def test_every_breakdown_category_has_the_tabs_colour_in_the_export():
    tab = tab_colours()
    assert set(CATEGORIES) <= set(tab), "the tab's table lost a category"
    assert set(COLORS) == set(CATEGORIES)
    for key in CATEGORIES:
        assert COLORS[key].lower() == tab[key], key


def test_the_export_uses_those_colours():
    report = {"run": "r", "breakdown_ms": {k: 1.0 for k in CATEGORIES},
              "breakdown_pct": {k: 100 / len(CATEGORIES) for k in CATEGORIES}}  # fmt: skip
    page = render(report, "html").lower()
    for key in ("input", "device_compute", "host_compute"):
        assert COLORS[key].lower() in page, key


def test_the_verdicts_numbers_are_the_breakdown_tables_numbers_on_the_demo():
    """One number everywhere: every percent in a demo run's verdict is a row of its breakdown table,
    written the same way in the HTML, Markdown and text exports (and by the tab: format_cases.json)."""
    from html_pages import outside_scripts

    from tb_plugin_advisor.formatting import format_pct
    from tb_plugin_advisor.report.run import build_report
    from tb_plugin_advisor.sources.discovery import scan_logdir
    from tb_plugin_advisor.sources.runs import load_run

    demo = SAMPLE_LOGDIR
    for session in scan_logdir(str(demo)).sessions:
        report = build_report(load_run(session)).to_json()
        rows = {key: format_pct(value) for key, value in report["breakdown_pct"].items()}
        quoted = re.findall(r"(\d+(?:\.\d)?) %", report["verdict"]["summary"])
        assert quoted and {f"{q} %" for q in quoted} <= set(rows.values()), (session.run, quoted, rows)
        page = outside_scripts(render(report, "html"))
        markdown, text = render(report, "md"), render(report, "text")
        for key, shown in rows.items():
            assert f'<td class="n">{shown}</td>' in page, (session.run, key, shown)
            assert f"| {shown} |" in markdown, (session.run, key, shown)
            # The text's bar chart leaves out a category with no time at all (a single GPU's communication).
            if report["breakdown_ms"][key] > 0:
                assert f" {shown} " in text, (session.run, key, shown)
            else:
                assert not re.search(rf"^  {LABELS[key]} ", text, re.M), (session.run, key)


def test_the_exports_list_every_breakdown_category_once():
    from tb_plugin_advisor.analysis.step_time.categories import DISPLAY_ORDER

    assert sorted(DISPLAY_ORDER) == sorted(CATEGORIES) and DISPLAY_ORDER[-1] == "idle"


def test_the_tab_says_every_step_source_in_words():
    """The tab's step line (frontend/src/verdict.ts STEP_SOURCES) has words for every step source the
    reports write, so it never shows a key such as `profiler_step`."""
    from tb_plugin_advisor.analysis.step_time.steps import STEP_SOURCE_WORDS

    source = (ROOT / "frontend" / "src" / "verdict.ts").read_text()
    table = source[source.index("export const STEP_SOURCES"):]
    table = table[: table.index("};")]
    for key in STEP_SOURCE_WORDS:
        assert re.search(rf"^\s*{key}: \"", table, re.M), key
