"""The trend's rules as data: every number that decides whether a series changed, and what is named
as the cause. One place, read by changes.py and cause.py; each entry has a test (tests/trend/test_trend.py).

Why two levels of evidence: per-step samples inside one capture are tight, but a machine's speed
moves between captures (clocks, other tenants, thermal state), so a rank test on steps alone calls
same-config noise significant. A change point must stand out against the spread *between* captures
of the series and also against the steps' own spread.
"""

from __future__ import annotations

from tb_plugin_advisor.diff.stats import SIGNIFICANCE, STEP_TESTS

CHANGE = {
    # Family-wise level of the capture-level t-test on log medians, Bonferroni-corrected over the
    # split positions tried in a segment (searching for the best split would otherwise find one).
    "alpha_captures": 0.02,
    # Level of the test on the pooled per-step times of both sides (the diff's level and test:
    # Mann–Whitney, or Welch's t on log times where a side pools fewer steps than it needs).
    "alpha_steps": SIGNIFICANCE["alpha"],
    # Captures needed for a between-capture noise estimate: two sides and one degree of freedom.
    "min_captures": 3,
    # Steady steps needed on each side (pooled over its captures): the fewest any test of the diff's
    # can decide with (Welch's t), so a newest capture of 3 steps (`active=3`) can still be a change.
    "min_steps_side": STEP_TESTS[-1]["min_steps"],
    # A shift below this % of the step before is never a change point, whatever the p-values say.
    "min_effect_pct": 2.0,
    # The between-capture noise is never taken below this % (identical medians are no evidence that
    # the next capture cannot move by chance).
    "noise_floor_pct": 1.0,
    # Captures each side a candidate split is judged against: slow drift over a long series must
    # not add up to a "change" between its halves.
    "window": 8,
    # The one capture of a side whose log median lies beyond this many robust standard deviations
    # (1.4826 × the side's MAD) from the side's median is an outlier, left out of both tests: a
    # capture taken while other load shared the machine must neither widen the noise enough to
    # hide a real change nor make one. Far out on purpose: at the textbook 3.5 a handful of
    # captures' MAD cuts ordinary noise and same-config series raised false changes 1.5 % → 7 %
    # (8 captures, simulated); at 7 they stay about as rare as without the rule (2.5 %).
    "outlier_z": 7.0,
    # Fewest captures on a side for telling an outlier: with three, which one is odd is a guess.
    "outlier_min_captures": 4,
}

CAUSE = {
    # Categories named as the cause: those whose per-step change is at least this share of the shift.
    "category_min_share": 0.25,
    "max_categories": 2,
    # Ops / kernels named under a cause.
    "max_ops": 3,
    # An op must have moved by at least this % of the step before to be named.
    "op_min_pct": 1.0,
}

SELECT = {
    # Longest series pattern accepted (characters): a run name a person types is far shorter, and the
    # trend route takes the pattern from a request.
    "max_pattern_chars": 256,
}
