"""A trend (`tb-advisor/trend/1`, docs/ARCHITECTURE.md §2): series of captures in capture order, each
with its change points and their causes. Pure: the series' sessions and their reports (or why a
capture could not be read) in, JSON dict out; the reports come from report/door.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from tb_plugin_advisor.formatting import finite_json, rounded
from tb_plugin_advisor.sources.session import Session
from tb_plugin_advisor.trend.cause import attribute
from tb_plugin_advisor.trend.changes import Split, find_changes, outlier_mask
from tb_plugin_advisor.trend.rules import CHANGE
from tb_plugin_advisor.trend.select import captured_at
from tb_plugin_advisor.trend.series import Capture, capture_from_report, failed_capture

SCHEMA = "tb-advisor/trend/1"


@dataclass
class SeriesInput:
    """One series to analyse: its name (the run or prefix the user gave) and its captures, in order."""

    run: str
    captures: List[Capture]


def _change_point(split: Split, usable: List[int], captures: Sequence[Capture]) -> Dict[str, Any]:
    """A Split (positions among the usable captures) as the JSON of a change point."""
    index = usable[split.index]
    before = [captures[usable[i]] for i in range(*split.before)]
    after = [captures[usable[i]] for i in range(*split.after)]
    cause = attribute(before, after)
    significant, reason = split.significant, split.reason
    machine = significant and cause["uniform"] is not None
    if machine:
        # every op moved by the step's own factor: the machine changed, not the code (as in the diff)
        significant, reason = False, f"{cause['uniform']['reason']} (kept out of the significant changes)"
    return {
        "index": index,
        "run": captures[index].run,
        "previous_run": captures[usable[split.index - 1]].run,
        "step_ms_before": rounded(split.step_ms_before),
        "step_ms_after": rounded(split.step_ms_after),
        "delta_pct": rounded(split.delta_pct, 2),
        "direction": "slower" if split.delta_pct > 0 else "faster",
        "significant": significant,
        "machine_change": machine,
        "reason": reason,
        "p_value": split.p_captures,
        "p_value_steps": split.p_steps,
        "t": rounded(split.t, 3),
        "df": split.df,
        "noise_pct": rounded(split.noise_pct, 2),
        "captures_before": len(before),
        "captures_after": len(after),
        "outlier_captures": [usable[i] for i in split.outliers],
        "cause": cause,
    }


def _noise(levels: np.ndarray, splits: Sequence[Split]) -> Optional[float]:
    """The series' between-capture noise: standard deviation of log medians inside its segments, %,
    outlier captures left out as the tests leave them out."""
    bounds = [0] + [s.index for s in splits if s.significant] + [int(levels.size)]
    segments = [levels[a:b][~outlier_mask(levels[a:b])] for a, b in zip(bounds, bounds[1:])]
    parts = [p - p.mean() for p in segments if p.size > 1]
    df = sum(p.size - 1 for p in parts)
    if df <= 0:
        return None
    sd = float(np.sqrt(sum(float((p ** 2).sum()) for p in parts) / df))
    return 100.0 * float(np.expm1(sd))


def analyse_series(series: SeriesInput) -> Dict[str, Any]:
    """One series' JSON: its captures, change points, and the between-capture noise."""
    captures = series.captures
    usable = [i for i, c in enumerate(captures) if c.step_ms and c.samples.size]
    levels = np.log(np.asarray([captures[i].step_ms for i in usable], dtype=float))
    samples = [captures[i].samples for i in usable]
    accepted, strongest = find_changes(levels, samples) if len(usable) >= 2 else ([], None)
    points = [_change_point(s, usable, captures) for s in accepted]
    if strongest is not None:
        points.append(_change_point(strongest, usable, captures))
    entries = []
    for i, c in enumerate(captures):
        entry = dict(c.summary, index=i)
        entries.append(entry)
    notes = []
    if len(usable) < CHANGE["min_captures"]:
        notes.append(
            f"{len(usable)} capture(s) with steps: a trend needs at least {CHANGE['min_captures']} to tell "
            "a change from the noise between captures"
        )
    clocks = sorted({str(captures[i].summary.get("clock")) for i in usable
                     if captures[i].summary.get("clock")})
    if len(clocks) > 1:
        notes.append(
            f"the captures' steps are timed on different clocks ({', '.join(clocks)}): a host-clock step "
            "ends when the host has queued it, a device-clock step when the device has run it, so a "
            "GPU-bound step looks shorter on the host's clock; compare captures on one clock")
    skipped = len(captures) - len(usable)
    if skipped:
        notes.append(f"{skipped} capture(s) without steps or unreadable are listed but not tested")
    significant = [p for p in points if p["significant"]]
    return {
        "run": series.run,
        "captures": entries,
        "change_points": points,
        "noise_pct": rounded(_noise(levels, accepted), 2) if levels.size else None,
        "newest_change": significant[-1] if significant else None,
        "notes": notes,
    }


def build_trend(series: Sequence[SeriesInput]) -> Dict[str, Any]:
    """The trend JSON over every series."""
    return finite_json({  # a figure derived from extreme inputs is unknown, not inf
        "schema": SCHEMA,
        "series": [analyse_series(s) for s in series],
        "rules": {k: v for k, v in CHANGE.items()},
    })


def trend_of(
    series: Sequence[Tuple[str, Sequence[Session]]], outcomes: Dict[str, Union[Dict[str, Any], str]]
) -> Dict[str, Any]:
    """The trend JSON from the selected series (trend/select.py) and their reports by run name, each a
    report dict or why that capture could not be read."""
    inputs = []
    for name, sessions in series:
        captures: List[Capture] = []
        for s in sessions:
            value = outcomes.get(s.run, "not analysed")
            when = captured_at(s)
            if isinstance(value, dict):
                captures.append(capture_from_report(s.run, when, value))
            else:
                captures.append(failed_capture(s.run, when, value))
        inputs.append(SeriesInput(name, captures))
    return build_trend(inputs)


def is_regression(trend: Dict[str, Any], threshold_pct: float) -> List[Dict[str, Any]]:
    """The CI gate: series whose newest significant change is a slowdown by more than `threshold_pct`
    (an older regression already fixed by a later speed-up does not fail the build)."""
    out = []
    for s in trend.get("series") or []:
        newest = s.get("newest_change")
        if newest and newest.get("delta_pct") is not None and newest["delta_pct"] > threshold_pct:
            out.append({"run": s.get("run"), **newest})
    return out
