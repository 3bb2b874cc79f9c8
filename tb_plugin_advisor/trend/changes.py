"""Where a series of captures shifted: binary segmentation over the captures' log median step times,
each split judged by two tests that must both agree (rules.py CHANGE says why).

* **Between captures** (the noise model): a pooled two-sample t-test on the log medians of the
  captures on each side (up to `window` each side, never across an accepted change point). Its
  variance is the spread *between* captures of each side, so a machine that drifts from capture to
  capture widens it and same-config noise is not flagged. A capture far outside its own side (a
  robust z-score on the median absolute deviation) is left out of both tests, so one capture taken
  while other load shared the machine neither hides a change nor makes one. The p-value is
  Bonferroni-corrected for the split positions tried, since the best of many splits always looks a
  little significant.
* **Within captures**: the diff's Mann–Whitney test (diff/stats.py) on the pooled steady per-step
  times of both sides, so one odd capture median over a handful of steps does not make a change.

Logs make the test about ratios: a +70 % step is the same evidence at 20 ms as at 2 s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.diff.stats import shift_test
from tb_plugin_advisor.diff.tdist import t_two_sided_p
from tb_plugin_advisor.formatting import plain
from tb_plugin_advisor.trend.rules import CHANGE


@dataclass
class Split:
    """A candidate change between captures index-1 and index (positions in the analysed list)."""

    index: int
    before: Tuple[int, int]  # [start, end) of the side before
    after: Tuple[int, int]
    t: float
    df: int
    p_captures: float  # corrected for the splits tried
    p_steps: Optional[float]
    noise_pct: float  # between-capture standard deviation, % of the step
    step_ms_before: float
    step_ms_after: float
    delta_pct: float
    significant: bool
    reason: str
    outliers: Tuple[int, ...] = ()  # positions left out of both tests (outlier_mask)


def outlier_mask(side: np.ndarray) -> np.ndarray:
    """The one capture of a side, if any, whose log median lies beyond `outlier_z` robust standard
    deviations (1.4826 × the side's median absolute deviation, never below the noise floor) from
    the side's median: a modified z-score, set far out so that ordinary noise between captures is
    never cut (that would shrink the noise and make changes). Sides shorter than
    `outlier_min_captures` keep every capture: with three, which one is odd is a guess."""
    mask = np.zeros(side.size, dtype=bool)
    if side.size < CHANGE["outlier_min_captures"]:
        return mask
    deviation = np.abs(side - np.median(side))
    scale = max(1.4826 * float(np.median(deviation)), math.log1p(CHANGE["noise_floor_pct"] / 100.0))
    worst = int(np.argmax(deviation))
    mask[worst] = deviation[worst] / scale > CHANGE["outlier_z"]
    return mask


def _pooled_sd(left: np.ndarray, right: np.ndarray) -> Tuple[float, int]:
    """Pooled standard deviation of two samples around their own means, and its degrees of freedom."""
    df = left.size + right.size - 2
    if df <= 0:
        return 0.0, 0
    ss = float(((left - left.mean()) ** 2).sum() + ((right - right.mean()) ** 2).sum())
    return math.sqrt(ss / df), df


def _split_kept(levels: np.ndarray, sides: Sequence[Tuple[int, int]]) -> List[Tuple[List[int], List[int]]]:
    """Per side, its positions: (kept, left out as outliers)."""
    masks = [outlier_mask(levels[a:b]) for a, b in sides]
    out = []
    for (a, b), mask in zip(sides, masks):
        positions = list(range(a, b))
        out.append(([i for i, o in zip(positions, mask) if not o], [i for i, o in zip(positions, mask) if o]))
    return out


def judge_split(
    levels: np.ndarray, samples: Sequence[np.ndarray], segment: Tuple[int, int], k: int, tried: int
) -> Split:
    """The evidence for a change at k inside segment [start, end): both tests and the effect size."""
    start, end = segment
    window = int(CHANGE["window"])
    before = (max(start, k - window), k)
    after = (k, min(end, k + window))
    (kept_left, out_left), (kept_right, out_right) = _split_kept(levels, (before, after))
    left, right = levels[kept_left], levels[kept_right]
    sd, df = _pooled_sd(left, right)
    floor = math.log1p(CHANGE["noise_floor_pct"] / 100.0)
    sd = max(sd, floor)
    diff = float(right.mean() - left.mean())
    t = diff / (sd * math.sqrt(1.0 / left.size + 1.0 / right.size))
    p_captures = min(1.0, t_two_sided_p(t, df) * max(1, tried)) if df > 0 else 1.0
    steps_left = np.concatenate([samples[i] for i in kept_left])
    steps_right = np.concatenate([samples[i] for i in kept_right])
    test = shift_test(steps_left, steps_right)
    # the level each side sits at: the median of its capture medians, robust to one odd capture
    ms_before, ms_after = float(np.exp(np.median(left))), float(np.exp(np.median(right)))
    delta_pct = 100.0 * (ms_after - ms_before) / ms_before
    significant, reason = _decide(df, p_captures, test.p_value, steps_left.size, steps_right.size,
                                  delta_pct, diff, test.shift)
    return Split(k, before, after, t, df, p_captures, test.p_value, 100.0 * math.expm1(sd), ms_before,
                 ms_after, delta_pct, significant, reason, tuple(out_left + out_right))


def _decide(
    df: int, p_captures: float, p_steps: Optional[float], n_left: int, n_right: int, delta_pct: float,
    log_diff: float, step_shift: Optional[float],
) -> Tuple[bool, str]:
    """Apply CHANGE to a split's evidence; (significant, why in words)."""
    if df <= 0:
        return False, (f"fewer than {CHANGE['min_captures']} captures: the noise between captures "
                       "cannot be estimated, so a change cannot be told from drift")
    if abs(delta_pct) < CHANGE["min_effect_pct"]:
        return False, f"below {plain(CHANGE['min_effect_pct'])} % of the step"
    if p_captures >= CHANGE["alpha_captures"]:
        return False, "within the noise between captures of the same series"
    if min(n_left, n_right) < CHANGE["min_steps_side"]:
        return False, f"too few steady steps on one side ({n_left} and {n_right})"
    if p_steps is None or p_steps >= CHANGE["alpha_steps"]:
        return False, "the per-step times of the two sides overlap"
    if step_shift is not None and step_shift * log_diff < 0:
        return False, "the captures' medians and their steps moved in opposite directions"
    return True, "beyond the noise between captures and within them"


def _best_split(
    levels: np.ndarray, samples: Sequence[np.ndarray], segment: Tuple[int, int]
) -> Optional[Split]:
    start, end = segment
    candidates = range(start + 1, end)
    if not candidates:
        return None
    splits = [judge_split(levels, samples, segment, k, len(candidates)) for k in candidates]
    # the strongest evidence between captures; ties (tiny series) broken by the larger effect
    return min(splits, key=lambda s: (s.p_captures, -abs(s.t), -abs(s.delta_pct)))


def find_changes(levels: np.ndarray, samples: Sequence[np.ndarray]) -> Tuple[List[Split], Optional[Split]]:
    """Accepted change points (sorted by index) by binary segmentation, and — when none was found —
    the strongest rejected candidate, so a reader sees how close the series came."""
    accepted: List[Split] = []
    strongest: Optional[Split] = None
    pending = [(0, int(levels.size))]
    while pending:
        segment = pending.pop()
        if segment[1] - segment[0] < 2:
            continue
        best = _best_split(levels, samples, segment)
        if best is None:
            continue
        if best.significant:
            accepted.append(best)
            pending += [(segment[0], best.index), (best.index, segment[1])]
        elif segment == (0, int(levels.size)):
            strongest = best
    accepted.sort(key=lambda s: s.index)
    # Re-judge each accepted change between its neighbours (its sides no longer cross another change).
    bounds = [0] + [s.index for s in accepted] + [int(levels.size)]
    final = [
        judge_split(levels, samples, (bounds[i], bounds[i + 2]), s.index, bounds[i + 2] - bounds[i] - 1)
        for i, s in enumerate(accepted)
    ]
    return final, (strongest if not accepted else None)
