"""Names that differ only in their standalone numbers are classified once (standalone_numbers.py,
kernel_batch.py), and the answer is still exactly each name's own.

The pattern reading is checked both ways: patterns that read such numbers are caught, and for the
kernel tables' own rules, names varied only in their standalone numbers classify alike one by one.
"""

from __future__ import annotations

import random
import re

import pytest
from test_kernel_batch import CORPUS

from tb_plugin_advisor.analysis.classify import kernel_batch, patterns
from tb_plugin_advisor.analysis.classify.prefilter import TextBatch
from tb_plugin_advisor.analysis.classify.standalone_numbers import blind_to_standalone_numbers

KERNEL_TABLES = [patterns.FAMILY_RULES, patterns.PRECISION_RULES, patterns.DTYPE_TOKEN_RULES,
                 patterns.TENSOR_CORE_RULES]
STANDALONE = re.compile(r"(?<![A-Za-z0-9])[0-9]+(?![A-Za-z0-9])")


@pytest.mark.parametrize("regex, reads_groups", [
    (r"fusion\.1\b", False),  # a digit literal after a dot
    (r"\w16", False),  # `\w` takes `_` too
    (r"_16", False),
    (r"x[1-9_]+", False),  # the same repeat takes `_` between the letter and a digit
    (r"a(?=_1)", False),  # a lookaround reading a digit's value
    (r"(?>_1)", False),
    (r"(\d+)", True),  # a read group takes the number itself
    (r"[0-8]", False),  # a class of some digits
    (r"_[^1]", False),  # ... and its complement
])
def test_patterns_that_read_standalone_numbers_are_caught(regex, reads_groups):
    assert not blind_to_standalone_numbers(regex, re.IGNORECASE, reads_groups)
    text_a, text_b = _telling_pair(regex, reads_groups)
    assert _answer(regex, text_a, reads_groups) != _answer(regex, text_b, reads_groups)


def _telling_pair(regex: str, reads_groups: bool):
    """Two texts differing only in a standalone number that the pattern tells apart (found by trying)."""
    for head in ("fusion.", "x", "k", "a", "_", "", "k ", "a_", "x_"):
        for tail in ("", "_", ".", " x"):
            for number in ("1", "2", "16", "26", "99", "10"):
                for other in ("0", "3", "5", "9", "00", "36", "97", "11"):
                    if len(other) != len(number):
                        continue
                    a, b = head + number + tail, head + other + tail
                    told = _answer(regex, a, reads_groups) != _answer(regex, b, reads_groups)
                    if STANDALONE.search(a) and told:
                        return a, b
    raise AssertionError(f"no pair of texts tells {regex} apart")


def _answer(regex: str, text: str, reads_groups: bool):
    match = re.search(regex, text, re.IGNORECASE)
    if match is None:
        return None
    return (match.span(), match.groups()) if reads_groups else match.span()


@pytest.mark.parametrize("regex", [r"(?<!1)x", r"(a)\1"])
def test_what_the_walk_does_not_follow_counts_as_reading_numbers(regex):
    """A lookaround's text or a back reference: these read no standalone number here, but are not
    followed, so the names are classified one by one (slower, never wrong)."""
    assert not blind_to_standalone_numbers(regex, re.IGNORECASE)


@pytest.mark.parametrize("regex, reads_groups", [
    (r"f(?:p)?16", False), (r"k[^1]", False), (r"float(?:2|4|32)?(?![a-z0-9])", False), (r"x(\d+)", True),
    (r"\d+", False), (r"sm_\d+", False), (r"(?P<code>[a-z]+[0-9][a-z0-9]*)\[", True),
    (r"(?<![a-z0-9])[hs](?:884|1688)(?=gemm)", False), (r"Im\dd2Col", False),
])
def test_patterns_that_read_digits_only_beside_letters_are_blind(regex, reads_groups):
    assert blind_to_standalone_numbers(regex, re.IGNORECASE, reads_groups)


@pytest.mark.parametrize("table", KERNEL_TABLES, ids=lambda table: table[0].id)
def test_every_kernel_rule_is_blind_to_standalone_numbers(table):
    """The kernel tables read no standalone number: a rule that did would send every profile's names
    back to one-by-one classification (kernel_batch.py checks the tables on each batch)."""
    for rule in table:
        assert blind_to_standalone_numbers(rule.regex, rule.flags, patterns.reads_match(rule)), rule.id


def _varied(name: str, rng: random.Random) -> str:
    """The name with each standalone number replaced by random digits of the same length."""
    return STANDALONE.sub(lambda m: "".join(rng.choice("0123456789") for _ in m.group()), name)


# Names whose standalone numbers stand beside what the digit rules look for
TEMPTING = ["gemm_16_f32", "h_884_gemm", "s.1688.gemm", "fp_16", "f 32", "bf_16", "tensorop_s_1688gemm",
            "Cijk_Ailk_Bljk_4_xi8", "MI_16x16x16", "sm_80_xmma_gemm", "void k<16, float>(float*)",
            "%fusion.3 = f32[8]{0} fusion(f32[8]{0} %p.1)", "loop_add_fusion.117775", "e_4m3", "int_8",
            "nvjet_sm_90_tst_128x64", "Im_2d2Col", "ShuffleInTensor_3", "SwapDimension_1"]


def test_names_that_differ_only_in_standalone_numbers_classify_alike():
    rng = random.Random(7)
    names = [name for name in CORPUS + TEMPTING if name.isascii() and STANDALONE.search(name)
             and patterns.ANONYMOUS_NAMESPACE not in name]
    assert len(names) > 100
    for name in names:
        expected = patterns.classify_kernel(name)
        for _ in range(8):
            variant = _varied(name, rng)
            assert patterns.classify_kernel(variant) == expected, (name, variant)


def _numbered(count: int):
    """Numbered names (XLA fusions, templates), the tempting ones, and names a shared class would get
    wrong: a digit beside a letter (`f16`, `f17`: the same once digits are read as 0), and the
    anonymous namespace, which, removed from a base, joins `3` to the letter before it."""
    names = [f"loop_add_fusion.{k}" for k in range(count)]
    names += [f"void k<{k % 7}, float>(float*)" for k in range(count)]
    names += TEMPTING + [name + f"_{k}" for k in range(3) for name in TEMPTING]
    names += ["k_f16_x", "k_f17_x", "void ShuffleInTensor(anonymous namespace)::3_k<int>(int)",
              "void ShuffleInTensor(anonymous namespace)::4_k<int>(int)",
              "gemm_bf16_é_1", "gemm_bf16_é_2", "", "7"]  # not ASCII; empty (folded alike)
    return list(dict.fromkeys(names))


@pytest.mark.parametrize("remembered", [4, 1 << 15])  # the batch classified as a whole, or through the cache
def test_numbered_names_are_classified_once_per_shape_and_exactly(monkeypatch, remembered):
    monkeypatch.setattr(patterns, "BATCH_REMEMBERED", remembered)
    names = _numbered(300)
    classified = []
    original = kernel_batch._classify_batch

    def counted(batch):
        classified.append(len(batch))
        return original(batch)

    monkeypatch.setattr(kernel_batch, "_classify_batch", counted)
    patterns.KERNEL_CLASSES.clear()
    codes, classes = kernel_batch.classify_kernel_codes(names)
    patterns.KERNEL_CLASSES.clear()
    assert [classes[c] for c in codes.tolist()] == [patterns.classify_kernel(name) for name in names]
    assert classified and max(classified) < len(names) // 4  # one name per shape, not each name
    precisions = [classes[c].precision for c, name in zip(codes.tolist(), names) if name.startswith("k_f1")]
    assert precisions == ["fp16", "unknown"]
    transpose = [classes[c].family for c, name in zip(codes.tolist(), names) if "ShuffleInTensor(" in name]
    assert transpose == ["transpose", "other"]


def test_a_rule_that_reads_standalone_numbers_sends_names_back_one_by_one(monkeypatch):
    fusion_one = patterns.Pattern("fusion_one", r"fusion\.1$", "gemm", "a rule reading a number")
    monkeypatch.setattr(patterns, "FAMILY_RULES", (fusion_one,) + patterns.FAMILY_RULES)
    monkeypatch.setattr(patterns, "KERNEL_CLASSES", {})  # (classes made by these rules go with them)
    names = _numbered(300)
    assert kernel_batch._number_shapes(TextBatch(names)) is None
    codes, classes = kernel_batch.classify_kernel_codes(names)
    patterns.KERNEL_CLASSES.clear()
    families = [classes[c].family for c in codes.tolist()]
    assert families[names.index("loop_add_fusion.1")] == "gemm"
    assert families[names.index("loop_add_fusion.2")] != "gemm"
    assert [classes[c] for c in codes.tolist()] == [patterns.classify_kernel(name) for name in names]
