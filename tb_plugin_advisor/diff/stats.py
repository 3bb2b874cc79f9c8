"""Is a change between two runs real? A test on per-step values chosen by how many steps there are
(see diff/compare.py's docstring), and the significance rule (level, minimum steps, minimum effect)
used for step times, breakdown categories and shares alike.

* Enough steps: Mann–Whitney U with its exact or normal null distribution, and the Hodges–Lehmann
  shift with its distribution-free confidence interval. It assumes nothing about the shape of the
  step times, but it cannot speak with few of them: with 4 and 4 steps its smallest two-sided p is
  2 / C(8, 4) = 0.029, above the level however far apart the steps are, and PyTorch's tutorials
  profile `active=3` or 4.
* Few steps: Welch's t on the logs of the step times (their ratio; times are skewed, logs much
  less), which reaches any level when the steps are far apart for their spread. With few steps a
  run, though, nothing measures how far two runs of one configuration drift apart (clocks, other
  tenants: 10–35 % on a shared 2-core machine), and a test on tight steps calls that drift
  significant; so the few-step test only speaks for a change of at least STEP_TESTS' min_effect_pct.
* Fewer still: no test can decide, and the reason says so, with the smallest p one could give.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.diff.tdist import t_two_sided_p, t_two_sided_quantile
from tb_plugin_advisor.formatting import plain, significant

SIGNIFICANCE = {
    "alpha": 0.01,  # two-sided level of the tests
    "exact_max_pairs": 2500,  # exact U distribution up to n1*n2 pairs without ties
    "max_pairs": 1_000_000,  # above this, Hodges–Lehmann uses evenly spaced order statistics
}

# The test for per-step values: the first row whose `min_steps` both runs reach. A change is only
# significant when it is at least `min_effect_pct` either way (the candidate at least 1 + pct/100
# times the baseline, or at most its 1 / (1 + pct/100)), whatever the p-value.
STEP_TESTS = (
    # 5 vs 5 is where the exact rank test first reaches the level (p = 2/252 = 0.0079); 1 %: a
    # smaller shift is real on long runs but no one acts on it.
    {"test": "mann_whitney", "min_steps": 5, "min_effect_pct": 1.0},
    # Three steps give a spread with two degrees of freedom. 50 %: two runs of one configuration
    # drift apart by up to ~35 % on a shared 2-core machine (five runs measured 119 to 160 ms) and
    # ~20 % on the H200 repeats; in simulated same-config pairs of 4-step runs (±5 % between runs)
    # the rule keeps false changes near zero (tests/diff/test_diff.py), and a 2x change still shows.
    {"test": "welch", "min_steps": 3, "min_effect_pct": 50.0},
)

# ---------------------------------------------------------------------------------------------------
# Statistics


def _ranks(values: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """1-based mid-ranks of `values`, and the sizes of the tie groups."""
    order = np.argsort(values, kind="mergesort")
    _, first, counts = np.unique(values[order], return_index=True, return_counts=True)
    ranks = np.empty(values.shape[0], dtype=float)
    ranks[order] = np.repeat(first + (counts + 1) / 2.0, counts)
    return ranks, counts


@lru_cache(maxsize=64)
def _u_distribution(n1: int, n2: int) -> np.ndarray:
    """P(U = u), u = 0 … n1·n2, for two samples without ties (U counts pairs where sample 1 wins).

    Recurrence on the largest of all values: from sample 1 it beats all n2 values of sample 2
    (shift by n2) and leaves (n1-1, n2); from sample 2 it leaves (n1, n2-1).
    """
    previous = [np.ones(1) for _ in range(n2 + 1)]  # f(0, n) = [1]
    for m in range(1, n1 + 1):
        row = [np.ones(1)]  # f(m, 0) = [1]
        for n in range(1, n2 + 1):
            out = np.zeros(m * n + 1)
            a = previous[n]
            out[n : n + a.shape[0]] += a
            b = row[n - 1]
            out[: b.shape[0]] += b
            row.append(out)
        previous = row
    probs = previous[n2] / previous[n2].sum()
    probs.flags.writeable = False  # cached: shared by every caller
    return probs


@dataclass
class ShiftTest:
    """Result of comparing two samples: the test's p-value and the shift with its interval."""

    # mann_whitney_exact | mann_whitney_normal | welch_log (on the logs) | welch (on the values: some
    # are zero or negative) | none (no values)
    test: str
    p_value: Optional[float]
    # candidate − baseline: Hodges–Lehmann's estimate for the rank tests; for Welch's on logs, the
    # baseline's geometric mean times the ratio of the geometric means, minus it; for Welch's on
    # values, the difference of the means
    shift: Optional[float]
    ci: Optional[Tuple[float, float]]  # confidence interval of the shift at 1 − alpha
    rule: Optional[Dict[str, Any]] = None  # the STEP_TESTS row the sizes chose (None: too few steps)


def step_test_rule(n1: int, n2: int) -> Optional[Dict[str, Any]]:
    """The STEP_TESTS row for runs of n1 and n2 steps, or None when no test can decide."""
    return next((row for row in STEP_TESTS if min(n1, n2) >= row["min_steps"]), None)


def smallest_rank_p(n1: int, n2: int) -> float:
    """The smallest two-sided p of the exact Mann–Whitney test with n1 and n2 values: 2 of the
    C(n1 + n2, n1) orderings are as extreme as complete separation."""
    if n1 <= 0 or n2 <= 0:
        return 1.0
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


def shift_test(
    baseline: Sequence[float], candidate: Sequence[float], alpha: float = SIGNIFICANCE["alpha"]
) -> ShiftTest:
    """The test STEP_TESTS chooses for these sizes, two-sided: Mann–Whitney U with the Hodges–Lehmann
    shift, or Welch's t; with too few values the rank test still gives the shift and a p-value."""
    x = np.asarray(baseline, dtype=float)
    y = np.asarray(candidate, dtype=float)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    n1, n2 = x.shape[0], y.shape[0]
    if n1 == 0 or n2 == 0:
        return ShiftTest("none", None, None, None)
    rule = step_test_rule(n1, n2)
    if rule is not None and rule["test"] == "welch":
        return _welch(x, y, alpha, rule)
    result = _rank_test(x, y, alpha)
    result.rule = rule
    return result


def _welch(x: np.ndarray, y: np.ndarray, alpha: float, rule: Dict[str, Any]) -> ShiftTest:
    """Welch's t on the logs (values all positive: a test of their ratio) or else on the values."""
    logs = bool((x > 0).all() and (y > 0).all())
    a, b = (np.log(x), np.log(y)) if logs else (x, y)
    n1, n2 = a.shape[0], b.shape[0]
    v1, v2 = float(a.var(ddof=1)) / n1, float(b.var(ddof=1)) / n2
    difference = float(b.mean() - a.mean())
    se = math.sqrt(v1 + v2)
    if se == 0.0:  # every value of each side equal
        p_value, half = (1.0 if difference == 0.0 else 0.0), 0.0
    else:
        df = (v1 + v2) ** 2 / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1))
        p_value = t_two_sided_p(difference / se, df)
        half = t_two_sided_quantile(alpha, df) * se
    if not logs:
        return ShiftTest("welch", p_value, difference, (difference - half, difference + half), rule)
    centre = float(np.exp(a.mean()))  # the baseline's geometric mean
    shift = _scaled_change(centre, difference)
    low, high = _scaled_change(centre, difference - half), _scaled_change(centre, difference + half)
    ci = (low, high) if low is not None and high is not None else None
    return ShiftTest("welch_log", p_value, shift, ci, rule)


def _scaled_change(centre: float, log_ratio: float) -> Optional[float]:
    """centre × (e^log_ratio − 1), or None past what a float holds (a hostile report's 1e308 ms)."""
    try:
        value = centre * math.expm1(log_ratio)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def _rank_test(x: np.ndarray, y: np.ndarray, alpha: float) -> ShiftTest:
    """Mann–Whitney U (two-sided) and the Hodges–Lehmann shift with its distribution-free interval."""
    n1, n2 = x.shape[0], y.shape[0]
    pairs = n1 * n2
    ranks, ties = _ranks(np.concatenate([x, y]))
    u_candidate = float(ranks[n1:].sum() - n2 * (n2 + 1) / 2.0)  # pairs where the candidate is larger
    mean_u = pairs / 2.0
    has_ties = bool((ties > 1).any())

    if not has_ties and pairs <= SIGNIFICANCE["exact_max_pairs"]:
        probs = _u_distribution(n2, n1)
        cdf = np.cumsum(probs)
        u = int(round(u_candidate))
        lower = float(cdf[u])
        upper = float(1.0 - (cdf[u - 1] if u > 0 else 0.0))
        p_value = min(1.0, 2.0 * min(lower, upper))
        k = int(np.count_nonzero(cdf <= alpha / 2.0 + 1e-12))  # P(U <= k-1) <= alpha/2
        test = "mann_whitney_exact"
    else:
        n = n1 + n2
        tie_term = float((ties.astype(float) ** 3 - ties).sum()) / (n * (n - 1)) if n > 1 else 0.0
        variance = pairs / 12.0 * ((n + 1) - tie_term)
        if variance <= 0:  # every value equal: nothing to tell apart
            p_value = 1.0
        else:
            z = max(0.0, abs(u_candidate - mean_u) - 0.5) / math.sqrt(variance)
            p_value = min(1.0, math.erfc(z / math.sqrt(2.0)))
        z_crit = NormalDist().inv_cdf(1.0 - alpha / 2.0)
        k = int(math.floor(mean_u - z_crit * math.sqrt(pairs * (n1 + n2 + 1) / 12.0)))
        test = "mann_whitney_normal"

    differences = _pairwise_differences(x, y)
    m = differences.shape[0]
    ci: Optional[Tuple[float, float]] = None
    picks = [(m - 1) // 2, m // 2]
    if k >= 1:
        # Scale k when the differences were thinned to order statistics.
        k_eff = max(1, int(math.floor(k * m / pairs))) if m != pairs else k
        picks += [k_eff - 1, m - k_eff]
    ordered = np.partition(differences, sorted(set(picks)))  # O(m): only these order statistics
    shift = float((ordered[picks[0]] + ordered[picks[1]]) / 2.0)
    if k >= 1:
        ci = (float(ordered[picks[2]]), float(ordered[picks[3]]))
    return ShiftTest(test, p_value, shift, ci)


def _pairwise_differences(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y_j − x_i over all pairs (over evenly spaced order statistics when there are too many)."""
    limit = int(math.sqrt(SIGNIFICANCE["max_pairs"]))
    if x.shape[0] * y.shape[0] > SIGNIFICANCE["max_pairs"]:
        x = np.quantile(x, np.linspace(0, 1, min(limit, x.shape[0])))
        y = np.quantile(y, np.linspace(0, 1, min(limit, y.shape[0])))
    return np.subtract.outer(y, x).ravel()


@dataclass
class Decision:
    """SIGNIFICANCE and STEP_TESTS applied to a ShiftTest."""

    significant: bool
    reason: str  # why, in words
    # significant | no_steps | too_few_steps (no test can decide) | noise | below_min_effect |
    # opposite_directions
    code: str


def decide(
    test: ShiftTest, n1: int, n2: int, scale: Optional[float], mean_delta: Optional[float]
) -> Decision:
    """Is the shift of `test` (runs of n1 and n2 values) significant? `scale`: the baseline's median
    step, which the minimum effect is a share of; `mean_delta`: the change of the means, which must
    go the shift's way."""
    alpha = SIGNIFICANCE["alpha"]
    if test.test == "none" or test.p_value is None:
        return Decision(False, "no per-step values to compare", "no_steps")
    rule = test.rule
    if rule is None:
        fewest = min(row["min_steps"] for row in STEP_TESTS)
        return Decision(False, (
            f"too few steps to test ({n1} and {n2}; the smallest p a rank test can give with them is "
            f"{significant(smallest_rank_p(n1, n2), 2)}, and Welch's needs {fewest} a run)"
        ), "too_few_steps")
    if test.p_value >= alpha:
        return Decision(False, f"within the step-to-step noise (p = {significant(test.p_value, 2)})", "noise")
    if not _large_enough(test.shift, scale, rule["min_effect_pct"]):
        pct = plain(rule["min_effect_pct"])
        if rule is STEP_TESTS[0]:
            return Decision(False, f"real but below {pct} % of the step", "below_min_effect")
        return Decision(False, (
            f"p = {significant(test.p_value, 2)}, but below the {pct} % change that {n1} and {n2} steps "
            "can tell from the drift between runs of one configuration"
        ), "below_min_effect")
    if mean_delta is not None and test.shift is not None and mean_delta * test.shift < 0:
        return Decision(False, "mean and median moved in opposite directions", "opposite_directions")
    return Decision(True, f"p = {significant(test.p_value, 2)}", "significant")


def _large_enough(shift: Optional[float], scale: Optional[float], min_effect_pct: float) -> bool:
    """Whether `shift` moves `scale` by at least min_effect_pct either way (a factor of 1 + pct/100
    up, or its inverse down). Without a scale there is nothing to hold it to."""
    if not scale or shift is None:
        return True
    ratio = (scale + shift) / scale
    if ratio <= 0:
        return True
    return abs(math.log(ratio)) >= math.log1p(min_effect_pct / 100.0)
