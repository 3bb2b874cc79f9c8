"""The op table keeps its first `limit` rows exactly as sorting every row would (ops._top_rows computes
familiar names only for rows that can make the cut), ties at the cut and oneDNN renames included."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tb_plugin_advisor.analysis.classify.onednn_ops import familiar_tf_op
from tb_plugin_advisor.analysis.step_time.ops import OpRow, _by_label, _top_rows, _Totals


def every_row_sorted(totals, n, limit):
    rows = []
    for (name, category), (t, c) in totals.items():
        familiar, onednn = familiar_tf_op(name)
        rows.append(OpRow(familiar, category, t / 1e6 / n, c / n, onednn))
    rows.sort(key=lambda r: (-r.time_ms, r.name))
    return rows[:limit]


@pytest.mark.parametrize("seed", range(40))
def test_top_rows_equal_sorting_every_row(seed):
    r = random.Random(seed)
    types = ["MatMul", "_MklMatMul", "_MklFusedConv2D", "Relu", "AddV2"]
    totals = {}
    for i in range(r.randint(0, 60)):
        name = f"model/layer_{r.randint(0, 9)}/op:{r.choice(types)}"
        key = (name if r.random() < 0.8 else f"kernel_{i}", r.choice(["device_compute", "memcpy"]))
        totals[key] = [float(r.choice([1000, 2000, 3000, r.randint(0, 10**7)])), float(r.randint(1, 9))]
    n = r.randint(1, 7)
    table = _Totals()
    table.add([k[0] for k in totals], [k[1] for k in totals], [v[0] for v in totals.values()],
              [v[1] for v in totals.values()])
    for limit in (0, 1, 3, 10, 100):
        assert _top_rows(table, n, limit) == every_row_sorted(totals, n, limit)


def test_totals_add_up_per_label_and_category_in_first_seen_order():
    table = _Totals()
    table.add(["a", "b", "a"], ["x", "x", "y"], [1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    table.add(["b", "a"], ["x", "y"], [0.5, 0.25], [2.0, 1.0])
    assert list(zip(table.labels, table.categories, table.time, table.count)) == [
        ("a", "x", 1.0, 1.0), ("b", "x", 2.5, 3.0), ("a", "y", 3.25, 2.0)]


def test_a_first_batch_with_repeated_rows_and_later_batches_add_up_as_one_by_one():
    """The first batch is taken whole only when its rows are distinct; otherwise, and for every later
    batch, rows add up one by one (the position index is built when the second batch comes)."""
    table = _Totals()
    table.add(["a", "a", "b"], ["x", "x", "x"], [1, 2, 3], [1, 1, 1])  # "a" twice: added up
    assert list(zip(table.labels, table.time, table.count)) == [("a", 3.0, 2.0), ("b", 3.0, 1.0)]
    whole = _Totals()
    whole.add(["a", "b"], ["x", "x"], [1, 3], [1, 1])
    whole.add(["b", "c", "a"], ["x", "x", "y"], [1, 1, 1], [1, 1, 1])
    whole.add([], [], [], [])
    assert list(zip(whole.labels, whole.categories, whole.time, whole.count)) == [
        ("a", "x", 1.0, 1.0), ("b", "x", 4.0, 2.0), ("c", "x", 1.0, 1.0), ("a", "y", 1.0, 1.0)]
    assert all(type(t) is float for t in whole.time + whole.count)


@pytest.mark.parametrize("seed", range(5))
def test_op_sums_by_label_and_category_as_row_by_row_merging(seed):
    """(label, kernel) sums become (label, category) sums in the order each pair is first seen, with the
    sums the row-by-row merge gives."""
    rng = np.random.default_rng(seed)
    n = 400
    label = rng.integers(0, 30, size=n)
    category = rng.integers(0, 3, size=n).astype(np.int8)
    time = rng.integers(0, 10**9, size=n).astype(np.float64)
    count = rng.integers(1, 50, size=n)
    merged = {}
    for key in zip(label.tolist(), category.tolist(), time.tolist(), count.tolist()):
        t, c = merged.get(key[:2], (0.0, 0.0))
        merged[key[:2]] = (t + key[2], c + key[3])
    got = _by_label(label, category, time, count)
    assert list(zip(got[0].tolist(), got[1].tolist())) == list(merged)  # first-seen order
    assert list(zip(got[2].tolist(), got[3].tolist())) == list(merged.values())
