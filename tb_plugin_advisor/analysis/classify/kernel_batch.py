"""Classifying a device's kernel names all at once (100,000 distinct names in under 2 s).

`classify_kernel` tries the rule tables on one name, a Python loop of literal tests per rule. Here the
same tables run over every new name of a table together (prefilter.TextBatch): each literal is found
by one scan of all the names, and each rule searches only the names that hold one of its literals.
The results are exactly `classify_kernel`'s (tests/analysis/classify/test_kernel_batch.py) and land in its
cache. Names that differ only in standalone numbers (XLA's `fusion.117775`, template arguments) are
classified once for all of them, where no rule can tell such numbers apart (standalone_numbers.py).
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify import patterns as p
from tb_plugin_advisor.analysis.classify.prefilter import TextBatch, first_matching, table_filter, text_batch
from tb_plugin_advisor.analysis.classify.standalone_numbers import blind_to_standalone_numbers
from tb_plugin_advisor.lookup import unique_inverse


def classify_kernels(names: Sequence[str]) -> List[p.KernelClass]:
    """`classify_kernel` of each name; names not seen before are classified together."""
    known = p.KERNEL_CLASSES
    missing = [name for name in dict.fromkeys(names) if name not in known]
    if not missing:
        return [known[name] for name in names]
    if len(missing) == len(names):  # all new and distinct: the list itself, so its batch is shared
        missing = list(names) if not isinstance(names, list) else names
        classes = _classify_all(missing)
        p.remember_all(known, dict(zip(missing, classes)))
        return classes
    fresh = dict(zip(missing, _classify_all(missing)))
    p.remember_all(known, fresh)
    # (a name known before may be gone if the cache was emptied to make room)
    return [known.get(name) or fresh.get(name) or p.classify_kernel(name) for name in names]


def classify_kernel_codes(names: Sequence[str]) -> Tuple[np.ndarray, List[p.KernelClass]]:
    """`classify_kernels` as (per name, the index of its class in the list; the distinct classes, equal
    ones joined): what a kernel view keeps. A batch larger than the cache keeps is classified as a
    whole, without a class object or cache lookup per name (a million names: no list of classes)."""
    if len(names) > p.BATCH_REMEMBERED:
        codes, made = _classify_all_codes(names if isinstance(names, list) else list(names))
    else:  # through the cache: a few shared class objects, each known by its identity
        found = classify_kernels(names)
        made = list({id(c): c for c in found}.values())
        at = {id(c): k for k, c in enumerate(made)}
        codes = np.fromiter((at[id(c)] for c in found), dtype=np.int32, count=len(found))
    by_value: Dict[p.KernelClass, int] = {}  # equal classes made apart join
    position = np.array([by_value.setdefault(c, len(by_value)) for c in made], dtype=np.int32)
    return position[codes], list(by_value)


def _classify_all(names: List[str]) -> List[p.KernelClass]:
    codes, made = _classify_all_codes(names)
    return [made[j] for j in codes.tolist()]


def _classify_all_codes(names: List[str]) -> Tuple[np.ndarray, List[p.KernelClass]]:
    """Per name, the index of its class in the list made (one class per distinct rule combination).
    Names that differ only in their standalone numbers are classified once, by the first of them."""
    whole = text_batch(names)
    shapes = _number_shapes(whole)
    if shapes is not None:
        _, first, position = np.unique(shapes, return_index=True, return_inverse=True)
        if first.size * 2 <= len(names):
            codes, made = _classify_batch(TextBatch([names[i] for i in first.tolist()]))
            return codes[position.reshape(-1)], made
    return _classify_batch(whole)


# Where a letter touches a digit, in texts lowercased with every digit read as 0
_LETTER_BESIDE_DIGIT = re.compile(r"[a-z]0|0[a-z]")


def _number_shapes(whole: TextBatch) -> Optional[np.ndarray]:
    """Per name, a key that names share exactly when they differ at most in the values of their
    standalone numbers (digit runs with no letter beside them), which no rule reads
    (standalone_numbers.py). A name has a key of its own where a letter touches one of its digits,
    where it is not ASCII, or where it holds the anonymous namespace (removed from heads and bases, it
    joins the text around it). None: the rules may read such numbers, or too few names differ only in
    numbers."""
    if not _rules_blind_to_standalone_numbers():
        return None
    folds = whole.digit_folds()
    if folds is None:
        return None
    distinct, fold_of = folds
    apart = distinct.found_by(_LETTER_BESIDE_DIGIT) | distinct.holding((p.ANONYMOUS_NAMESPACE.lower(),))
    shapes = fold_of.astype(np.int64)
    own = np.flatnonzero(apart[fold_of] | whole.unfiltered)
    shapes[own] = len(distinct) + own  # past every folded text's number
    return shapes


def _rules_blind_to_standalone_numbers() -> bool:
    """Can no rule a kernel's class reads tell standalone numbers apart (the precision rules that read
    a type code off their match: nor by what they matched)?"""
    tables = (p.FAMILY_RULES, p.TENSOR_CORE_RULES, p.DTYPE_TOKEN_RULES, p.PRECISION_RULES)
    return all(blind_to_standalone_numbers(rule.regex, rule.flags, p.reads_match(rule))
               for table in tables for rule in table)


def _classify_batch(whole: TextBatch) -> Tuple[np.ndarray, List[p.KernelClass]]:
    """_classify_all_codes of the batch's texts, every text tried."""
    names = whole.texts
    # A name without brackets is its own head, and its own base unless it starts with `void `. A head
    # or base is a part of its name (once `(anonymous namespace)::` is out), so a name that holds none
    # of the literals the rules reading heads (bases) need cannot match them through its head (base):
    # the name itself stands in for it, and only the others are cut (most kernels, elementwise ones).
    # Which names may hold a bracket, or `void ` (found by the batch's literal scan: every name that does,
    # and every non-ASCII one): the others are their own heads and bases, and are not looked at one by one.
    tables = (p.FAMILY_RULES, p.TENSOR_CORE_RULES)
    bracketed = whole.holding(("(", "<"))
    bases = _cut(whole, _may_match(whole, tables, "base") & (bracketed | whole.holding(("void ",))),
                 p.base_name)
    heads = _cut(whole, _may_match(whole, tables, "head") & bracketed, lambda name: p.head_name(name) or name)
    family = _first(p.FAMILY_RULES, {"name": whole, "head": heads, "base": bases})
    library = _first(p.PRECISION_RULES, {"name": whole, "head": whole, "base": whole})
    verdict = _first(p.TENSOR_CORE_RULES, {"name": whole, "head": whole, "base": bases})
    library = np.asarray(library, dtype=np.int64)
    token = _dtype_tokens(whole, library < 0)
    # The precision: the library rule's value (a few rules read a type code off their match), else
    # the type token's. Every name then gets one integer for its (family, library, token, verdict,
    # precision), and one shared KernelClass is made per distinct integer, not per name.
    spelled: Dict[str, int] = {}
    precision = np.full(len(names), -1, dtype=np.int64)
    for k, rule in enumerate(p.PRECISION_RULES):
        rows = np.flatnonzero(library == k)
        if not rows.size:
            continue
        if p.reads_match(rule):
            found = [p.precision_of_match(rule, rule.compiled.search(names[i])) for i in rows.tolist()]
            precision[rows] = [spelled.setdefault(text, len(spelled)) for text in found]
        else:
            precision[rows] = spelled.setdefault(rule.value, len(spelled))
    for t, rule in enumerate((None,) + tuple(p.DTYPE_TOKEN_RULES)):
        rows = np.flatnonzero((library < 0) & (token == t - 1))
        if rows.size:
            precision[rows] = spelled.setdefault(rule.value if rule else "unknown", len(spelled))
    sizes = (len(p.FAMILY_RULES) + 1, len(p.PRECISION_RULES) + 1, len(p.DTYPE_TOKEN_RULES) + 1,
             len(p.TENSOR_CORE_RULES) + 1, len(spelled))
    parts = (np.asarray(family, dtype=np.int64) + 1, library + 1, token + 1,
             np.asarray(verdict, dtype=np.int64) + 1, precision)
    keys = np.ravel_multi_index(parts, sizes)
    distinct, inverse = unique_inverse(keys)
    texts = list(spelled)
    made = [_made(tuple(int(v) for v in np.unravel_index(key, sizes)), texts)
            for key in distinct.tolist()]
    return inverse, made


def _made(codes: Tuple[int, ...], texts: List[str]) -> p.KernelClass:
    """The KernelClass of one (family, library, token, verdict) rule combination (each index + 1;
    0: none) and its precision (`texts[code]`)."""
    family, library, token, verdict, precision = codes
    rules = []
    family_rule = p.FAMILY_RULES[family - 1] if family else None
    if family_rule:
        rules.append(family_rule.id)
    if library:
        rules.append(p.PRECISION_RULES[library - 1].id)
    elif token:
        rules.append(p.DTYPE_TOKEN_RULES[token - 1].id)
    tc_rule = p.TENSOR_CORE_RULES[verdict - 1] if verdict else None
    if tc_rule:
        rules.append(tc_rule.id)
    return p.KernelClass(texts[precision], tc_rule.value if tc_rule else "no",
                         family_rule.value if family_rule else "other", tuple(rules))


def _cut(whole: TextBatch, rows: np.ndarray, cut: Callable[[str], str]) -> TextBatch:
    """The batch of each name's head or base (`cut`), taken only for the names in `rows` (a mask; the
    others are their own): the names' own batch when none was cut."""
    names = whole.texts
    changed = {i: text for i in np.flatnonzero(rows).tolist() if (text := cut(names[i])) != names[i]}
    if not changed:
        return whole
    texts = list(names)
    for i, text in changed.items():
        texts[i] = text
    return TextBatch(texts)


def _may_match(batch: TextBatch, tables: Sequence[Sequence[p.Pattern]], on: str) -> np.ndarray:
    """Which texts hold a literal needed by a rule of `tables` that reads `on`, or hold
    `(anonymous namespace)::` (whose removal joins the text around it); every text when such a rule
    needs no literal."""
    needs = [n for table in tables for rule, n in zip(table, table_filter(table).entries) if rule.on == on]
    if any(n is None for n in needs):
        return np.ones(len(batch), dtype=bool)
    literals = tuple(literal for n in needs for literal in n) + (p.ANONYMOUS_NAMESPACE.lower(),)
    return batch.holding(literals)


def _first(rules: Sequence[p.Pattern], texts: Dict[str, TextBatch]) -> List[int]:
    """Per name, the index of the first rule that matches the text it reads (-1: none)."""
    needs = table_filter(rules).entries
    return first_matching([(texts[r.on], r.compiled, n) for r, n in zip(rules, needs)]).tolist()


def _dtype_tokens(batch: TextBatch, rows: np.ndarray) -> np.ndarray:
    """`dtype_in_text` of each text in `rows` as the index of its rule in DTYPE_TOKEN_RULES (-1: no
    type token): the leftmost token, the earlier rule on a tie."""
    found = np.full(len(batch), -1, dtype=np.int64)
    at: List[int] = [-1] * len(batch)  # start of the token found so far (-1: none)
    rules = p.DTYPE_TOKEN_RULES
    texts = batch.texts
    for k, (rule, needs) in enumerate(zip(rules, table_filter(rules).entries)):
        search = rule.compiled.search
        for i in np.flatnonzero(rows & batch.holding(needs)).tolist():
            match = search(texts[i]) if texts[i] else None
            if match is not None and (at[i] < 0 or match.start() < at[i]):
                at[i], found[i] = match.start(), k
    return found
