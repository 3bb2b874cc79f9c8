"""Classifying a device's kernel names all at once (issue 12: 100,000 distinct names in under 2 s).

`classify_kernel` tries the rule tables on one name, a Python loop of literal tests per rule. Here the
same tables run over every new name of a table together (prefilter.TextBatch): each literal is found
by one scan of all the names, and each rule searches only the names that hold one of its literals.
The results are exactly `classify_kernel`'s (tests/test_kernel_batch.py) and land in its cache.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis import patterns as p
from tb_plugin_advisor.analysis.prefilter import TextBatch, first_matching, table_filter, text_batch


def classify_kernels(names: Sequence[str]) -> List[p.KernelClass]:
    """`classify_kernel` of each name; names not seen before are classified together."""
    known = p.KERNEL_CLASSES
    missing = [name for name in dict.fromkeys(names) if name not in known]
    fresh: Dict[str, p.KernelClass] = {}
    if missing:
        if len(missing) == len(names):  # all new and distinct: the list itself, so its batch is shared
            missing = list(names) if not isinstance(names, list) else names
        fresh = dict(zip(missing, _classify_all(missing)))
        for name, cls in fresh.items():
            p.remember(known, name, cls)
    return [known.get(name) or fresh.get(name) or p.classify_kernel(name) for name in names]


def _classify_all(names: List[str]) -> List[p.KernelClass]:
    whole = text_batch(names)
    # a name without brackets is its own head, and its own base unless it starts with `void `
    plain = [not ("(" in name or "<" in name) for name in names]
    bases = TextBatch([name if flat and not name.startswith("void ") else p.base_name(name)
                       for name, flat in zip(names, plain)])
    heads = TextBatch([name if flat else p.head_name(name) or name  # as classify_kernel reads them
                       for name, flat in zip(names, plain)])
    family = _first(p.FAMILY_RULES, {"name": whole, "head": heads, "base": bases})
    library = _first(p.PRECISION_RULES, {"name": whole, "head": whole, "base": whole})
    verdict = _first(p.TENSOR_CORE_RULES, {"name": whole, "head": whole, "base": bases})
    typed = _dtype_tokens(whole, np.array(library) < 0)
    interned: Dict[Tuple, p.KernelClass] = {}  # few distinct classes: share one object per class
    out = []
    for i, name in enumerate(names):
        rules = []
        family_rule = p.FAMILY_RULES[family[i]] if family[i] >= 0 else None
        if family_rule:
            rules.append(family_rule.id)
        if library[i] >= 0:
            rule = p.PRECISION_RULES[library[i]]
            precision, precision_rule = p.precision_of_match(rule, rule.compiled.search(name)), rule.id
        else:
            precision, precision_rule = typed[i]
        if precision_rule:
            rules.append(precision_rule)
        tc_rule = p.TENSOR_CORE_RULES[verdict[i]] if verdict[i] >= 0 else None
        if tc_rule:
            rules.append(tc_rule.id)
        key = (precision, tc_rule.value if tc_rule else "no", family_rule.value if family_rule else "other",
               tuple(rules))
        cls = interned.get(key)
        if cls is None:
            cls = interned[key] = p.KernelClass(*key)
        out.append(cls)
    return out


def _first(rules: Sequence[p.Rule], texts: Dict[str, TextBatch]) -> List[int]:
    """Per name, the index of the first rule that matches the text it reads (-1: none)."""
    needs = table_filter(rules).entries
    return first_matching([(texts[r.on], r.compiled, n) for r, n in zip(rules, needs)]).tolist()


def _dtype_tokens(batch: TextBatch, rows: np.ndarray) -> List[Tuple[str, Optional[str]]]:
    """`dtype_in_text` of each text in `rows`: the leftmost type token, the earlier rule on a tie."""
    unknown: Tuple[str, Optional[str]] = ("unknown", None)
    found: List[Tuple[str, Optional[str]]] = [unknown] * len(batch)
    at: List[int] = [-1] * len(batch)  # start of the token found so far (-1: none)
    rules = p.DTYPE_TOKEN_RULES
    texts = batch.texts
    for rule, needs in zip(rules, table_filter(rules).entries):
        search, answer = rule.compiled.search, (rule.value, rule.id)
        for i in np.flatnonzero(rows & batch.holding(needs)).tolist():
            match = search(texts[i]) if texts[i] else None
            if match is not None and (at[i] < 0 or match.start() < at[i]):
                at[i], found[i] = match.start(), answer
    return found
