"""Classifying many names at once (kernel_batch.py, prefilter.TextBatch) decides exactly as one at a time.

Run over the pattern tests' real names and the prefilter's stress variants (upper case, cut, glued),
plus non-ASCII and empty names, which the batch filter must not skip.
"""

from __future__ import annotations

import numpy as np
import pytest
import test_breakdown_patterns as breakdown_names
from test_prefilter import NAMES

from tb_plugin_advisor.analysis.classify import event_names, kernel_batch, patterns, prefilter
from tb_plugin_advisor.analysis.classify.kernel_batch import classify_kernels
from tb_plugin_advisor.analysis.classify.prefilter import TextBatch
from tb_plugin_advisor.analysis.step_time import breakdown

EXTRA = ["", "é_gemm_bf16", "void f<Ä>(half)", "ncclKernel_É", "İnput", "DataLoader#id=1#", "load\nbatch",
         # heads and bases are cut only where the name holds a literal the rules reading them need:
         # a literal in the parameters only, one made by removing the anonymous namespace, none at all
         "void k<int>(gemm_args*)", "void ge(anonymous namespace)::mm_kernel<float>(int)",
         "void trans(anonymous namespace)::pose_kernel(float)",
         "void (anonymous namespace)::nccl_x<int>(int)",
         "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<op7, Eigen::half>>(int)",
         "void k<conv_t>(int)", "void conv<x>(y)"]
CORPUS = list(dict.fromkeys(NAMES + EXTRA))


def test_batch_classes_equal_one_name_at_a_time():
    patterns.KERNEL_CLASSES.clear()
    batch = classify_kernels(CORPUS)
    patterns.KERNEL_CLASSES.clear()
    single = [patterns.classify_kernel(name) for name in CORPUS]
    assert batch == single


@pytest.mark.parametrize("hlo_text", [True, False])  # HLO text names are shortened: their own batch
def test_batch_device_categories_equal_one_name_at_a_time(hlo_text):
    corpus = [name for name in CORPUS if hlo_text or not name.startswith("%")]
    patterns.KERNEL_CLASSES.clear()
    breakdown._CATEGORIES.clear()
    codes, classes = kernel_batch.classify_kernel_codes(corpus)  # as a device's kernel view has them
    batch = [breakdown.PRIORITY[c] for c in breakdown.kernel_category_codes(corpus, classes, codes).tolist()]
    assert batch == [breakdown._device_kernel_category(name) for name in corpus]
    assert [breakdown.device_kernel_category(name) for name in corpus] == batch  # the cached form


@pytest.mark.parametrize("table", list(breakdown_names.TABLES.values()), ids=lambda t: t[0].id)
def test_first_matches_equal_first_match(table):
    rows = np.arange(len(CORPUS)) % 3 != 0
    found = event_names.first_matches(table, TextBatch(CORPUS), rows)
    for i, name in enumerate(CORPUS):
        expected = event_names.first_match(table, name) if rows[i] else None
        assert (table[found[i]] if found[i] >= 0 else None) is expected, name


def test_data_loading_annotations_equal_one_name_at_a_time():
    rows = np.ones(len(CORPUS), dtype=bool)
    found = event_names.data_loading_annotations(TextBatch(CORPUS), rows)
    assert found.tolist() == [event_names.is_data_loading_annotation(name) for name in CORPUS]


@pytest.mark.parametrize("block", [1 << 16, 7, 1])  # joined and folded a block of texts at a time: blocks met
@pytest.mark.parametrize("odd", ["x\ny", "xy"])  # a name holding the separator: no folding at all
def test_digit_folding_finds_literals_exactly_where_the_names_hold_them(odd, block, monkeypatch):
    monkeypatch.setattr(prefilter, "_BLOCK_TEXTS", block)
    texts = [f"loop_add_fusion_{i}" for i in range(40)] + ["ncclKernel_1", odd, "é16", "gemm16816"] * 3
    batch = TextBatch(texts)
    for literal in ("fusion", "add", "nccl", "16", "gemm", "ncclkernel_1", "y", "loop_add_fusion_3"):
        expected = [literal in text.lower() or not text.isascii() for text in texts]
        assert batch.holding((literal,)).tolist() == expected, literal
    assert (batch._folds is None) == ("\n" in odd)
    if batch._folds is not None:  # each text's folded form, whatever the blocks
        distinct, fold_of = batch._folds
        assert [distinct.texts[k] for k in fold_of.tolist()] == [
            t.lower().translate(str.maketrans("123456789", "0" * 9)) if t.isascii() else "" for t in texts]


def test_a_rare_literal_with_digits_is_checked_only_on_the_texts_whose_folded_form_holds_it():
    """`bf16` among 400 names: the folded texts (digits read as 0) name the five that may hold it
    (`bf16`, `bf32`), and each of those is tested; the answer is exactly where the names hold it."""
    texts = [f"loop_add_fusion_{i}" for i in range(395)]
    texts += ["gemm_bf16_a", "x_BF16", "gemm_bf32", "bf3_2", "k_bf16_bf32"]
    batch = TextBatch(texts)
    assert batch.digit_folds() is not None
    for literal in ("bf16", "bf32", "fusion_12", "_1", "k_bf16_bf32"):
        expected = [literal in text.lower() for text in texts]
        assert batch.holding((literal,)).tolist() == expected, literal


@pytest.mark.parametrize("texts, starts", [
    (["a", "b%", "c"], False),
    (["%x = f32[] add()", "b"], True),
    (["a", "%y = f32[] copy()"], True),
    (["é", "%é = bf16[] dot()"], True),  # a non-ASCII text is not in the joined scan: tested itself
    ([], False),
])
def test_short_names_share_the_names_batch_unless_some_name_is_hlo_text(texts, starts):
    batch = TextBatch(texts)
    assert batch.any_starting("%") is starts
    assert batch.any_starting("b") is any(t.startswith("b") for t in texts)  # a letter: no joined scan
    shorts = event_names.short_names(texts)
    assert (shorts is prefilter.text_batch(texts)) is not starts
    assert shorts.texts == [event_names.short_op_name(t) for t in texts]


def test_names_starting_with_a_prefix_are_found_exactly():
    texts = ["PjitFunction(f)", "x PjitFunction(f)", "pjitfunction(g)", "PjitFunction(", "é", "PjitFunctioné"]
    assert event_names.starting_with(texts, "PjitFunction(").tolist() == [t.startswith("PjitFunction(")
                                                                         for t in texts]


def test_the_name_cache_is_emptied_to_make_room_and_answers_stay_right(monkeypatch):
    """The per-name cache is bounded (NAME_CACHE_SIZE): a batch that would not fit empties it first, and
    names known before it still get their class."""
    monkeypatch.setattr(patterns, "NAME_CACHE_SIZE", 8)
    patterns.KERNEL_CLASSES.clear()
    old = CORPUS[:6]
    classify_kernels(old)
    assert set(patterns.KERNEL_CLASSES) == set(old)
    mixed = old[:3] + CORPUS[6:12]  # 6 new names: 6 + 6 > 8, so the cache is emptied first
    assert classify_kernels(mixed) == [patterns.classify_kernel(name) for name in mixed]
    assert len(patterns.KERNEL_CLASSES) <= 8
    patterns.KERNEL_CLASSES.clear()


def test_a_batch_larger_than_batch_remembered_is_classified_but_not_kept(monkeypatch):
    """A large batch is not remembered (its names would outlive their profile); what was remembered
    before stays, and the answers are the one-name classifier's."""
    monkeypatch.setattr(patterns, "BATCH_REMEMBERED", 4)
    patterns.KERNEL_CLASSES.clear()
    classify_kernels(CORPUS[:3])
    assert set(patterns.KERNEL_CLASSES) == set(CORPUS[:3])
    large = CORPUS[3:10]
    found = classify_kernels(large)
    assert set(patterns.KERNEL_CLASSES) == set(CORPUS[:3])
    patterns.KERNEL_CLASSES.clear()
    assert found == [patterns.classify_kernel(name) for name in large]
    patterns.KERNEL_CLASSES.clear()


@pytest.mark.parametrize("remembered", [4, 1 << 15])  # the batch classified as a whole, or through the cache
def test_kernel_codes_name_the_same_classes_as_classify_kernels(monkeypatch, remembered):
    """Per name an index into distinct classes (equal ones joined), each the one-name classifier's."""
    monkeypatch.setattr(patterns, "BATCH_REMEMBERED", remembered)
    patterns.KERNEL_CLASSES.clear()
    names = CORPUS + CORPUS[:5]  # a name twice: one class
    codes, classes = kernel_batch.classify_kernel_codes(names)
    assert len(set(classes)) == len(classes)
    assert [classes[c] for c in codes.tolist()] == [patterns.classify_kernel(name) for name in names]
    patterns.KERNEL_CLASSES.clear()
