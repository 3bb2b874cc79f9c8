"""Literal prefilters for the name tables' regular expressions (issue 12: 100,000 distinct names).

Classifying a kernel name runs ~40 searches, most of which find nothing; each costs a scan of the
name by the regex engine (~1-7 µs). Nearly every pattern needs some plain text to match — `nccl`,
`gemm`, `tf32` … — and looking for plain text is cheap. So for each pattern the literals one of
which every match must contain are read off its parsed form, and the regex runs only on names that
hold one (found by one search for any of them over the lowercased name; a whole table is skipped
when the name holds none of its literals). Patterns that need no literal (or cannot be analysed)
always run, and so does every pattern on a name that is not ASCII (case folding beyond ASCII is
not lowercasing), so the prefilter never changes a result: tests/test_prefilter.py checks that.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Dict, FrozenSet, Iterable, NamedTuple, Optional, Sequence, Tuple

try:  # the regex parser the `re` module uses (public as sre_parse up to 3.10)
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre  # type: ignore[no-redef]

_MIN_LITERAL = 2  # shorter required text filters too little to be worth a test


@cache
def required_literals(regex: str, flags: int = 0) -> Optional[FrozenSet[str]]:
    """Lowercase strings one of which every match of `regex` contains, or None if none is known."""
    try:
        parsed = _sre.parse(regex, flags)
        found = _sequence(list(parsed))
    except Exception:  # an unexpected parse tree: no prefilter, the regex always runs
        return None
    return frozenset(found) if found else None


def _sequence(items: list) -> Optional[FrozenSet[str]]:
    """The best requirement among the items of a sequence (each item must match, in order)."""
    best: Optional[FrozenSet[str]] = None
    run: list = []

    def consider(option: Optional[FrozenSet[str]]) -> None:
        nonlocal best
        if option and (best is None or _strength(option) > _strength(best)):
            best = option

    for op, value in items:
        if op is _sre.LITERAL and value < 128:
            run.append(chr(value).lower())
            continue
        if len(run) >= _MIN_LITERAL:
            consider(frozenset({"".join(run)}))
        run = []
        consider(_item(op, value))
    if len(run) >= _MIN_LITERAL:
        consider(frozenset({"".join(run)}))
    return best


def _item(op, value) -> Optional[FrozenSet[str]]:
    if op is _sre.SUBPATTERN:
        return _sequence(list(value[-1]))
    if op is _sre.BRANCH:
        return _union(_sequence(list(branch)) for branch in value[1])
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
        low, _, body = value
        return _sequence(list(body)) if low >= 1 else None
    return None  # classes, anchors, lookarounds, backreferences: no text they must contain


def _union(options: Iterable[Optional[FrozenSet[str]]]) -> Optional[FrozenSet[str]]:
    """A branch matches through one of its alternatives: every alternative needs a requirement."""
    found: set = set()
    for option in options:
        if not option:
            return None
        found |= option
    return frozenset(found)


def _strength(option: FrozenSet[str]) -> float:
    """Fewer and longer literals reject more names per test."""
    return min(len(text) for text in option) / len(option)


class TableFilter(NamedTuple):
    """A table's prefilter: the literals each entry needs, and those of the whole table."""

    entries: Tuple[Optional[Tuple[str, ...]], ...]  # None: the entry always runs
    table: Optional[Tuple[str, ...]]  # none of these in a name: no entry can match (None: not known)


_TABLES: Dict[int, TableFilter] = {}  # by id() of a module-level table


def table_filter(table: Sequence[Any]) -> TableFilter:
    """The prefilter of a pattern table (entries with `.regex` and maybe `.flags`), built once."""
    found = _TABLES.get(id(table))
    if found is None or len(found.entries) != len(table):
        literals = [required_literals(entry.regex, getattr(entry, "flags", 0)) for entry in table]
        entries = tuple(_ordered(lit) if lit else None for lit in literals)
        every = None if any(lit is None for lit in literals) else _ordered(frozenset().union(*literals))
        found = _TABLES[id(table)] = TableFilter(entries, every)
    return found


def _ordered(literals: FrozenSet[str]) -> Tuple[str, ...]:
    return tuple(sorted(literals, key=lambda text: (len(text), text)))


def holds(lowered: str, literals: Tuple[str, ...]) -> bool:
    """Does the text hold one of the literals? (`in` tests in a plain loop: ~50 ns each.)"""
    for text in literals:  # noqa: SIM110 (a generator in any() costs more than the tests)
        if text in lowered:
            return True
    return False
