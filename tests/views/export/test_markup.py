"""One escaper per markup (views/export/markup.py): profile strings stay data in HTML, Markdown and a
terminal, whichever export writes them."""

from __future__ import annotations

import re

import pytest
from paths import ROOT

from tb_plugin_advisor.views.export.markup import html_escape, markdown_escape, terminal_safe

PACKAGE = ROOT / "tb_plugin_advisor"


@pytest.mark.parametrize(
    "text, literal",
    [
        ("a|b*c_<x>&[y](z)`q`", "a\\|b\\*c\\_&lt;x&gt;&amp;\\[y\\]\\(z\\)\\`q\\`"),
        ("~~struck~~ #head +item !img {x}", "\\~\\~struck\\~\\~ \\#head \\+item \\!img \\{x\\}"),
        ("back\\slash\nnext line", "back\\\\slash next line"),
    ],
)
def test_markdown_escape_leaves_no_markup_and_one_line(text, literal):
    assert markdown_escape(text) == literal


def test_html_escape_covers_element_content_and_quoted_attributes():
    assert html_escape("<b a=\"1\" c='2'>&</b>") == "&lt;b a=&quot;1&quot; c=&#x27;2&#x27;&gt;&amp;&lt;/b&gt;"
    assert html_escape(12.5) == "12.5"


def test_terminal_controls_are_shown_not_obeyed():
    assert terminal_safe("op\x1b]8;;http://x\x07\u202eevil\tok\n") == "op\\x1b]8;;http://x\\x07\\u202eevil\tok\n"


def test_no_other_module_escapes_markup_itself():
    """A fix to an escaper must reach every export: html.escape and Markdown escaping live in
    markup.py only."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "markup.py":
            continue
        source = path.read_text(encoding="utf-8")
        if re.search(r"\bhtml\.escape\(|_MD_SPECIAL|\bdef (md|esc|_md|_e|\w*escape\w*)\(", source):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []
