"""Shell-glob matching of run names (`'resnet50_*'`, `'ctl[0-9]?'`), with fnmatch.fnmatchcase's meaning
and nothing kept between calls.

fnmatch compiles each distinct pattern into a regular expression and keeps it in a process-wide cache
of 32,768 entries: the trend route takes its pattern from the request, so 3,000 long patterns grew
TensorBoard by 169 MB. Here a pattern is parsed per call into tokens (a character, `?`, a class, `*`)
and matched segment by segment: the pieces between stars have a fixed length, so the leftmost place
each fits is the right one, and a piece of plain characters is found by str.find.

A class is fnmatch's own: the class alone (`[!a-z]`) goes through fnmatch.translate, which caches
nothing, and is compiled by `re`, whose cache is bounded (512 entries) and holds only these short
classes. So a class means exactly what fnmatch makes of it, quirks included (a reversed range `z-a`
holds nothing, and CPython reads a `!` that its removal leaves first as a negation), and a `[`
without its `]` is a plain character.
"""

from __future__ import annotations

import fnmatch
import re
from typing import List, Optional, Pattern, Tuple, Union

Class = Pattern[str]  # one class, compiled from fnmatch's translation of it alone
Token = Union[str, Class, None]  # a plain character, a class, or None for `?`
Piece = List[Token]  # the tokens between two stars: they match exactly len(piece) characters


def _class_at(pattern: str, start: int) -> Tuple[Optional[Class], int]:
    """The class whose `[` is at `start - 1` and the position after its `]`; (None, start) when the
    `[` has no `]` (then it is a plain character), as fnmatch.translate decides."""
    end = start
    if end < len(pattern) and pattern[end] == "!":
        end += 1
    if end < len(pattern) and pattern[end] == "]":
        end += 1
    end = pattern.find("]", end)
    if end < 0:
        return None, start
    return re.compile(fnmatch.translate(pattern[start - 1:end + 1])), end + 1


def _pieces(pattern: str) -> List[Piece]:
    """The pattern cut at its stars: `a*b?*[cd]` → [['a'], ['b', None], [class]]."""
    pieces: List[Piece] = [[]]
    at = 0
    while at < len(pattern):
        ch = pattern[at]
        at += 1
        if ch == "*":
            if pieces[-1] or len(pieces) == 1:  # a run of stars is one
                pieces.append([])
        elif ch == "?":
            pieces[-1].append(None)
        elif ch == "[":
            found, at = _class_at(pattern, at)
            pieces[-1].append(found if found is not None else "[")
        else:
            pieces[-1].append(ch)
    return pieces


def _matches(token: Token, ch: str) -> bool:
    if token is None:
        return True
    if isinstance(token, str):
        return token == ch
    return token.match(ch) is not None


def _fits(piece: Piece, name: str, at: int) -> bool:
    return all(_matches(token, name[at + i]) for i, token in enumerate(piece))


def _find(piece: Piece, name: str, start: int, stop: int) -> int:
    """The first position in [start, stop] where `piece` fits, else -1."""
    if all(isinstance(t, str) for t in piece):
        return name.find("".join(piece), start, stop + len(piece))  # type: ignore[arg-type]
    for at in range(start, stop + 1):
        if _fits(piece, name, at):
            return at
    return -1


def glob_match(name: str, pattern: str) -> bool:
    """Whether `name` matches the shell glob `pattern` (case-sensitive; `*` and `?` also match `/`)."""
    pieces = _pieces(pattern)
    first, last = pieces[0], pieces[-1]
    if len(pieces) == 1:
        return len(name) == len(first) and _fits(first, name, 0)
    if len(first) + len(last) > len(name) or not _fits(first, name, 0):
        return False
    end = len(name) - len(last)
    if not _fits(last, name, end):
        return False
    at = len(first)
    for piece in pieces[1:-1]:
        found = _find(piece, name, at, end - len(piece))
        if found < 0:
            return False
        at = found + len(piece)
    return True
