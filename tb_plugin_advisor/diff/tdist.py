"""Student's t distribution's two-sided tail and its inverse, for Welch's test on few steps
(diff/stats.py) and the trend's capture-level test (numpy only: scipy is not a dependency). The
regularized incomplete beta function by Lentz's continued fraction, as in Numerical Recipes §6.4;
tests/trend/test_trend.py and tests/diff/test_diff.py hold it to scipy where scipy is installed."""

from __future__ import annotations

import math

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 300


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (converges fast for x < (a + 1) / (a + b + 2))."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITER + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b), 0 ≤ x ≤ 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with `df` degrees of freedom."""
    if df <= 0 or math.isnan(t):
        return 1.0
    if math.isinf(t):
        return 0.0
    return min(1.0, max(0.0, incomplete_beta(df / 2.0, 0.5, df / (df + t * t))))


def t_two_sided_quantile(p: float, df: float) -> float:
    """The t ≥ 0 with P(|T| ≥ t) = p for Student's t with `df` degrees of freedom (bisection on the
    tail, which falls monotonically in t), for confidence intervals at level 1 − p."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"need 0 < p < 1 and df > 0, not p={p!r}, df={df!r}")
    low, high = 0.0, 1.0
    while t_two_sided_p(high, df) > p:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if t_two_sided_p(middle, df) > p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0
