"""Literal prefilters for the name tables' regular expressions (100,000 distinct names).

Classifying a kernel name runs ~40 searches, most of which find nothing; each costs a scan of the
name by the regex engine (~1-7 µs). Nearly every pattern needs some plain text to match — `nccl`,
`gemm`, `tf32` … — and looking for plain text is cheap. So for each pattern the literals one of
which every match must contain are read off its parsed form, and the regex runs only on names that
hold one (found by one search for any of them over the lowercased name; a whole table is skipped
when the name holds none of its literals). Patterns that need no literal (or cannot be analysed)
always run, and so does every pattern on a name that is not ASCII (case folding beyond ASCII is
not lowercasing), so the prefilter never changes a result: tests/analysis/classify/test_prefilter.py checks
that.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import count as positions_from
from itertools import repeat
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.lookup import row_chunks

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


@cache
def literal_alternatives(regex: str, flags: int = 0) -> Optional[FrozenSet[str]]:
    """The lowercase literals when `regex` is nothing but plain ASCII text or alternatives of it
    (`xmma`, `tf32|tfloat32`) matched ignoring case: it then matches an ASCII text exactly when the
    lowercased text holds one of them, and a batch's literal scan is its answer (None: any other
    pattern)."""
    if not flags & re.IGNORECASE:
        return None
    try:
        items = list(_sre.parse(regex, flags))
    except Exception:  # an unexpected parse tree: the regex always runs
        return None
    branches = [list(branch) for branch in items[0][1][1]] if (
        len(items) == 1 and items[0][0] is _sre.BRANCH) else [items]
    found = set()
    for branch in branches:
        if not branch or any(op is not _sre.LITERAL or value >= 128 for op, value in branch):
            return None
        found.add("".join(chr(value) for _, value in branch).lower())
    return frozenset(found)


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


_TABLES: Dict[Tuple[Tuple[str, int], ...], TableFilter] = {}  # by the patterns themselves
# The tables last asked for, by id(), each held so that its id stays its own: a table made for one call
# (a subset of a module-level one) is freed after it, and a later table can get its id (a filter found
# by id alone then answered for the wrong patterns). Cleared when full: a dict lookup per call stays.
_BY_ID: Dict[int, Tuple[Sequence[Any], TableFilter]] = {}
_BY_ID_KEPT = 256


def table_filter(table: Sequence[Any]) -> TableFilter:
    """The prefilter of a pattern table (entries with `.regex` and maybe `.flags`), built once per
    distinct table."""
    known = _BY_ID.get(id(table))
    if known is not None and known[0] is table and len(known[1].entries) == len(table):
        return known[1]
    key = tuple((entry.regex, getattr(entry, "flags", 0)) for entry in table)
    found = _TABLES.get(key)
    if found is None:
        literals = [required_literals(entry.regex, getattr(entry, "flags", 0)) for entry in table]
        entries = tuple(_ordered(lit) if lit else None for lit in literals)
        every = None if any(lit is None for lit in literals) else _ordered(frozenset().union(*literals))
        found = _TABLES[key] = TableFilter(entries, every)
    if len(_BY_ID) >= _BY_ID_KEPT:
        _BY_ID.clear()
    _BY_ID[id(table)] = (table, found)
    return found


def _ordered(literals: FrozenSet[str]) -> Tuple[str, ...]:
    return tuple(sorted(literals, key=lambda text: (len(text), text)))


def holds(lowered: str, literals: Tuple[str, ...]) -> bool:
    """Does the text hold one of the literals? (`in` tests in a plain loop: ~50 ns each.)"""
    for text in literals:  # noqa: SIM110 (a generator in any() costs more than the tests)
        if text in lowered:
            return True
    return False


# ---------------------------------------------------------------------------------------------------
# Many names at once: the per-name filter above is a Python loop of ~40 `in` tests per name;
# over a whole plane's names, each literal is instead found by one scan of all the names joined, and
# each pattern then searches only the names that hold one of its literals.

_SEPARATOR = "\n"  # no literal of the tables holds it, so no occurrence spans two names


class TextBatch:
    """Texts searched together: which of them hold a literal, by one scan of them all joined.

    Names that differ only in their numbers (`loop_add_fusion_17`, `…_18`; template arguments, tile
    sizes) are many: a literal without digits is looked for once per distinct name with every digit
    read as 0 (`digit_folds`), which finds it exactly where the names themselves hold it. Such a
    batch keeps no joined copy of its texts: a question the folds cannot answer joins them again, a
    block at a time.
    """

    def __init__(self, texts: Sequence[str], fold_digits: bool = True) -> None:
        # a list is kept as given (a plane's names, or a cut list made for the batch): a copy of a
        # million names' list was 8 MB
        self.texts = texts if isinstance(texts, list) else list(texts)
        count = len(self.texts)
        # The texts lowercased and joined, a block of _BLOCK_TEXTS texts at a time (one string for
        # them all, joined then lowercased, was twice the names' text at once: 380 MB for a million
        # 200-character names, the report's peak). Lowercasing keeps an ASCII text's length, so
        # offsets stay valid; a text that is not ASCII is joined as "" and runs every pattern.
        # The digit folds are made in the same pass; where they hold, the blocks are not kept (most
        # questions are then answered by the folds, the rest by the blocks made again one at a time).
        blocks: List[str] = []
        unfiltered: List[np.ndarray] = []
        lengths = np.empty(count, dtype=np.int64)
        folding = _Folding(count) if fold_digits else None
        for low, block, parts, flags in _joined_blocks(self.texts):
            unfiltered.append(flags)
            lengths[low:low + len(parts)] = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
            if folding is not None and not folding.add(low, len(parts), block):
                folding = None  # no folds: every block is kept, the ones passed made again
                blocks = [joined for _, joined, _, _ in _joined_blocks(self.texts[:low])]
            if folding is None:
                blocks.append(block)
        self._blocks: Optional[List[str]] = None if folding is not None else blocks
        # distinct folded texts, and which one each text is
        self._folds = None if folding is None else folding.result()
        self.unfiltered = np.concatenate(unfiltered) if unfiltered else np.zeros(0, dtype=bool)
        # where each text starts in the blocks joined by the separator (the "joined" positions);
        # int32 while the joined text allows (a million names: 4 MB less); positions looked up in it
        # are cast alike (a search of int64 positions would copy the starts to int64 each time)
        length = int(lengths.sum()) + max(0, count - 1)
        offsets = np.int64 if length >= 1 << 31 else np.int32
        self._starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(offsets)
        del lengths
        # per literal, which texts hold it, as packed bits: ~150 literals over a million names are
        # 150 MB as bool arrays and 19 MB packed; unpacking one costs well under a millisecond. A
        # literal no text holds (most of them, for most names) is kept as _HELD_BY_NONE, no bits.
        self._holding: Dict[str, np.ndarray] = {}
        self._starting: Dict[str, bool] = {}  # any_starting's answers

    def _block_starts(self) -> Iterator[Tuple[int, str]]:
        """(joined position of its first character, block) of each block; where the batch keeps no
        blocks (its digit folds hold), each made again, one at a time."""
        if self._blocks is not None:
            blocks: Iterable[str] = self._blocks
        else:
            blocks = (block for _, block, _, _ in _joined_blocks(self.texts))
        for k, block in enumerate(blocks):
            yield int(self._starts[k * _BLOCK_TEXTS]), block

    def __len__(self) -> int:
        return len(self.texts)

    def any_starting(self, prefix: str) -> bool:
        """Does any text start with `prefix`? (One scan of the joined texts when the prefix has no
        letters, which lowercasing would not change; asked again, the answer kept.)"""
        found = self._starting.get(prefix)
        if found is None:
            found = self._starting[prefix] = self._any_starting(prefix)
        return found

    def _any_starting(self, prefix: str) -> bool:
        folds = self._folds
        if (not prefix or prefix.lower() != prefix.upper() or _SEPARATOR in prefix
                or (folds is not None and any(ch in _DIGITS for ch in prefix))):
            return any(map(str.startswith, self.texts, repeat(prefix)))
        # A prefix without letters starts an ASCII text exactly where it starts the text as joined
        # (lowercased), and one without digits too where it starts its fold (digits read as 0): the
        # distinct folds answer where the batch has them, else one scan of the joined texts. The
        # texts that are not ASCII (joined and folded as "") are tried themselves.
        if folds[0].any_starting(prefix) if folds is not None else self._joined_starting(prefix):
            return True
        return any(self.texts[i].startswith(prefix) for i in np.flatnonzero(self.unfiltered).tolist())

    def _joined_starting(self, prefix: str) -> bool:
        """Does a text start with `prefix` in the joined blocks (at a block's start, or after a separator
        where a text starts, not after one a text holds)?"""
        for base, block in self._block_starts():
            if block.startswith(prefix):
                return True
            if _SEPARATOR + prefix in block:
                after = base + 1 + _occurrences(block, _SEPARATOR + prefix)
                at = np.minimum(np.searchsorted(self._starts, after), len(self._starts) - 1)
                if (self._starts[at] == after).any():
                    return True
        return False

    def holding(self, literals: Optional[Tuple[str, ...]]) -> np.ndarray:
        """Which texts may match a pattern that needs one of `literals` (None: every text)."""
        if literals is None:
            return np.ones(len(self.texts), dtype=bool)
        found = self.unfiltered.copy()
        for literal in literals:
            found |= self._holding_one(literal)
        return found

    def _holding_one(self, literal: str) -> np.ndarray:
        packed = self._holding.get(literal)
        if packed is _HELD_BY_NONE:
            return np.zeros(len(self.texts), dtype=bool)
        if packed is not None:
            return np.unpackbits(packed, count=len(self.texts)).view(bool)
        folded = self.digit_folds()
        digits = any(ch.isdigit() for ch in literal)
        if _SEPARATOR in literal:
            found = np.ones(len(self.texts), dtype=bool)
        elif folded is not None and not digits:
            distinct, fold_of = folded
            among = distinct._holding_one(literal)
            # (held by no folded text, the usual case for most literals: no gather over every text)
            found = among[fold_of] if among.any() else np.zeros(len(self.texts), dtype=bool)
        else:
            found = self._holding_digits(literal, folded) if folded is not None else None
            if found is None:
                found = np.zeros(len(self.texts), dtype=bool)
                for base, block in self._block_starts():
                    self._mark_texts(found, base + _occurrences(block, literal))
        self._holding[literal] = np.packbits(found) if found.any() else _HELD_BY_NONE
        return found

    def found_by(self, pattern: re.Pattern) -> np.ndarray:
        """Which texts `pattern` finds something in, by one scan of the texts lowercased and joined: a
        pattern that reads lowercase text and cannot match across a newline. A text that is not ASCII
        is never found."""
        found = np.zeros(len(self.texts), dtype=bool)
        for base, block in self._block_starts():
            self._mark_texts(found, base + np.fromiter((match.start() for match in pattern.finditer(block)),
                                                       dtype=np.int64))
        return found

    def _mark_texts(self, found: np.ndarray, at: np.ndarray) -> None:
        """Set `found` for the texts that hold the positions `at` of the joined texts."""
        if at.size:
            found[np.searchsorted(self._starts, at.astype(self._starts.dtype), side="right") - 1] = True

    def _holding_digits(self, literal: str, folded: Tuple[TextBatch, np.ndarray]) -> Optional[np.ndarray]:
        """A literal with digits (`bf16`, `1688`): a text that holds it holds it with digits read as 0
        too, so the folded texts name the few that may; each of those is tested (None: too many may,
        one scan of them all is cheaper)."""
        distinct, fold_of = folded
        rows = np.flatnonzero(distinct._holding_one(literal.translate(_DIGITS_AS_ZERO))[fold_of])
        if rows.size > len(self.texts) // 16:
            return None
        found = np.zeros(len(self.texts), dtype=bool)
        if rows.size:  # each text as it was joined, for these rows only
            found[rows] = [literal in self._joined_text(row) for row in rows.tolist()]
        return found

    def _joined_text(self, row: int) -> str:
        """Text `row` as joined: lowercased, or "" where it is not ASCII."""
        return "" if self.unfiltered[row] else self.texts[row].lower()

    def digit_folds(self) -> Optional[Tuple[TextBatch, np.ndarray]]:
        """The distinct texts with digits read as 0, lowercased, and which one each text is, numbered
        densely (None: too few repeat, or a text holds the separator). A text that is not ASCII is
        folded to ""."""
        return self._folds


class _Folding:
    """Digit folds made a block of joined texts at a time (split at once, a million names were a
    million strings beside the batch, 80 MB at the analyses' peak).

    Each folded text is looked up once: a new one is entered under the position of the text that
    first has it, and the positions are numbered densely at the end (in first-seen order, as the
    distinct texts are listed)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.index: Dict[str, int] = {}  # distinct folded text → the first text's position, first-seen order
        self.first_of = np.empty(count, dtype=np.int32)  # per text, its fold's first position (< count)

    def add(self, low: int, texts: int, block: str) -> bool:
        """Fold the block of `texts` texts from text `low`; False: no folds (a text holds the separator,
        or too few repeat: the count of distinct folded texts only grows)."""
        parts = block.translate(_DIGITS_AS_ZERO).split(_SEPARATOR)
        if len(parts) != texts:
            return False
        self.first_of[low:low + texts] = np.fromiter(map(self.index.setdefault, parts, positions_from(low)),
                                                     dtype=np.int32, count=texts)
        return len(self.index) <= self.count // 2

    def result(self) -> Tuple[TextBatch, np.ndarray]:
        """The distinct folded texts, and per text its fold's number (the first positions renumbered
        in place, a chunk of texts at a time: a million names' int64 ranks were 16 MB more)."""
        firsts = np.fromiter(self.index.values(), dtype=np.int32, count=len(self.index))  # ascending
        number = np.zeros(self.count, dtype=np.int32)
        number[firsts] = np.arange(firsts.size, dtype=np.int32)
        for part in row_chunks(self.count):
            self.first_of[part] = number[self.first_of[part]]
        return TextBatch(list(self.index), fold_digits=False), self.first_of


_BLOCK_TEXTS = 1 << 16  # texts joined (and folded) together: ~13 MB of 200-character names


def _joined_blocks(texts: List[str]) -> Iterator[Tuple[int, str, Sequence[str], np.ndarray]]:
    """(first text, the block's texts lowercased and joined, the texts as joined, which of them are
    not ASCII) of each block of _BLOCK_TEXTS texts."""
    for low in range(0, len(texts), _BLOCK_TEXTS):
        block = texts[low:low + _BLOCK_TEXTS]
        joined = _SEPARATOR.join(block)
        if joined.isascii():  # the usual case: one lowercasing of the block, no call per text
            yield low, joined.lower(), block, np.zeros(len(block), dtype=bool)
            continue
        del joined
        flags = [text.isascii() for text in block]
        parts = [text.lower() if flag else "" for text, flag in zip(block, flags)]
        yield low, _SEPARATOR.join(parts), parts, ~np.array(flags, dtype=bool)


_HELD_BY_NONE = np.zeros(0, dtype=np.uint8)  # a literal's packed bits when no text holds it
_DIGITS = "0123456789"
_DIGITS_AS_ZERO = str.maketrans("123456789", "000000000")
_BATCHES: Dict[int, Tuple[Sequence[str], int, TextBatch]] = {}  # by id() of a plane's name list
_BATCHES_KEPT = 8


def release_batches() -> None:
    """Drop the cached batches (a profile's names joined, and masks per literal: tens of MB for 100,000
    names) once the analyses of a profile are done; report.analyze_profile calls it."""
    _BATCHES.clear()


def text_batch(texts: Sequence[str]) -> TextBatch:
    """The TextBatch of a plane's name list, built once for the several analyses that each try their
    tables on it (a list is known by identity and length; a plane's names do not change)."""
    found = _BATCHES.get(id(texts))
    if found is not None and found[0] is texts and found[1] == len(texts):
        return found[2]
    if len(_BATCHES) >= _BATCHES_KEPT:
        _BATCHES.pop(next(iter(list(_BATCHES)), None), None)  # list(): one step, safe beside other threads
    batch = TextBatch(texts)
    _BATCHES[id(texts)] = (texts, len(texts), batch)
    return batch


def _occurrences(text: str, literal: str) -> np.ndarray:
    """Start of every non-overlapping occurrence, left to right (at least one in each joined text
    that holds it). A `find` per occurrence while they are few; past that, one `split` in C of the
    rest (a literal common to a third of 100,000 names is 33,000 occurrences)."""
    found: List[int] = []
    step, find = len(literal), text.find
    at = find(literal)
    while at >= 0 and len(found) < _FIND_CALLS:
        found.append(at)
        at = find(literal, at + step)
    if at < 0:
        return np.array(found, dtype=np.int64)
    pieces = text[at:].split(literal)  # the rest starts with an occurrence: pieces[0] == ""
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces) - 1)  # all but the last
    rest = at + np.cumsum(lengths + step) - step
    return np.concatenate((np.array(found, dtype=np.int64), rest))


_FIND_CALLS = 64


Candidate = Tuple[TextBatch, Any, Optional[Tuple[str, ...]]]  # texts, compiled pattern, needed literals


def first_matching(entries: Sequence[Candidate], rows: Optional[np.ndarray] = None) -> np.ndarray:
    """Per text, the index of the first entry (in order) whose pattern matches its text (-1: none).

    Entries may read different batches over the same names (a kernel name, its head, its base); only
    `rows` (a mask) are looked at. Decides exactly as trying the entries in order on each name.
    """
    count = len(entries[0][0]) if entries else 0
    found = np.full(count, -1, dtype=np.int64)
    pending = np.ones(count, dtype=bool) if rows is None else rows.copy()
    for k, (batch, pattern, needs) in enumerate(entries):
        candidates = np.flatnonzero(pending & batch.holding(needs)).tolist()
        if not candidates:
            continue
        search, texts = pattern.search, batch.texts
        exact = literal_alternatives(pattern.pattern, pattern.flags)
        if exact is not None and needs is not None and exact == frozenset(needs):
            # the literal scan already answered for every ASCII text; only the others are searched
            unfiltered = batch.unfiltered
            hits = [i for i in candidates if not unfiltered[i] or search(texts[i])]
        else:
            hits = [i for i in candidates if search(texts[i])]
        found[hits] = k
        pending[hits] = False
    return found
