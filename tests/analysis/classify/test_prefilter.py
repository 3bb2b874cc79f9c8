"""The literal prefilter (analysis/prefilter.py) skips regex searches but never changes a result.

Every table is run over the real names the pattern tests hold, plus variants that stress the
filter (upper case, separators, each name cut at every fifth character, names glued together).
"""

from __future__ import annotations

import random
import re

import pytest
import test_breakdown_patterns as breakdown_names
import test_patterns as kernel_names

from tb_plugin_advisor.analysis.classify import event_names, patterns, prefilter
from tb_plugin_advisor.analysis.classify.prefilter import holds, required_literals, table_filter


def corpus():
    texts = [name for name, *_ in kernel_names.KERNELS] + [op for op, _ in kernel_names.OPS]
    texts += [shape for shape, _ in kernel_names.SHAPES]
    texts += [name for _, name, _ in breakdown_names.POSITIVE]
    texts += [name for _, name in breakdown_names.NEGATIVE]
    variants = []
    for text in texts:
        variants += [text, text.upper(), text.replace("_", "-"), text + text[:7]]
        variants += [text[:k] for k in range(0, len(text), 5)] + [text[k:] for k in range(0, len(text), 5)]
    return variants


NAMES = corpus()
RULE_TABLES = [patterns.FAMILY_RULES, patterns.PRECISION_RULES, patterns.DTYPE_TOKEN_RULES,
               patterns.TENSOR_CORE_RULES, patterns.OP_RULES]
NAME_TABLES = [t for t in breakdown_names.TABLES.values()]


@pytest.mark.parametrize("table", RULE_TABLES + NAME_TABLES, ids=lambda t: getattr(t[0], "id", "table"))
def test_a_name_without_the_required_literals_never_matches(table):
    filters = table_filter(table)
    for entry, needs in zip(table, filters.entries):
        compiled = re.compile(entry.regex, getattr(entry, "flags", 0))
        for name in NAMES:
            if name.isascii() and not (needs is None or holds(name.lower(), needs)):
                assert compiled.search(name) is None, (entry.id, name, needs)
            if name.isascii() and filters.table is not None and not holds(name.lower(), filters.table):
                assert compiled.search(name) is None, (entry.id, name)


def test_rule_tables_decide_as_without_the_filter():
    for name in NAMES:
        base, head = patterns.base_name(name), patterns.head_name(name) or name  # as _first reads it
        for table in RULE_TABLES:
            expected = next((rule for rule in table if rule.compiled.search(
                base if rule.on == "base" else head if rule.on == "head" else name)), None)
            assert patterns._first(table, name, base, head)[0] is expected, name
        for table in NAME_TABLES:
            expected = next((p for p in table if p.compiled.search(name)), None)
            assert event_names.first_match(table, name) is expected, name


def test_most_rules_get_a_filter_and_unfilterable_ones_none():
    filtered = [needs for table in RULE_TABLES for needs in table_filter(table).entries]
    assert sum(needs is not None for needs in filtered) >= len(filtered) - 1
    assert required_literals(r"\d+|abc") is None  # one alternative needs no text
    assert required_literals(r"(?:xy)?z") is None  # optional text is not required
    assert required_literals(r"ab[cd]ef") == frozenset({"ab"}) or required_literals(r"ab[cd]ef") == frozenset(
        {"ef"})
    assert required_literals(r"(?:nccl|all[_-]?reduce)") == frozenset({"nccl", "reduce"})


@pytest.mark.parametrize("find_calls", [0, 1, 2, 64])
def test_occurrences_equal_a_find_loop_whether_found_one_by_one_or_split(monkeypatch, find_calls):
    """Literal positions in a joined batch: `find` for the first few, one `split` for the rest; the
    positions are those of the plain left-to-right, non-overlapping `find` loop either way."""
    monkeypatch.setattr(prefilter, "_FIND_CALLS", find_calls)
    rng = random.Random(find_calls)

    def find_loop(text, literal):
        found, at = [], text.find(literal)
        while at >= 0:
            found.append(at)
            at = text.find(literal, at + len(literal))
        return found

    cases = [("aXaXXa", "a"), ("aaaa", "aa"), ("aaaaa", "aa"), ("xyz", "q"), ("", "a"), ("ab\nab", "ab")]
    cases += [("".join(rng.choice("ab\n") for _ in range(rng.randint(0, 60))),
               "".join(rng.choice("ab") for _ in range(rng.randint(1, 3)))) for _ in range(300)]
    for text, literal in cases:
        assert prefilter._occurrences(text, literal).tolist() == find_loop(text, literal), (text, literal)


@pytest.mark.parametrize("regex, literals", [
    ("xmma", {"xmma"}), ("Cijk_", {"cijk_"}), ("(?:ab|cd)", {"ab", "cd"}),
    ("(?<![a-z])bf16", None), ("ab.c", None), ("a|b", None), ("ab|", None), ("é", None),
])
def test_plain_text_patterns_are_answered_by_the_literal_scan(regex, literals):
    """A pattern that is only plain ASCII text (or alternatives of it), ignoring case, matches an ASCII
    text exactly when the lowercased text holds it: first_matching takes the scan's answer for it."""
    found = prefilter.literal_alternatives(regex, re.IGNORECASE)
    assert (set(found) if found is not None else None) == literals
    assert prefilter.literal_alternatives(regex, 0) is None  # case matters: the regex decides
    texts = ["a_XMMA_b", "xmm", "CIJK_x", "cijk", "AB", "zcdz", "é_xmma", "ÉXMMA", "abxc", "", "ab\ncd"]
    compiled = re.compile(regex, re.IGNORECASE)
    batch = prefilter.TextBatch(texts)
    needs = prefilter.required_literals(regex, re.IGNORECASE)
    needs = tuple(sorted(needs)) if needs else None
    found_rows = prefilter.first_matching([(batch, compiled, needs)])
    assert (found_rows == 0).tolist() == [compiled.search(t) is not None for t in texts]


def test_a_table_made_for_one_call_never_gets_the_filter_of_an_earlier_one():
    """Tables made per call (a subset of a module-level table) are freed after it, and the next one
    often gets the same id(): each must still be filtered by its own literals."""
    names = [f"word{k}" for k in range(40)] + ["other"]
    for k in range(40):
        table = (event_names.NamePattern(f"p{k}", rf"^word{k}$", "test"),)  # a fresh tuple each time
        mask = event_names.matching(table, names)
        assert mask.tolist() == [i == k for i in range(len(names))], k
        assert event_names.first_match(table, f"word{k}") is table[0]
        del table


@pytest.mark.parametrize("fold", [True, False])
def test_a_batch_answers_every_literal_as_a_plain_search_asked_once_or_again(fold):
    """Which texts hold a literal, with and without digit folding, asked twice (the second answer is
    the one the batch kept); a literal no text holds keeps no bits."""
    texts = [f"loop_add_fusion.{n}" for n in range(0, 4000, 7)] + ["sm80_xmma_gemm_f16f16", "Conv2D", ""]
    literals = ["fusion", "xmma", "16", "f16", "7", "absent", "conv2d", "_add_", "0"]
    batch = prefilter.TextBatch(texts, fold_digits=fold)
    for _ in range(2):
        for literal in literals:
            expected = [literal in text.lower() for text in texts]
            assert batch.holding((literal,)).tolist() == expected, literal
    assert batch._holding["absent"].size == 0 and batch._holding["fusion"].size > 0


@pytest.mark.parametrize("block", [1 << 16, 5, 1])
@pytest.mark.parametrize("fold", [True, False])
@pytest.mark.parametrize("odd", ["a\nb", "ab"])  # a text holding the separator: no digit folds
def test_a_batch_joined_a_block_at_a_time_answers_as_one_joined_text(block, fold, odd, monkeypatch):
    """The texts are joined and lowercased a block of texts at a time: every question (a literal, a
    pattern, a prefix, a literal with digits, non-ASCII texts, a text holding the separator) gets the
    answer a plain search of each text gives, wherever the blocks end."""
    monkeypatch.setattr(prefilter, "_BLOCK_TEXTS", block)
    texts = [f"loop_add_fusion.{n}" for n in range(0, 300, 7)] + ["Sm80_XMMA_gemm_bf16", "é_gemm", "%copy.1"]
    texts += ["", odd, "ncclKernel_AllReduce", "gemm_bf16_tn", "x"] + [f"fusion_{n}" for n in range(30)]
    batch = prefilter.TextBatch(texts, fold_digits=fold)
    # the joined blocks are kept only where the digit folds do not answer for them
    assert (batch._blocks is None) == (batch.digit_folds() is not None) == (fold and odd == "ab")
    if batch._blocks is not None:
        assert len(batch._blocks) == -(-len(texts) // block)
    for literal in ("fusion", "xmma", "bf16", "16", "gemm", "ncclkernel", "b", "absent", "_1", "x"):
        expected = [literal in text.lower() or not text.isascii() for text in texts]
        assert batch.holding((literal,)).tolist() == expected, literal
    pattern = re.compile(r"gemm_bf\d+")
    expected = [bool(pattern.search(t.lower())) and t.isascii() for t in texts]
    assert batch.found_by(pattern).tolist() == expected
    for prefix in ("%", "%", "loop", "b", "fusion_2", "\n"):
        assert batch.any_starting(prefix) == any(t.startswith(prefix) for t in texts), prefix
    split = prefilter.TextBatch(["a\n%b", "c"] * block)  # after a separator inside a text: no text start
    assert not split.any_starting("%") and split.any_starting("a")


@pytest.mark.parametrize("block", [1 << 16, 3])
def test_a_batch_with_digit_folds_keeps_no_joined_text_and_answers_every_question(block, monkeypatch):
    """Answers kept stay; a new literal, pattern or prefix is answered from the texts joined again a
    block at a time, and none of those blocks is kept."""
    monkeypatch.setattr(prefilter, "_BLOCK_TEXTS", block)
    texts = [f"fusion_{n}" for n in range(40)]
    texts += ["Sm80_XMMA_gemm_bf16", "é_gemm", "%copy.1", "a%b", "nccl_16"]
    batch = prefilter.TextBatch(texts)
    assert batch.digit_folds() is not None and batch._blocks is None
    kept = batch.holding(("fusion",)).tolist()
    assert batch.holding(("fusion",)).tolist() == kept
    for literal in ("gemm", "16", "nccl_1", "absent", "n_1"):
        expected = [literal in text.lower() or not text.isascii() for text in texts]
        assert batch.holding((literal,)).tolist() == expected, literal
    pattern = re.compile(r"gemm_bf\d+")
    assert batch.found_by(pattern).tolist() == [t == "Sm80_XMMA_gemm_bf16" for t in texts]
    assert batch.any_starting("%") and not batch.any_starting("_") and batch.any_starting("fusion_3")
    assert batch._blocks is None


@pytest.mark.parametrize("block", [1 << 16, 4])
def test_prefixes_without_letters_are_answered_by_the_digit_folds_as_by_the_texts(block, monkeypatch):
    """A batch with digit folds answers a prefix with no letter or digit from its distinct folds (and
    its non-ASCII texts), one with a digit from the texts themselves (a fold reads every digit as 0):
    each answer is what a plain startswith over the texts gives."""
    monkeypatch.setattr(prefilter, "_BLOCK_TEXTS", block)
    texts = [f"loop_add_fusion.{n}" for n in range(60)] + ["%é_copy", "__nv_cast_1", "5_kernel", "(anon)"]
    batch = prefilter.TextBatch(texts)
    assert batch.digit_folds() is not None and batch._blocks is None
    watched = batch.texts = _Watched(batch.texts)
    scanned = []
    for prefix in ("%", "%é", "_", "__nv", "(", ")", ".", "-", "0", "5", "5_", "%.", "\n"):
        scans = watched.scans
        assert batch.any_starting(prefix) == any(t.startswith(prefix) for t in texts), prefix
        if watched.scans > scans:
            scanned.append(prefix)
    # the prefixes with no letter or digit were answered without a scan of the texts
    assert scanned == ["%é", "__nv", "0", "5", "5_", "\n"]


class _Watched(list):
    """A list that counts the whole scans made over it (any_starting's plain path)."""

    scans = 0

    def __iter__(self):
        self.scans += 1
        return super().__iter__()
