"""Terminal-safe text: profile strings (op, run, host, kernel names) are data, never escape codes.

A profile is written by someone else's program; a name such as "\\x1b]8;;http://evil\\x07op" would
otherwise become a hyperlink, clear the screen or reorder a line (bidi overrides) when `tb-advisor`
prints it. `terminal_safe` is the one place where text and markdown output are neutralised: every
control character except newline and tab is shown as a visible escape (`\\x1b`, `\\u202e`), so the
name stays readable and diffable. JSON keeps the exact strings; HTML is escaped by its renderer.
"""

from __future__ import annotations

import re

# C0 controls except \t and \n, DEL, C1 controls, bidi embeddings/overrides/isolates, the Unicode
# line/paragraph separators (they break lines like \n), and the byte-order mark used as a joiner.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every unsafe control character replaced by its visible escape."""
    return _UNSAFE.sub(_escape, text)


def terminal_output(text: str) -> str:
    """A whole text/markdown document for a terminal or file: neutralised, ending in one newline."""
    safe = terminal_safe(text)
    return safe if safe.endswith("\n") else safe + "\n"
