"""The step-time categories read the same everywhere: the tab's table (frontend/src/categories.ts)
holds exactly the Python table's keys, order, labels, help texts and colours, and every sentence and
export takes its words from that one table."""

from __future__ import annotations

import re

from paths import ROOT

from tb_plugin_advisor.analysis.step_time.breakdown import PRIORITY
from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES, DISPLAY_ORDER, TABLE, in_words

TS = (ROOT / "frontend" / "src" / "categories.ts").read_text(encoding="utf-8")
ENTRY = re.compile(
    r'\{ key: "(?P<key>\w+)", label: "(?P<label>[^"]+)", help: "(?P<help>[^"]+)", '
    r'light: "(?P<light>#[0-9a-f]{6})", dark: "(?P<dark>#[0-9a-f]{6})" \}'
)


def _ts_table(name: str):
    block = re.search(rf"export const {name}: readonly CategoryInfo\[\] = \[(.*?)\n\];", TS, re.S)
    assert block, f"{name} not found in categories.ts"
    return [m.groupdict() for m in ENTRY.finditer(block.group(1))]


def test_the_tab_holds_the_python_table_word_for_word():
    python = [{"key": c.key, "label": c.label, "help": c.help, "light": c.light, "dark": c.dark}
              for c in TABLE]
    assert _ts_table("CATEGORIES") == python


def test_every_category_is_claimed_or_idle_and_displayed_once():
    assert sorted(CATEGORIES) == sorted(set(PRIORITY) | {"idle"})
    assert sorted(DISPLAY_ORDER) == sorted(CATEGORIES) and DISPLAY_ORDER[-1] == "idle"


def test_sentences_use_the_label_in_lower_case():
    assert in_words("memcpy") == "memory copies"
    assert in_words("other") == "other host work"
    assert in_words("input_pipeline") == "input pipeline"  # an op-table key outside the table


def test_no_module_keeps_its_own_category_words():
    """The words live in categories.py only: no other table maps the keys to labels."""
    package = ROOT / "tb_plugin_advisor"
    own = re.compile(r'"device_compute"\s*[:,]\s*"[Dd]evice compute"')
    offenders = [str(p.relative_to(package)) for p in package.rglob("*.py")
                 if p.name != "categories.py" and own.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
