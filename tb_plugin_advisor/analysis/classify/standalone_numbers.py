"""Which name rules cannot tell apart two names that differ only in the values of standalone numbers.

XLA names its fusions `loop_add_fusion.117775`, PyTorch's templates carry `<4, float>`: a profile can
hold hundreds of thousands of kernel names that differ only in numbers standing alone, digit runs with
no ASCII letter on either side. A rule that reads the value of a digit (`fp16`, `s1688gemm`, `[1-9]`)
only where a letter touches the run that digit belongs to answers alike for all such names, so one of
them can be classified for all of them (kernel_batch.py).

This is decided from each rule's parsed form, conservatively: a part of a pattern that reads a digit's
value (a digit literal, a class holding some digits but not all, a back reference, any digit inside a
group whose text the rule reads) must have, on one side, a letter that every match puts next to it
with nothing but letters and digits between. Anything the walk cannot follow counts as reading the
numbers, and the names are then classified one by one, as before.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Iterable, List, Optional, Tuple

try:  # the regex parser the `re` module uses (public as sre_parse up to 3.10)
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre  # type: ignore[no-redef]

LETTER, DIGIT, OTHER = 1, 2, 4  # the kinds of ASCII character a part of a pattern may take
ANY_KIND = LETTER | DIGIT | OTHER
ALL_DIGITS = (1 << 10) - 1  # which of 0-9 a part may take, a bit each

_ATOMIC_GROUP = getattr(_sre, "ATOMIC_GROUP", None)  # `(?>…)`, Python 3.11+
_REPEATS = tuple(op for op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None))
                 if op is not None)
_ASSERTIONS = (_sre.ASSERT, _sre.ASSERT_NOT)
_CATEGORIES = {  # category: (digits it takes, kinds of ASCII character it takes)
    _sre.CATEGORY_DIGIT: (ALL_DIGITS, DIGIT),
    _sre.CATEGORY_NOT_DIGIT: (0, LETTER | OTHER),
    _sre.CATEGORY_SPACE: (0, OTHER),
    _sre.CATEGORY_NOT_SPACE: (ALL_DIGITS, ANY_KIND),
    _sre.CATEGORY_WORD: (ALL_DIGITS, ANY_KIND),  # `_` is a word character
    _sre.CATEGORY_NOT_WORD: (0, OTHER),
}


class _Unknown(Exception):
    """A part of a pattern this module does not follow: the pattern counts as reading numbers."""


def blind_to_standalone_numbers(regex: str, flags: int = 0, reads_groups: bool = False) -> bool:
    """Does every match of `regex` in an ASCII text stay a match, at the same place, when the digits of
    the text's standalone numbers change (their lengths kept)? `reads_groups`: the rule reads the text
    its groups matched (a precision read off the match), which must then stay the same too."""
    return _blind(regex, flags, reads_groups)


@cache
def _blind(regex: str, flags: int, reads_groups: bool) -> bool:
    try:
        items = list(_sre.parse(regex, flags))
        return _sequence_blind(items, [], reads_groups, in_read_group=False)
    except Exception:  # an unexpected parse tree (_Unknown among others): counted as reading numbers
        return False


# A place in the parse tree: the sequences from the outermost one in, each with the position of the
# part that holds the next (the last: the part looked at), and what holds the next sequence.
_Path = List[Tuple[list, int, Any]]


def _sequence_blind(items: list, outer: _Path, reads_groups: bool, in_read_group: bool) -> bool:
    for position, (op, value) in enumerate(items):
        path = outer + [(items, position, op)]
        if op in (_sre.GROUPREF, _sre.GROUPREF_EXISTS):
            return False  # a back reference compares texts, digits included
        inner = _inner(op, value)
        if inner is not None:  # a group, alternatives, a repeat or a lookaround: the parts inside it
            reading = in_read_group or (reads_groups and op is _sre.SUBPATTERN and value[0] is not None)
            if not all(_sequence_blind(sequence, path, reads_groups, reading) for sequence in inner):
                return False
        elif op is not _sre.AT:
            digits, _ = _single(op, value)
            reads_value = 0 < digits < ALL_DIGITS or (in_read_group and digits)
            if reads_value and not (_letter_beside(path, -1) or _letter_beside(path, 1)):
                return False
    return True


def _letter_beside(path: _Path, step: int) -> bool:
    """From the part at the end of `path`, walking left (-1) or right (1): does every match put a letter
    there, with only letters and digits between?"""
    for depth in range(len(path) - 1, -1, -1):
        items, position, _ = path[depth]
        at = position + step
        while 0 <= at < len(items):
            kinds, shortest = _kinds(*items[at])
            if kinds & OTHER:
                return False
            if kinds == LETTER and shortest >= 1:
                return True
            at += step
        if depth == 0:
            return False  # the pattern's edge: the text around it is anything
        outer_items, outer_position, holder = path[depth - 1]
        if holder in _ASSERTIONS:
            return False  # a lookaround's text lies around the match, not next to it
        if holder in _REPEATS:  # an earlier or later round of the same body may sit next to it
            kinds, _ = _kinds(*outer_items[outer_position])
            if kinds & OTHER:
                return False
    return False


def _kinds(op, value) -> Tuple[int, int]:
    """The kinds of ASCII character a part may take, and the fewest characters it takes."""
    if op in _ASSERTIONS or op is _sre.AT:
        return 0, 0
    if op is _sre.BRANCH:
        found = [_sequence_kinds(branch) for branch in _inner(op, value)]
        return _or(kinds for kinds, _ in found), min(shortest for _, shortest in found)
    if op in _REPEATS:
        low, high, body = value
        kinds, shortest = _sequence_kinds(list(body))
        return (kinds if high else 0), low * shortest
    inner = _inner(op, value)
    if inner is not None:  # a group
        return _sequence_kinds(inner[0])
    return _single(op, value)[1], 1


def _inner(op, value) -> Optional[List[list]]:
    """The sequences of parts inside a part: a group's (a capturing or plain group keeps them last, an
    atomic group is them), each alternative, a repeat's body, a lookaround's; None for a part of one
    character or an anchor."""
    if op is _sre.SUBPATTERN:
        return [list(value[-1])]
    if _ATOMIC_GROUP is not None and op is _ATOMIC_GROUP:
        return [list(value)]
    if op is _sre.BRANCH:
        return [list(branch) for branch in value[1]]
    if op in _REPEATS:
        return [list(value[2])]
    if op in _ASSERTIONS:
        return [list(value[1])]
    return None


def _sequence_kinds(items: list) -> Tuple[int, int]:
    found = [_kinds(op, value) for op, value in items]
    return _or(kinds for kinds, _ in found), sum(shortest for _, shortest in found)


def _or(values: Iterable[int]) -> int:
    total = 0
    for value in values:
        total |= value
    return total


def _single(op, value) -> Tuple[int, int]:
    """(which digits, which kinds of ASCII character) a one-character part takes."""
    if op is _sre.LITERAL:
        return _character(value)
    if op is _sre.NOT_LITERAL:
        return ALL_DIGITS & ~_character(value)[0], ANY_KIND
    if op is _sre.ANY:
        return ALL_DIGITS, ANY_KIND
    if op is _sre.IN:
        return _class(value)
    raise _Unknown(op)


def _character(code: int) -> Tuple[int, int]:
    if 48 <= code <= 57:
        return 1 << (code - 48), DIGIT
    if 65 <= code <= 90 or 97 <= code <= 122:
        return 0, LETTER
    if code < 128:
        return 0, OTHER
    return 0, ANY_KIND  # beyond ASCII: ignoring case, some match an ASCII letter (K, ſ)


def _class(items: list) -> Tuple[int, int]:
    digits, kinds, negated = 0, 0, False
    for op, value in items:
        if op is _sre.NEGATE:
            negated = True
        elif op is _sre.LITERAL:
            more_digits, more_kinds = _character(value)
            digits, kinds = digits | more_digits, kinds | more_kinds
        elif op is _sre.RANGE:
            low, high = value
            digits |= _or(1 << (code - 48) for code in range(max(low, 48), min(high, 57) + 1))
            kinds |= _or(_character(code)[1] for code in range(low, min(high, 127) + 1))
            if high >= 128:
                kinds = ANY_KIND
        elif op is _sre.CATEGORY and value in _CATEGORIES:
            more_digits, more_kinds = _CATEGORIES[value]
            digits, kinds = digits | more_digits, kinds | more_kinds
        else:
            raise _Unknown(op)
    if negated:
        return ALL_DIGITS & ~digits, ANY_KIND
    return digits, kinds
