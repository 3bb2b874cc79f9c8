"""Is a change between two runs real? Rank-based tests on per-step values (see diff/compare.py's
docstring): Mann–Whitney U with its exact or normal null distribution, the Hodges–Lehmann shift and its
confidence interval, and the significance rule (level, minimum steps, minimum effect) used for step
times, breakdown categories and shares alike."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.formatting import plain, significant

SIGNIFICANCE = {
    "alpha": 0.01,  # two-sided level of the rank-sum test
    "min_steps": 5,  # per run; fewer steps are never significant
    "min_effect_pct": 1.0,  # |shift| below this % of the baseline median step is never significant
    "exact_max_pairs": 2500,  # exact U distribution up to n1*n2 pairs without ties
    "max_pairs": 1_000_000,  # above this, Hodges–Lehmann uses evenly spaced order statistics
}

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
    """Result of comparing two samples: Mann–Whitney U and the Hodges–Lehmann shift."""

    test: str  # mann_whitney_exact | mann_whitney_normal | none
    p_value: Optional[float]
    shift: Optional[float]  # Hodges–Lehmann estimate of candidate − baseline
    ci: Optional[Tuple[float, float]]  # confidence interval of the shift at 1 − alpha


def shift_test(
    baseline: Sequence[float], candidate: Sequence[float], alpha: float = SIGNIFICANCE["alpha"]
) -> ShiftTest:
    """Mann–Whitney U (two-sided) and the Hodges–Lehmann shift with its distribution-free interval."""
    x = np.asarray(baseline, dtype=float)
    y = np.asarray(candidate, dtype=float)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    n1, n2 = x.shape[0], y.shape[0]
    if n1 == 0 or n2 == 0:
        return ShiftTest("none", None, None, None)
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


def _significant(
    test: ShiftTest, n1: int, n2: int, scale: Optional[float], mean_delta: Optional[float]
) -> Tuple[bool, str]:
    """Apply SIGNIFICANCE to a ShiftTest; returns (significant, why in words)."""
    alpha, min_steps = SIGNIFICANCE["alpha"], SIGNIFICANCE["min_steps"]
    if test.test == "none" or test.p_value is None:
        return False, "no per-step values to compare"
    if n1 < min_steps or n2 < min_steps:
        return False, f"too few steps ({n1} and {n2}; need {min_steps} each)"
    if test.p_value >= alpha:
        return False, f"within the step-to-step noise (p = {significant(test.p_value, 2)})"
    if scale and test.shift is not None and abs(test.shift) < SIGNIFICANCE["min_effect_pct"] / 100.0 * scale:
        return False, f"real but below {plain(SIGNIFICANCE['min_effect_pct'])} % of the step"
    if mean_delta is not None and test.shift is not None and mean_delta * test.shift < 0:
        return False, "mean and median moved in opposite directions"
    return True, f"p = {significant(test.p_value, 2)}"
