"""The numbers and rows every diff view prints (text, Markdown, HTML): values rounded by the shared
rule (formatting.py) with a typographic minus, the step-time, breakdown, precision and op rows, and
the one-line facts. Format-neutral; views/export/diff.py lays them out."""

from __future__ import annotations

import textwrap
from typing import Any, Dict, List, Optional, Sequence

from tb_plugin_advisor.analysis.classify.short_names import SHORT_NAME_CHARS, short_name
from tb_plugin_advisor.analysis.step_time.categories import in_words
from tb_plugin_advisor.diff.rules import ARROW, BOTTLENECK_LABELS, MINUS
from tb_plugin_advisor.diff.stats import SIGNIFICANCE
from tb_plugin_advisor.formatting import (
    DASH,
    fixed,
    format_bytes,
    format_number,
    pct_number,
    plain,
    scientific,
)

TABLE_NAME_CHARS = 120  # op/kernel names in text and Markdown tables (HTML shows them whole)

TEST_NAMES = {
    "mann_whitney_exact": "Mann\u2013Whitney U (exact)",
    "mann_whitney_normal": "Mann\u2013Whitney U (normal approximation)",
    "welch_log": "Welch's t on log step times",
    "welch": "Welch's t",
    "none": "none (no per-step times)",
}



def with_sign(value: Optional[float], text: str, plus: bool) -> str:
    """A typographic minus, and a plus for `plus`, unless the value rounds to zero."""
    if value is None:
        return "n/a"
    if text.strip("0.") == "":
        return text
    return (MINUS if value < 0 else "+" if plus else "") + text


def num_text(value: Optional[float]) -> str:
    """As the tab rounds it (formatting.py): about three significant digits."""
    return with_sign(value, format_number(abs(value)) if value is not None else "", plus=False)


def signed_text(value: Optional[float]) -> str:
    return with_sign(value, format_number(abs(value)) if value is not None else "", plus=True)


def share_text(value: Optional[float], plus: bool = False) -> str:
    """A share in % (the number only), as the tab rounds percents: whole from 10 up."""
    return with_sign(value, pct_number(abs(value)) if value is not None else "", plus=plus)


def pct_text(value: Optional[float]) -> str:
    return "n/a" if value is None else with_sign(value, pct_number(abs(value)), plus=True) + " %"


def p_text(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    return fixed(value, 3) if value >= 0.001 else scientific(value, 1)


def wrap(text: str, width: int) -> List[str]:
    """Wrap at spaces only: op names keep their hyphens and long names stay whole."""
    return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)


def diff_title(diff: Dict[str, Any]) -> str:
    return f"{side(diff, 'baseline')} {ARROW} {side(diff, 'candidate')}"


def side(diff: Dict[str, Any], side: str) -> str:
    """`run` or `run (host h)` when one host of a run was diffed."""
    hosts = diff.get(f"{side}_hosts") or []
    name = str(diff.get(side, ""))
    return f"{name} (host {hosts[0]})" if len(hosts) == 1 else name


def step_rows(st: Dict[str, Any]) -> List[List[str]]:
    return [
        [
            "mean (ms)",
            num_text(st["baseline_ms"]),
            num_text(st["candidate_ms"]),
            signed_text(st["delta_ms"]),
            pct_text(st["delta_pct"]),
        ],
        [
            "median (ms)",
            num_text(st["baseline_median_ms"]),
            num_text(st["candidate_median_ms"]),
            signed_text(minus(st["candidate_median_ms"], st["baseline_median_ms"])),
            pct_text(st["median_delta_pct"]),
        ],
        ["steps", str(st["baseline_steps"]), str(st["candidate_steps"]), "", ""],
    ]


def minus(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else a - b


def test_line(st: Dict[str, Any]) -> str:
    parts = [f"test: {TEST_NAMES.get(st['test'], st['test'])}"]
    if st["p_value"] is not None:
        parts.append(f"p = {p_text(st['p_value'])}")
    if st["shift_ms"] is not None:
        shift = f"shift {signed_text(st['shift_ms'])} ms"
        if st["shift_ci_ms"]:
            level = 100 * (1 - SIGNIFICANCE["alpha"])
            lo, hi = st["shift_ci_ms"]
            shift += f" ({plain(level)} % interval {signed_text(lo)} to {signed_text(hi)} ms)"
        parts.append(shift)
    if st["noise_pct"] is not None:
        parts.append(f"noise \u00b1{num_text(st['noise_pct'])} %")
    verdict = "significant" if st["significant"] else f"not significant: {st['reason']}"
    return "; ".join(parts) + f" \u2192 {verdict}"


def breakdown_rows(diff: Dict[str, Any]) -> List[List[str]]:
    rows = []
    for key, row in diff["breakdown"].items():
        if row["baseline_ms"] == 0 and row["candidate_ms"] == 0:
            continue
        rows.append(
            [
                in_words(key),
                num_text(row["baseline_ms"]),
                num_text(row["candidate_ms"]),
                signed_text(row["delta_ms"]),
                "yes" if row["significant"] else "no",
            ]
        )
    return rows


def verdict_line(verdict: Dict[str, Any]) -> str:
    """The run's own verdict sentence, as its report shows it: no second rounding of its numbers and
    no category ids beside it."""
    if not verdict:
        return "n/a"
    if verdict.get("summary"):
        return str(verdict["summary"])
    bottleneck = str(verdict.get("bottleneck", "unknown"))
    return f"bottleneck: {BOTTLENECK_LABELS.get(bottleneck, bottleneck)}"


def precision_rows(diff: Dict[str, Any]) -> List[List[str]]:
    """Rows per precision; none when neither run has a known precision (CPU-only profiles)."""
    prec = diff["precision_pct"]
    known = [k for k in diff["precision_delta_pct"] if k != "unknown"]
    if not any(prec["baseline"].get(k) or prec["candidate"].get(k) for k in known):
        return []
    rows = []
    for key, delta in diff["precision_delta_pct"].items():
        b, c = prec["baseline"].get(key), prec["candidate"].get(key)
        if not b and not c:
            continue
        rows.append([key, share_text(b), share_text(c), share_text(delta, plus=True)])
    return rows


def op_rows(rows: Sequence[Dict[str, Any]], limit: int, full_names: bool = False) -> List[List[str]]:
    """The diff's op or kernel rows: (delta, baseline, candidate, status, name); the name short, cut
    to a text table's width, or with `full_names` (HTML, where the cell wraps) as the tab shows it."""
    out = []
    for r in rows[:limit]:
        name = short_name(r["name"], SHORT_NAME_CHARS if full_names else TABLE_NAME_CHARS)
        inst = r.get("instances") or {}
        if r.get("match") == "normalised" and max(inst.get("baseline", 0), inst.get("candidate", 0)) > 1:
            name += (f"  ({inst.get('baseline', 0)} in the baseline, {inst.get('candidate', 0)} in the "
                     "candidate, compared as one op)")
        out.append(
            [
                signed_text(r["delta_ms"]),
                num_text(r["baseline_ms"]),
                num_text(r["candidate_ms"]),
                r["status"] + ("?" if r.get("uncertain") else ""),
                name,
            ]
        )
    return out


def memory_line(diff: Dict[str, Any]) -> Optional[str]:
    m = diff["peak_memory_bytes"]
    if m["baseline"] is None and m["candidate"] is None:
        return None
    b = format_bytes(m["baseline"]) if m["baseline"] is not None else "n/a"
    c = format_bytes(m["candidate"]) if m["candidate"] is not None else "n/a"
    return f"{b} {ARROW} {c}" + (f" ({pct_text(m['delta_pct'])})" if m["delta_pct"] is not None else "")


def tc_line(diff: Dict[str, Any]) -> Optional[str]:
    t = diff["tensor_cores_pct"]
    if not t["baseline"] and not t["candidate"] and not diff["kernels"]:
        return None  # no device kernels on either side: nothing to say
    line = f"{share_text(t['baseline'])} {ARROW} {share_text(t['candidate'])} % of device time"
    if diff["tensor_cores_delta_pct"] is not None:
        line += f" ({share_text(diff['tensor_cores_delta_pct'], plus=True)} points)"
    return line




OUTCOMES_TITLE = "The baseline's advice: what it predicted, what the candidate saved (ms per step)"
OUTCOMES_HEADER = ["recommendation", "acted on", "predicted", "saved on the step", "saved on its category",
                   "verdict"]


def _shared_with(others: Any) -> str:
    """" (shared with input.cache)": the other fixes of the same change the step's saving is theirs too."""
    if not isinstance(others, list) or not others:
        return ""
    return f" (shared with {', '.join(str(x) for x in others)})"


def outcome_rows(diff: Dict[str, Any]) -> List[List[str]]:
    """One row per recommendation of the baseline (diff/outcomes.py): whether the candidate acted on
    it, the saving it predicted, the saving measured on the step and on the category it targets
    (positive: faster), and whether the step's saving fell inside the prediction. A rule not acted on
    saved nothing: a dash, not the step's whole change; a saving several fixes made together names
    the others it is shared with."""
    rows = []
    for o in diff.get("recommendation_outcomes") or []:
        predicted = o.get("predicted_ms_per_step")
        interval = f"{format_number(predicted[0])}\u2013{format_number(predicted[1])}" if predicted else ""
        if not o.get("acted_on"):
            rows.append([str(o.get("id", "")), "no", interval or "not estimated", DASH, DASH, ""])
            continue
        category = o.get("target_category")
        on_category = o.get("realized_category_ms_per_step")
        verdict = o.get("verdict") or ""
        if verdict and o.get("together_with"):
            verdict += f" (the {len(o['together_with']) + 1} together)"
        targeted = f" ({in_words(category)})" if category else ""
        rows.append([
            str(o.get("id", "")),
            "yes" if o.get("acted_on") else "no",
            interval or "not estimated",
            signed_text(o.get("realized_ms_per_step")) + _shared_with(o.get("together_with")),
            signed_text(on_category) + targeted if on_category is not None else "",
            verdict,
        ])
    return rows
