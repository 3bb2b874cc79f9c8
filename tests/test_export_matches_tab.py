"""The HTML export and the tab show a category in the same colour (frontend/src/categories.ts is the
tab's table; the export's table must agree with it entry by entry)."""

from __future__ import annotations

import re
from pathlib import Path

from tb_plugin_advisor.analysis.breakdown import CATEGORIES
from tb_plugin_advisor.views.render import CATEGORY_COLORS, render

CATEGORIES_TS = Path(__file__).resolve().parent.parent / "frontend" / "src" / "categories.ts"


def tab_colours() -> dict:
    text = CATEGORIES_TS.read_text(encoding="utf-8")
    rows = re.findall(r'\{ key: "(\w+)", label: "[^"]*", help: "[^"]*", light: "(#[0-9a-fA-F]{6})"', text)
    return {key: colour.lower() for key, colour in rows}


def test_every_breakdown_category_has_the_tabs_colour_in_the_export():
    tab = tab_colours()
    assert set(CATEGORIES) <= set(tab), "the tab's table lost a category"
    assert set(CATEGORY_COLORS) == set(CATEGORIES)
    for key in CATEGORIES:
        assert CATEGORY_COLORS[key].lower() == tab[key], key


def test_the_export_uses_those_colours():
    report = {"run": "r", "breakdown_ms": {k: 1.0 for k in CATEGORIES},
              "breakdown_pct": {k: 100 / len(CATEGORIES) for k in CATEGORIES}}  # fmt: skip
    page = render(report, "html").lower()
    for key in ("input", "device_compute", "host_compute"):
        assert CATEGORY_COLORS[key].lower() in page, key
