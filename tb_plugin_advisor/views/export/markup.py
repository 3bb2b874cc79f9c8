"""Profile strings as data in every markup the Advisor writes: one escaper per markup.

A profile is written by someone else's program; an op, run, host or kernel name is data and must
never become markup. HTML: `<`, `>`, `&` and quotes become entities. Markdown: the same entities (a
renderer would take raw HTML), then every character that could start emphasis, code, a link, an
image, a heading, a list or strikethrough, or end a table cell, backslash-escaped; newlines become
spaces so that a name stays on its table row. Terminal (text and Markdown printed or saved): every
control character except newline and tab is shown as a visible escape (`\\x1b`, `\\u202e`), so a name
such as "\\x1b]8;;http://evil\\x07op" cannot become a hyperlink, clear the screen or reorder a line
(bidi overrides), and stays readable and diffable; the newlines of a profile's strings are shown as
`\\n` too (`terminal_data`, before the page is laid out), so a name cannot forge a line of output.
JSON keeps the exact strings.
"""

from __future__ import annotations

import html
import re
from typing import Any, FrozenSet

# Characters that mean something in CommonMark or GitHub-flavoured Markdown where a name may sit.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")

# C0 controls except \t and \n, DEL, C1 controls, bidi embeddings/overrides/isolates, the Unicode
# line/paragraph separators (they break lines like \n), and the byte-order mark used as a joiner.
_TERMINAL_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)


def html_escape(value: Any) -> str:
    """Text for HTML element content or a quoted attribute value."""
    return html.escape(str(value), quote=True)


def markdown_escape(value: Any) -> str:
    """Text as literal Markdown: no HTML, no emphasis, no links, no table breaks, one line."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(value), quote=False)).replace("\n", " ")


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every unsafe control character replaced by its visible escape."""
    return _TERMINAL_UNSAFE.sub(_visible, text)


def terminal_output(text: str) -> str:
    """A whole text/markdown document for a terminal or file: neutralised, ending in one newline."""
    safe = terminal_safe(text)
    return safe if safe.endswith("\n") else safe + "\n"


# Report fields whose newlines are ours: code snippets, printed as indented lines.
MULTILINE_FIELDS: FrozenSet[str] = frozenset({"snippet", "snippet_jax"})


def terminal_line(text: str) -> str:
    """One value on one terminal line: unsafe controls and newlines shown as escapes."""
    return terminal_safe(text.replace("\n", "\\n"))


def terminal_data(value: Any, key: str = "") -> Any:
    """A report or diff (JSON-shaped data) for a text page: every string's newline shown as `\\n`,
    except in MULTILINE_FIELDS, so that a profile's names and the sentences quoting them stay on
    their line. The other controls are left to `terminal_output`, which sees the whole page."""
    if isinstance(value, str):
        return value if key in MULTILINE_FIELDS or "\n" not in value else value.replace("\n", "\\n")
    if isinstance(value, dict):
        return {k: terminal_data(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [terminal_data(v, key) for v in value]
    return value
