"""The diff core on report dicts with known per-step numbers: deltas, significance, matching, wording."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from test_diff_reports import DEVICE, INPUT_HIGH, make_report, steps

from tb_plugin_advisor.diff import explain, rules
from tb_plugin_advisor.diff import stats as diff_stats
from tb_plugin_advisor.diff.compare import diff_reports, is_regression
from tb_plugin_advisor.diff.stats import STEP_TESTS, decide, shift_test, smallest_rank_p
from tb_plugin_advisor.diff.tdist import t_two_sided_quantile
from tb_plugin_advisor.formatting import format_pct, pct_number

MINUS = "\u2212"


# ---------------------------------------------------------------------------------------------------
# The statistics


def test_u_distribution_of_two_by_two_is_the_textbook_one():
    # Orderings of {x1,x2} vs {y1,y2}: U = 0,1,2,2,3,4 → counts 1,1,2,1,1 of 6.
    assert np.allclose(diff_stats._u_distribution(2, 2), np.array([1, 1, 2, 1, 1]) / 6)


def test_u_distribution_sums_to_one_and_is_symmetric():
    probs = diff_stats._u_distribution(7, 4)
    assert probs.shape == (29,)
    assert abs(probs.sum() - 1.0) < 1e-12
    assert np.allclose(probs, probs[::-1])


def test_complete_separation_of_five_and_five_steps_has_the_exact_p_value():
    result = shift_test([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert result.test == "mann_whitney_exact"
    assert abs(result.p_value - 2 / 252) < 1e-12  # 2 of C(10, 5) orderings are this extreme
    assert result.shift == 5.0
    assert result.ci == (1.0, 9.0)


def test_a_sample_against_itself_has_no_shift_and_p_one():
    x = [10.0, 11.5, 9.0, 10.2, 12.0, 9.9, 10.1]
    result = shift_test(x, x)
    assert result.test == "mann_whitney_normal"  # every value ties with its twin
    assert result.p_value == 1.0
    assert result.shift == 0.0
    assert result.ci[0] <= 0.0 <= result.ci[1]


def test_all_equal_values_are_not_different():
    result = shift_test([5.0] * 8, [5.0] * 9)
    assert result.p_value == 1.0 and result.shift == 0.0


def test_shift_is_antisymmetric_and_its_interval_holds_the_true_shift():
    rng = np.random.default_rng(7)
    base = rng.normal(100.0, 2.0, 40)
    cand = rng.normal(90.0, 2.0, 40)
    forward, backward = shift_test(base, cand), shift_test(cand, base)
    assert abs(forward.shift + backward.shift) < 1e-9
    assert abs(forward.p_value - backward.p_value) < 1e-12
    assert forward.ci[0] <= -10.0 <= forward.ci[1]
    assert abs(forward.shift + 10.0) <= 1.5


def test_normal_approximation_agrees_with_the_exact_test_where_both_apply():
    rng = np.random.default_rng(3)
    base, cand = rng.normal(100, 1, 40), rng.normal(100.6, 1, 50)
    exact = shift_test(base, cand)
    limit = diff_stats.SIGNIFICANCE["exact_max_pairs"]
    try:
        diff_stats.SIGNIFICANCE["exact_max_pairs"] = 0
        approx = shift_test(base, cand)
    finally:
        diff_stats.SIGNIFICANCE["exact_max_pairs"] = limit
    assert exact.test == "mann_whitney_exact" and approx.test == "mann_whitney_normal"
    assert abs(exact.p_value - approx.p_value) <= 0.1 * exact.p_value


def test_many_steps_use_thinned_order_statistics_and_still_find_the_shift():
    rng = np.random.default_rng(11)
    base, cand = rng.normal(50, 1, 3000), rng.normal(52, 1, 3000)
    result = shift_test(base, cand)
    assert result.test == "mann_whitney_normal"
    assert abs(result.shift - 2.0) <= 0.15
    assert result.ci[0] < 2.0 < result.ci[1]
    assert result.p_value < 1e-12


def test_no_steps_means_no_test():
    assert shift_test([], [1.0, 2.0]).test == "none"


# ---------------------------------------------------------------------------------------------------
# Few steps: the test by sample size (STEP_TESTS)


def _decided(base, cand):
    base, cand = np.asarray(base, dtype=float), np.asarray(cand, dtype=float)
    test = shift_test(base, cand)
    return test, decide(test, base.size, cand.size, float(np.median(base)), float(cand.mean() - base.mean()))


@pytest.mark.parametrize("n1, n2, test", [
    (5, 5, "mann_whitney_exact"), (5, 40, "mann_whitney_exact"), (4, 40, "welch_log"), (4, 4, "welch_log"),
    (3, 3, "welch_log"), (2, 9, "mann_whitney_exact"),
])
def test_step_tests_min_steps_choose_the_test(n1, n2, test):
    assert [(r["test"], r["min_steps"]) for r in STEP_TESTS] == [("mann_whitney", 5), ("welch", 3)]
    rng = np.random.default_rng(n1 * 100 + n2)
    assert shift_test(rng.normal(100, 2, n1), rng.normal(100, 2, n2)).test == test


def test_three_and_three_steps_far_apart_are_significant_by_welch_on_logs():
    """The exact rank test cannot go below p = 0.1 with 3 and 3 steps, however far apart."""
    assert smallest_rank_p(3, 3) == pytest.approx(0.1) and smallest_rank_p(4, 4) == pytest.approx(2 / 70)
    test, decision = _decided([100.0, 104.0, 98.0], [210.0, 201.0, 205.0])
    assert test.test == "welch_log" and test.p_value < 1e-3
    assert decision.significant and decision.code == "significant"
    assert test.shift == pytest.approx(math.exp(np.mean(np.log([210, 201, 205]))) - math.exp(np.mean(
        np.log([100, 104, 98]))), rel=1e-9)  # the geometric means' difference
    assert test.ci[0] < test.shift < test.ci[1]


def test_welch_matches_scipy_and_its_quantile_inverts_the_tail():
    scipy_stats = pytest.importorskip("scipy.stats")
    base, cand = [100.0, 104.0, 98.0, 120.0], [210.0, 201.0, 205.0]
    test = shift_test(base, cand)
    expected = scipy_stats.ttest_ind(np.log(cand), np.log(base), equal_var=False)
    assert test.p_value == pytest.approx(expected.pvalue, rel=1e-6)
    for df in (1.5, 4.0, 30.0):
        assert t_two_sided_quantile(0.01, df) == pytest.approx(scipy_stats.t.ppf(0.995, df), rel=1e-9)
    with_zero = shift_test([0.0, 1.0, 2.0], [5.0, 6.0, 7.0])  # a category can be 0 ms: on the values
    assert with_zero.test == "welch" and with_zero.shift == pytest.approx(5.0)
    raw = scipy_stats.ttest_ind([5.0, 6.0, 7.0], [0.0, 1.0, 2.0], equal_var=False)
    assert with_zero.p_value == pytest.approx(raw.pvalue, rel=1e-6)


@pytest.mark.parametrize("factor, significant", [(1.45, False), (1.55, True), (1 / 1.45, False),
                                                 (1 / 1.55, True)])
def test_step_tests_min_effect_pct_of_the_few_step_test_is_a_factor_either_way(factor, significant):
    assert STEP_TESTS[1]["min_effect_pct"] == 50.0
    base = [100.0, 100.5, 99.5, 100.2]
    test, decision = _decided(base, [v * factor for v in base])
    assert test.test == "welch_log" and test.p_value < 1e-4  # real, by the test
    assert decision.significant is significant
    if not significant:
        assert decision.code == "below_min_effect" and "below the 50 % change that 4 and 4 steps" in (
            decision.reason)


def test_fewer_steps_than_any_test_needs_say_so_with_the_smallest_p():
    test, decision = _decided([100.0, 101.0], [300.0, 301.0, 299.0, 302.0])
    assert test.test == "mann_whitney_exact" and test.p_value == pytest.approx(2 / 15)
    assert not decision.significant and decision.code == "too_few_steps"
    assert decision.reason.startswith("too few steps to test (2 and 4; the smallest p a rank test can "
                                      "give with them is 0.13")
    assert "noise" not in decision.reason


def test_same_config_pairs_of_four_steps_are_rarely_significant():
    """300 simulated pairs of same-configuration 4-step captures: each capture at its own level
    (±5 % between captures, the machine's drift) with steps ±1 % around it. Welch's p alone would
    call most of them changed; the minimum effect keeps them quiet. Seeded: the same figure always."""
    rng = np.random.default_rng(32)
    significant = by_p_alone = 0
    for _ in range(300):
        base, cand = (100.0 * math.exp(rng.normal(0, 0.05)) * np.exp(rng.normal(0, 0.01, 4))
                      for _ in range(2))
        test, decision = _decided(base, cand)
        significant += decision.significant
        by_p_alone += test.p_value < diff_stats.SIGNIFICANCE["alpha"]
    assert significant <= 3
    assert by_p_alone > 150  # what the minimum effect holds back (216 with this seed)


# ---------------------------------------------------------------------------------------------------
# Known deltas


def _input_fix_pair(n_base: int = 20, n_cand: int = 30):
    base = make_report("input_bound", steps(n_base, wobble=3.0, input=40.0, device_compute=60.0), INPUT_HIGH)
    cand = make_report("fixed", steps(n_cand, wobble=3.0, input=5.0, device_compute=60.0), DEVICE)
    return base, cand


def test_input_fix_is_measured_per_step_with_different_step_counts():
    base, cand = _input_fix_pair()
    diff = diff_reports(base, cand)
    st = diff["step_time"]
    assert diff["schema"] == "tb-advisor/diff/1"
    assert (diff["baseline"], diff["candidate"]) == ("input_bound", "fixed")
    assert (st["baseline_steps"], st["candidate_steps"]) == (20, 30)
    assert abs(st["baseline_ms"] - 100.0) < 1e-9 and abs(st["candidate_ms"] - 65.0) < 1e-9
    assert abs(st["delta_pct"] - (-35.0)) <= 0.01
    assert abs(st["shift_ms"] - (-35.0)) <= 1.0
    assert st["significant"] is True
    assert st["p_value"] < 1e-6
    assert 0 < st["noise_pct"] < 5.0
    assert abs(diff["breakdown_delta_ms"]["input"] - (-35.0)) <= 1e-9
    assert abs(diff["breakdown_delta_ms"]["device_compute"]) <= 1e-9
    assert diff["breakdown"]["input"]["significant"] is True
    assert diff["breakdown"]["device_compute"]["significant"] is False
    assert diff["verdict"]["baseline"]["bottleneck"] == "input"
    assert diff["verdict"]["candidate"]["bottleneck"] == "device"


def test_input_fix_is_explained_in_words_that_follow_the_numbers():
    base, cand = _input_fix_pair()
    summary = diff_reports(base, cand)["summary"]
    assert summary.startswith(
        f"Step time {MINUS}35 % (100 \u2192 65.0 ms, significant): input wait {MINUS}35.0 ms "
        "\u2014 the input pipeline is no longer on the critical path."
    )
    assert "Bottleneck: input pipeline \u2192 device compute." in summary


def test_input_regression_is_explained_the_other_way_round():
    base, cand = _input_fix_pair()
    diff = diff_reports(cand, base)
    assert diff["summary"].startswith(
        "Step time +54 % (65.0 \u2192 100 ms, significant): input wait +35.0 ms "
        "\u2014 the input pipeline is now on the critical path."
    )


def test_a_run_diffed_with_itself_changes_nothing():
    base, _ = _input_fix_pair()
    diff = diff_reports(base, base)
    st = diff["step_time"]
    assert st["significant"] is False and st["p_value"] == 1.0
    assert st["delta_pct"] == 0.0 and st["shift_ms"] == 0.0
    assert all(v == 0.0 for v in diff["breakdown_delta_ms"].values())
    assert not any(row["significant"] for row in diff["breakdown"].values())
    assert diff["summary"].startswith("Step time unchanged (100 \u2192 100 ms, not significant, noise \u00b1")
    assert "Bottleneck unchanged: input pipeline." in diff["summary"]


def test_same_distribution_is_not_significant_and_says_how_noisy():
    rng = np.random.default_rng(5)
    base = make_report("a", [{"device_compute": float(v)} for v in rng.normal(100, 5, 25)])
    cand = make_report("b", [{"device_compute": float(v)} for v in rng.normal(100, 5, 25)])
    diff = diff_reports(base, cand)
    st = diff["step_time"]
    assert st["significant"] is False
    assert st["p_value"] >= diff_stats.SIGNIFICANCE["alpha"]
    assert 1.0 < st["noise_pct"] < 6.0  # 5 % spread, 25 steps: a few percent
    assert f"not significant, noise \u00b1{explain.fmt_share(st['noise_pct'])} %" in diff["summary"]
    assert "device compute" not in diff["summary"]  # noise is not narrated


def test_four_steps_a_run_call_a_twofold_change_and_name_the_test():
    base = make_report("a", steps(4, wobble=1.0, device_compute=100.0))
    cand = make_report("b", steps(4, wobble=1.0, device_compute=50.0))
    diff = diff_reports(base, cand)
    st = diff["step_time"]
    assert abs(st["delta_pct"] + 50.0) <= 0.01
    assert st["significant"] is True and st["test"] == "welch_log" and st["reason_code"] == "significant"
    assert st["min_effect_pct"] == 50.0
    assert diff["summary"].startswith(f"Step time {MINUS}50 % (100 \u2192 50.0 ms, significant)")
    assert "Only 4 and 4 steps" not in diff["summary"]


def test_four_steps_a_run_do_not_call_a_smaller_change_and_say_why():
    base = make_report("a", steps(4, wobble=1.0, device_compute=100.0))
    cand = make_report("b", steps(4, wobble=1.0, device_compute=80.0))
    diff = diff_reports(base, cand)
    st = diff["step_time"]
    assert st["significant"] is False and st["p_value"] < 0.01 and st["reason_code"] == "below_min_effect"
    assert "below the 50 % so few steps can call" in diff["summary"]
    assert ("Only 4 and 4 steps were profiled: a change below 50 % cannot be told from the drift between "
            "runs; profile at least 5 steps per run to judge smaller ones.") in diff["summary"]
    assert "noise" not in diff["summary"]


def test_two_steps_are_too_few_to_test_however_large_the_change():
    base = make_report("a", steps(2, wobble=1.0, device_compute=100.0))
    cand = make_report("b", steps(2, wobble=1.0, device_compute=50.0))
    diff = diff_reports(base, cand)
    st = diff["step_time"]
    assert st["significant"] is False and st["reason_code"] == "too_few_steps"
    assert st["reason"].startswith("too few steps to test (2 and 2; the smallest p a rank test can give "
                                   "with them is 0.33")
    assert "too few steps to test)" in diff["summary"]
    assert "Only 2 and 2 steps were profiled: too few to test" in diff["summary"]
    assert "noise" not in diff["summary"]


def test_a_tiny_but_consistent_shift_is_real_yet_not_called_significant():
    base = make_report("a", steps(200, wobble=0.05, device_compute=100.0))
    cand = make_report("b", steps(200, wobble=0.05, device_compute=100.5))
    st = diff_reports(base, cand)["step_time"]
    assert st["p_value"] < 1e-10
    assert abs(st["delta_pct"] - 0.5) <= 0.01
    assert st["significant"] is False
    assert "below 1 %" in st["reason"]


def test_mean_and_median_moving_apart_is_not_significant():
    # Most candidate steps are a little faster, but one enormous step makes the mean slower.
    base = make_report("a", steps(20, wobble=0.2, device_compute=100.0))
    fast = steps(20, wobble=0.2, device_compute=97.0)
    fast[0]["device_compute"] = 200.0
    diff = diff_reports(base, make_report("b", fast))
    st = diff["step_time"]
    assert st["delta_pct"] > 0 and st["shift_ms"] < 0 and st["p_value"] < 0.01
    assert st["significant"] is False
    assert "opposite directions" in st["reason"]


def test_missing_per_step_times_give_no_verdict_and_a_warning():
    base, cand = _input_fix_pair()
    for report in (base, cand):
        report["steps"].pop("times_ms")
        report["steps"].pop("per_step")
    diff = diff_reports(base, cand)
    st = diff["step_time"]
    assert st["test"] == "none" and st["significant"] is False and st["noise_pct"] is None
    assert abs(st["delta_pct"] + 35.0) <= 0.01  # the means still compare
    assert any("no per-step times" in w for w in diff["warnings"])


def test_a_run_without_steps_cannot_be_compared_and_says_so():
    base, _ = _input_fix_pair()
    empty = make_report("empty", [])
    empty["steps"].update({"mean_ms": None, "median_ms": None})
    diff = diff_reports(base, empty)
    assert diff["step_time"]["candidate_ms"] is None and diff["step_time"]["delta_pct"] is None
    assert diff["summary"].startswith("Step time could not be compared: the candidate has no steps.")


# ---------------------------------------------------------------------------------------------------
# Precision, Tensor Cores, memory


def _precision_pair():
    base = make_report(
        "fp32",
        steps(12, wobble=1.0, device_compute=100.0, host_compute=20.0),
        DEVICE,
        precision_pct={"fp32": 100.0, "fp16": 0.0},
        tensor_core_pct=0.0,
        peak_memory_bytes=4 * 2**30,
    )
    cand = make_report(
        "amp",
        steps(12, wobble=1.0, device_compute=54.0, host_compute=20.0),
        DEVICE,
        precision_pct={"fp32": 13.0, "fp16": 87.0},
        tensor_core_pct=71.0,
        peak_memory_bytes=3 * 2**30,
    )
    return base, cand


def test_mixed_precision_shows_as_share_deltas_and_in_words():
    diff = diff_reports(*_precision_pair())
    assert abs(diff["precision_delta_pct"]["fp16"] - 87.0) < 1e-9
    assert abs(diff["precision_delta_pct"]["fp32"] + 87.0) < 1e-9
    assert abs(diff["tensor_cores_delta_pct"] - 71.0) < 1e-9
    assert diff["tensor_cores_pct"] == {"baseline": 0.0, "candidate": 71.0}
    assert abs(diff["breakdown"]["device_compute"]["delta_pct"] + 46.0) <= 0.01
    assert (
        f"Device compute {MINUS}46 %: fp16 share 0 \u2192 87 %, Tensor Core share 0 \u2192 71 %."
        in diff["summary"]
    )
    assert diff["summary"].startswith(
        f"Step time {MINUS}38 % (120 \u2192 74.0 ms, significant): device compute"
    )


def test_peak_memory_is_compared_where_both_runs_have_it():
    diff = diff_reports(*_precision_pair())
    memory = diff["peak_memory_bytes"]
    assert memory["baseline"] == 4 * 2**30 and memory["candidate"] == 3 * 2**30
    assert memory["delta_bytes"] == -(2**30)
    assert abs(memory["delta_pct"] + 25.0) < 1e-9
    assert f"Peak device memory 4.0 GiB \u2192 3.0 GiB ({MINUS}25 %)." in diff["summary"]


def test_peak_memory_missing_on_one_side_is_not_invented():
    base, cand = _precision_pair()
    cand["peak_memory_bytes"] = None
    diff = diff_reports(base, cand)
    assert diff["peak_memory_bytes"]["candidate"] is None
    assert diff["peak_memory_bytes"]["delta_pct"] is None
    assert "Peak device memory" not in diff["summary"]


def test_small_share_moves_are_not_narrated():
    base, cand = _precision_pair()
    cand["precision_pct"] = {"fp32": 97.0, "fp16": 3.0}
    cand["tensor_cores"]["device_time_pct"] = 2.0
    diff = diff_reports(base, cand)
    assert abs(diff["precision_delta_pct"]["fp16"] - 3.0) < 1e-9
    assert "share" not in diff["summary"]


# ---------------------------------------------------------------------------------------------------
# Verdict, ops and kernels


def test_bottleneck_change_is_named():
    base = make_report("a", steps(10, wobble=1.0, device_compute=80.0, host_compute=20.0), DEVICE)
    host = {"bottleneck": "host", "input_bound": "low", "input_pct": 0.0, "summary": ""}
    cand = make_report("b", steps(10, wobble=1.0, device_compute=30.0, host_compute=70.0), host)
    summary = diff_reports(base, cand)["summary"]
    assert "Bottleneck: device compute \u2192 host compute." in summary
    # Step time is the same; both categories moved for real, so they are named.
    assert summary.startswith("Step time unchanged (100 \u2192 100 ms, not significant")
    assert f"device compute {MINUS}50.0 ms" in summary and "host compute +50.0 ms" in summary


def _op(name, time_ms, count=1.0, category="device_compute"):
    return {"name": name, "category": category, "time_ms": time_ms, "count": count}


def test_ops_with_renumbered_instances_are_matched_as_one_group():
    base_ops = [
        _op("sequential/conv2d/Conv2D:Conv2D", 10.0),
        _op("sequential/conv2d_1/Conv2D:Conv2D", 20.0),
        _op("sequential/dense/MatMul:MatMul", 5.0),
    ]
    cand_ops = [
        _op("sequential_1/conv2d_2/Conv2D:Conv2D", 8.0),
        _op("sequential_1/conv2d_3/Conv2D:Conv2D", 15.0),
        _op("sequential_1/dense_1/MatMul:MatMul", 5.5),
    ]
    base = make_report("a", steps(10, device_compute=100.0), ops=base_ops)
    cand = make_report("b", steps(10, device_compute=90.0), ops=cand_ops)
    ops = diff_reports(base, cand)["ops"]
    assert [r["name"] for r in ops] == ["sequential/conv2d/Conv2D:Conv2D", "sequential/dense/MatMul:MatMul"]
    conv = ops[0]
    assert conv["match"] == "normalised" and conv["status"] == "changed"
    assert conv["instances"] == {"baseline": 2, "candidate": 2}
    assert (conv["baseline_ms"], conv["candidate_ms"]) == (30.0, 23.0)
    assert abs(conv["delta_ms"] + 7.0) < 1e-9
    assert ops[1]["status"] == "changed" and abs(ops[1]["delta_ms"] - 0.5) < 1e-9


def test_identical_names_keep_per_layer_detail():
    names = ["model/layer_0/MatMul:MatMul", "model/layer_1/MatMul:MatMul", "model/layer_2/MatMul:MatMul"]
    base = make_report("a", steps(10, device_compute=100.0), ops=[_op(n, 10.0) for n in names])
    cand = make_report(
        "b", steps(10, device_compute=100.0), ops=[_op(n, t) for n, t in zip(names, (10, 14, 9))]
    )
    ops = diff_reports(base, cand)["ops"]
    assert [r["name"] for r in ops] == [names[1], names[2], names[0]]  # by |Δ|: +4, −1, 0
    assert all(r["match"] == "exact" and r["key"] == "model/layer/MatMul:MatMul" for r in ops)
    assert [r["delta_ms"] for r in ops] == [4.0, -1.0, 0.0]


def test_new_and_vanished_ops_are_listed_and_narrated():
    base_ops = [_op("model/conv/Conv2D:Conv2D", 50.0), _op("IteratorGetNext", 30.0, category="input")]
    cand_ops = [_op("model/conv/Conv2D:Conv2D", 40.0), _op("model/conv/Cast:Cast", 6.0)]
    base = make_report("a", steps(10, wobble=1.0, device_compute=70.0, input=30.0), INPUT_HIGH, ops=base_ops)
    cand = make_report("b", steps(10, wobble=1.0, device_compute=56.0), DEVICE, ops=cand_ops)
    diff = diff_reports(base, cand)
    by_name = {r["name"]: r for r in diff["ops"]}
    assert by_name["IteratorGetNext"]["status"] == "vanished"
    assert by_name["IteratorGetNext"]["candidate_ms"] == 0.0
    assert by_name["model/conv/Cast:Cast"]["status"] == "new"
    assert by_name["model/conv/Conv2D:Conv2D"]["status"] == "changed"
    assert [r["name"] for r in diff["ops"]] == [
        "IteratorGetNext",
        "model/conv/Conv2D:Conv2D",
        "model/conv/Cast:Cast",
    ]
    s = diff["summary"]
    assert f"Largest op changes per step: model/conv/Conv2D:Conv2D {MINUS}10.0 ms." in s
    assert "New ops: model/conv/Cast:Cast (6.00 ms)." in s
    assert "Vanished ops: IteratorGetNext (30.0 ms)." in s


def test_kernels_are_matched_across_xla_fusion_renumbering():
    base_k = [{"name": "loop_fusion_4", "uses_tensor_cores": False, "precision": "fp32", "time_ms": 3.0}]
    base_k.append(
        {"name": "ampere_sgemm_128x64_nn", "uses_tensor_cores": False, "precision": "fp32", "time_ms": 9.0}
    )
    cand_k = [{"name": "loop_fusion_7", "uses_tensor_cores": False, "precision": "bf16", "time_ms": 2.0}]
    cand_k.append(
        {"name": "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", "uses_tensor_cores": True, "time_ms": 4.0}
    )
    base = make_report("a", steps(6, device_compute=20.0), kernels=base_k)
    cand = make_report("b", steps(6, device_compute=10.0), kernels=cand_k)
    kernels = {r["name"]: r for r in diff_reports(base, cand)["kernels"]}
    assert kernels["loop_fusion"]["status"] == "changed" and kernels["loop_fusion"]["delta_ms"] == -1.0
    assert kernels["ampere_sgemm_128x64_nn"]["status"] == "vanished"
    assert kernels["ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"]["status"] == "new"


def test_kernels_fall_back_to_the_tensor_core_list_of_older_reports():
    k = [{"name": "volta_sgemm_128x64_nn", "uses_tensor_cores": False, "precision": "fp32", "time_ms": 5.0}]
    base = make_report("a", steps(6, device_compute=20.0), kernels=k)
    cand = make_report("b", steps(6, device_compute=20.0), kernels=[dict(k[0], time_ms=7.0)])
    for report in (base, cand):
        report.pop("kernels")
    (row,) = diff_reports(base, cand)["kernels"]
    assert row["name"] == "volta_sgemm_128x64_nn" and row["delta_ms"] == 2.0


def test_ops_missing_from_a_cut_list_are_uncertain_and_not_narrated():
    limit = rules.REPORT_LIST_LIMIT
    full = [_op(f"model/op{i}/Add:AddV2", 1.0 + i / 1000) for i in range(limit)]
    base = make_report("a", steps(10, device_compute=400.0), ops=full)
    cand_ops = full[:-1] + [_op("model/extra/Mul:Mul", 8.0)]  # the cut list's last op fell off, one op new
    cand = make_report("b", steps(10, device_compute=400.0), ops=cand_ops)
    rows = {r["name"]: r for r in diff_reports(base, cand)["ops"]}
    extra, last = rows["model/extra/Mul:Mul"], rows[f"model/op{limit - 1}/Add:AddV2"]
    assert extra["status"] == "new" and extra["uncertain"] is True  # the baseline list was full
    assert last["status"] == "vanished" and last["uncertain"] is True
    assert rows["model/op0/Add:AddV2"]["uncertain"] is False
    summary = diff_reports(base, cand)["summary"]
    assert "New ops" not in summary and "Vanished ops" not in summary
    short = make_report("c", steps(10, device_compute=400.0), ops=full[:10])
    new = [r for r in diff_reports(short, cand)["ops"] if r["status"] == "new"]
    assert len(new) == limit - 10 and not any(r["uncertain"] for r in new)  # a short list is complete


def test_warm_up_steps_are_left_out_as_in_the_report():
    base = make_report("a", steps(10, wobble=1.0, device_compute=100.0))
    cand = make_report("b", steps(10, wobble=1.0, device_compute=100.0))
    for report, slow in ((base, 900.0), (cand, 100.0)):
        first = report["steps"]["per_step"][0]
        first["warmup"] = True
        first["total_ms"] = slow
        first["breakdown_ms"]["device_compute"] = slow
    st = diff_reports(base, cand)["step_time"]
    assert (st["baseline_steps"], st["candidate_steps"]) == (9, 9)
    assert st["p_value"] > 0.5 and st["significant"] is False


# ---------------------------------------------------------------------------------------------------
# The regression gate and the JSON


def _slower_pair(pct: float, n: int = 15):
    base = make_report("a", steps(n, wobble=1.0, device_compute=100.0))
    cand = make_report("b", steps(n, wobble=1.0, device_compute=100.0 + pct))
    return diff_reports(base, cand)


def test_gate_trips_only_beyond_the_threshold_when_significant():
    diff = _slower_pair(20.0)
    assert diff["step_time"]["significant"] is True
    assert is_regression(diff, 10.0) is True
    assert is_regression(diff, 19.9) is True
    assert is_regression(diff, 20.1) is False
    assert is_regression(diff, 50.0) is False


def test_gate_ignores_an_insignificant_slowdown():
    diff = _slower_pair(20.0, n=4)  # 4 steps: never significant
    assert abs(diff["step_time"]["delta_pct"] - 20.0) <= 0.01
    assert is_regression(diff, 5.0) is False


def test_gate_ignores_a_faster_candidate():
    assert is_regression(_slower_pair(-20.0), 0.0) is False


def test_gate_ignores_a_mean_pushed_up_by_one_outlier():
    base = make_report("a", steps(20, wobble=0.5, device_compute=100.0))
    cand_steps = steps(20, wobble=0.5, device_compute=103.0)
    cand_steps[0]["device_compute"] = 600.0
    diff = diff_reports(base, make_report("b", cand_steps))
    assert diff["step_time"]["delta_pct"] > 20.0
    assert diff["step_time"]["median_delta_pct"] < 5.0
    assert is_regression(diff, 10.0) is False


def test_the_diff_is_plain_json():
    diff = diff_reports(*_precision_pair())
    text = json.dumps(diff, allow_nan=False)
    again = json.loads(text)
    assert again["step_time"]["significant"] is True
    for key in (
        "baseline_ms",
        "candidate_ms",
        "delta_pct",
        "baseline_median_ms",
        "candidate_median_ms",
        "noise_pct",
    ):
        assert isinstance(again["step_time"][key], float) and math.isfinite(again["step_time"][key])
    assert set(again["verdict"]) == {"baseline", "candidate"}
    assert set(again["peak_memory_bytes"]) >= {"baseline", "candidate"}


@pytest.mark.parametrize(
    "value, text",
    [
        (812.4, "812"),
        (-296.0, f"{MINUS}296"),
        (65.0, "65.0"),
        (6.0, "6.00"),
        (0.0123, "0.012"),
        (-0.0001, "0.000"),
    ],
)
def test_ms_formatting(value, text):
    assert explain.fmt_ms(value) == text


@pytest.mark.parametrize(
    "value, text",
    [(-38.07, f"{MINUS}38 %"), (4.25, "+4.3 %"), (12.5, "+13 %"), (-12.5, f"{MINUS}13 %"),
     (0.01, "\u00b10 %"), (-0.04, "\u00b10 %")],
)
def test_pct_formatting(value, text):
    """Halves round up, as the tab's toFixed and formatting.py do (Python's :.0f gives 12 and 4.2)."""
    assert explain.fmt_signed_pct(value) == text


@pytest.mark.parametrize("value, text", [(12.5, "13"), (4.25, "4.3"), (0.25, "0.3"), (87.5, "88")])
def test_shares_round_halves_up_like_the_tab(value, text):
    assert explain.fmt_share(value) == text
    assert pct_number(value) == text  # the rule the tab and the exports share


def test_a_share_at_a_half_reads_the_same_in_the_diff_summary_as_in_the_tab():
    """12.5 % fp16 in the candidate: the summary says 13 %, as the tab's format.ts writes 12.5."""
    base = make_report("fp32", steps(12, wobble=1.0, device_compute=100.0, host_compute=20.0), DEVICE,
                       precision_pct={"fp32": 100.0, "fp16": 0.0}, tensor_core_pct=0.0)
    cand = make_report("amp", steps(12, wobble=1.0, device_compute=54.0, host_compute=20.0), DEVICE,
                       precision_pct={"fp32": 87.5, "fp16": 12.5}, tensor_core_pct=12.5)
    summary = diff_reports(base, cand)["summary"]
    assert "fp16 share 0 \u2192 13 %" in summary
    assert "Tensor Core share 0 \u2192 13 %" in summary
    assert format_pct(12.5) == "13 %"


@pytest.mark.parametrize("rule", rules.INPUT_INTERPRETATIONS, ids=[r[0] for r in rules.INPUT_INTERPRETATIONS])
def test_each_input_interpretation_follows_the_verdicts_and_the_input_wait(rule):
    _id, was, now, phrase = rule
    better = now[0] == "low" or (was[0] == "high" and now[0] == "moderate")
    before_ms, after_ms = (40.0, 5.0) if better else (5.0, 40.0)

    def verdict(level):
        return {
            "bottleneck": "input" if level == "high" else "device",
            "input_bound": level,
            "input_pct": 0.0,
        }

    base = make_report("a", steps(10, wobble=1.0, input=before_ms, device_compute=60.0), verdict(was[0]))
    cand = make_report("b", steps(10, wobble=1.0, input=after_ms, device_compute=60.0), verdict(now[0]))
    assert f"\u2014 {phrase}." in diff_reports(base, cand)["summary"]
    # Same verdicts, but the measured input wait did not move: the phrase would not follow the numbers.
    flat = make_report("c", steps(10, wobble=1.0, input=before_ms, device_compute=60.0), verdict(now[0]))
    assert phrase not in diff_reports(base, flat)["summary"]


def test_sixteen_bit_that_made_host_compute_slower_is_called_emulated():
    cpu = {"bottleneck": "host", "input_bound": "low", "input_pct": 1.0, "summary": "host-bound"}
    base = make_report("fp32", steps(10, wobble=1.0, host_compute=60.0), cpu, precision_pct={"fp32": 100.0})
    slower = make_report(
        "bf16", steps(10, wobble=1.0, host_compute=480.0), cpu, precision_pct={"fp32": 11.0, "bf16": 89.0}
    )
    diff = diff_reports(base, slower)
    assert "The 16-bit ops got slower, not faster: this CPU does not run bf16 natively" in diff["summary"]
    # the same bf16 share with compute getting faster is the normal case: no such sentence
    faster = make_report(
        "bf16", steps(10, wobble=1.0, host_compute=30.0), cpu, precision_pct={"fp32": 11.0, "bf16": 89.0}
    )
    assert "got slower" not in diff_reports(base, faster)["summary"]
    # and a slower step without a 16-bit change is not blamed on precision
    same_precision = make_report("fp32b", steps(10, wobble=1.0, host_compute=480.0), cpu,
                                 precision_pct={"fp32": 100.0})
    assert "got slower" not in diff_reports(base, same_precision)["summary"]


# ---------------------------------------------------------------------------------------------------
# Shares follow the same rules as times (issue 11, point 6)


def test_share_noise_on_identical_steps_is_no_change():
    cpu = {"bottleneck": "host", "input_bound": "low", "input_pct": 1.0, "summary": "host-bound"}
    step_rows = steps(10, wobble=1.0, host_compute=60.0)
    base = make_report("a", step_rows, cpu, precision_pct={"fp32": 81.0, "unknown": 19.0})
    same = make_report("b", step_rows, cpu, precision_pct={"fp32": 71.0, "unknown": 29.0})
    diff = diff_reports(base, same)
    assert diff["precision_delta_pct"]["fp32"] == pytest.approx(-10.0)
    assert diff["precision_significant"]["fp32"] is False
    assert diff["significant_change"] is False
    assert "share" not in diff["summary"] and "No significant change in any section." in diff["summary"]


def test_share_move_with_a_verdict_change_or_real_compute_change_is_named():
    cpu = {"bottleneck": "host", "input_bound": "low", "input_pct": 1.0, "summary": "host-bound"}
    base = make_report("a", steps(10, wobble=1.0, host_compute=60.0), cpu, precision_pct={"fp32": 100.0})
    base["precision"] = {"verdict": "not_active", "basis": "host"}
    flipped = make_report("b", steps(10, wobble=1.0, host_compute=60.0), cpu,
                          precision_pct={"fp32": 40.0, "bf16": 60.0})
    flipped["precision"] = {"verdict": "active", "basis": "host"}
    diff = diff_reports(base, flipped)
    assert diff["precision_significant"]["bf16"] is True and diff["significant_change"] is True
    assert "bf16 share 0 \u2192 60 %" in diff["summary"]
    slower = make_report("c", steps(10, wobble=1.0, host_compute=90.0), cpu, precision_pct={"fp32": 90.0})
    slower["precision"] = {"verdict": "not_active", "basis": "host"}
    moved = diff_reports(base, slower)
    assert moved["precision_significant"]["fp32"] is True  # host compute moved significantly
    below = make_report("d", steps(10, wobble=1.0, host_compute=90.0), cpu, precision_pct={"fp32": 96.0})
    below["precision"] = {"verdict": "not_active", "basis": "host"}
    assert diff_reports(base, below)["precision_significant"]["fp32"] is False  # 4 < 5 points
