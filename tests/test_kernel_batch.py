"""Classifying many names at once (kernel_batch.py, prefilter.TextBatch) decides exactly as one at a time.

Run over the pattern tests' real names and the prefilter's stress variants (upper case, cut, glued),
plus non-ASCII and empty names, which the batch filter must not skip.
"""

from __future__ import annotations

import numpy as np
import pytest
import test_breakdown_patterns as breakdown_names
from test_prefilter import NAMES

from tb_plugin_advisor.analysis import breakdown, event_names, patterns
from tb_plugin_advisor.analysis.kernel_batch import classify_kernels
from tb_plugin_advisor.analysis.prefilter import TextBatch

EXTRA = ["", "é_gemm_bf16", "void f<Ä>(half)", "ncclKernel_É", "İnput", "DataLoader#id=1#", "load\nbatch"]
CORPUS = list(dict.fromkeys(NAMES + EXTRA))


def test_batch_classes_equal_one_name_at_a_time():
    patterns.KERNEL_CLASSES.clear()
    batch = classify_kernels(CORPUS)
    patterns.KERNEL_CLASSES.clear()
    single = [patterns.classify_kernel(name) for name in CORPUS]
    assert batch == single


def test_batch_device_categories_equal_one_name_at_a_time():
    breakdown._CATEGORIES.clear()
    batch = breakdown.device_kernel_categories(CORPUS)
    assert batch == [breakdown._device_kernel_category(name) for name in CORPUS]
    assert [breakdown.device_kernel_category(name) for name in CORPUS] == batch  # the cache it filled


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
