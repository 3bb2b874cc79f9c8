"""The diff's plain-words paragraph: every clause computed from the diff's numbers, named only past
the thresholds of diff/rules.py."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from tb_plugin_advisor.analysis.classify.patterns import SIXTEEN_BIT
from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.analysis.step_time.categories import in_words
from tb_plugin_advisor.diff.deep import deep_sentences
from tb_plugin_advisor.diff.rules import (
    ARROW,
    BOTTLENECK_LABELS,
    EXPLAIN,
    INPUT_INTERPRETATIONS,
    MINUS,
    SENTENCE_NAME_CHARS,
    SLOWER_16BIT,
)
from tb_plugin_advisor.diff.stats import STEP_TESTS
from tb_plugin_advisor.formatting import fixed, format_bytes
from tb_plugin_advisor.report.document import number

# ---------------------------------------------------------------------------------------------------
# The plain-words paragraph. Every clause is computed from the diff's numbers.


def _named(row: Dict[str, Any]) -> str:
    """An op or kernel row's name in a sentence: its short name, cut to a sentence's width."""
    return short_name(str(row["name"]), SENTENCE_NAME_CHARS)


def fmt_ms(value: float) -> str:
    a = abs(value)
    text = fixed(a, 0 if a >= 100 else 1 if a >= 10 else 2 if a >= 0.1 else 3)
    return (MINUS if value < 0 and float(text) != 0 else "") + text


def fmt_signed_ms(value: float) -> str:
    text = fmt_ms(value)
    return text if text.startswith(MINUS) else "+" + text


def fmt_signed_pct(value: float) -> str:
    a = abs(value)
    text = f"{fixed(a, 0)}" if a >= 10 else f"{fixed(a, 1)}"
    if float(text) == 0:
        return "±0 %"
    return (MINUS if value < 0 else "+") + text + " %"


def fmt_share(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    a = abs(value)
    return f"{fixed(value, 0)}" if a >= 10 or a == 0 else f"{fixed(value, 1)}"




def _step_sentence(diff: Dict[str, Any]) -> str:
    st = diff["step_time"]
    b, c, pct = st["baseline_ms"], st["candidate_ms"], st["delta_pct"]
    if b is None or c is None:
        return (
            "Step time could not be compared: "
            + ("the baseline has no steps" if b is None else "the candidate has no steps")
            + "."
        )
    code = st.get("reason_code")
    if st["significant"]:
        quality = "significant"
    elif st.get("uniform"):
        quality = f"not significant: {st['uniform']['reason']}"
    elif code == "too_few_steps":
        quality = "too few steps to test"
    elif code == "below_min_effect" and _few_steps(st):
        quality = f"not significant: below the {fmt_share(st['min_effect_pct'])} % so few steps can call"
    elif st["noise_pct"] is not None:
        quality = f"not significant, noise ±{fmt_share(st['noise_pct'])} %"
    else:
        quality = "not significant"
    head = (
        "Step time unchanged"
        if pct is None or fmt_signed_pct(pct) == "±0 %"
        else f"Step time {fmt_signed_pct(pct)}"
    )
    sentence = f"{head} ({fmt_ms(b)} {ARROW} {fmt_ms(c)} ms, {quality})"

    drivers = _drivers(diff)
    if drivers:
        pytorch = set((diff.get("frameworks") or {}).values()) == {"pytorch"}

        def words(key: str) -> str:  # PyTorch's input wait is next() on its DataLoader
            return "DataLoader wait" if pytorch and key == "input" else in_words(key)

        sentence += ": " + ", ".join(f"{words(k)} {fmt_signed_ms(d)} ms" for k, d in drivers)
    phrase = _input_phrase(diff)
    if phrase:
        sentence += f" {chr(0x2014)} {phrase}"
    return sentence + "."


def _drivers(diff: Dict[str, Any]) -> List[Tuple[str, float]]:
    """Breakdown categories whose per-step change is large enough to name (and not noise)."""
    st = diff["step_time"]
    scale = st["baseline_ms"] or 0.0
    limit = EXPLAIN["category_min_pct"] / 100.0 * scale
    rows = []
    for key, row in diff["breakdown"].items():
        if abs(row["delta_ms"]) < limit or row["delta_ms"] == 0:
            continue
        if not (row["significant"] or st["significant"]):
            continue  # nothing is significant: do not narrate noise
        rows.append((key, row["delta_ms"]))
    rows.sort(key=lambda kv: -abs(kv[1]))
    return rows[: EXPLAIN["max_categories"]]


def _input_phrase(diff: Dict[str, Any]) -> Optional[str]:
    before = (diff["verdict"]["baseline"] or {}).get("input_bound")
    after = (diff["verdict"]["candidate"] or {}).get("input_bound")
    input_row = diff["breakdown"].get("input") or {}
    for _id, was, now, phrase in INPUT_INTERPRETATIONS:
        if before in was and after in now:
            # The verdict moved; only say so when the input wait itself moved the same way, for real.
            getting_better = after == "low" or (before == "high" and after == "moderate")
            moved = input_row.get("delta_ms", 0.0)
            if input_row.get("significant") and ((moved < 0) == getting_better):
                return phrase
    return None


def _share_sentence(diff: Dict[str, Any]) -> Optional[str]:
    prec = diff["precision_pct"]
    parts = []
    significant = diff.get("precision_significant") or {}
    moved = [
        (k, d)
        for k, d in diff["precision_delta_pct"].items()
        if abs(d) >= EXPLAIN["share_min_points"] and k != "unknown" and significant.get(k, True)
    ]
    # Name what grew (that is the change: "fp16 share 0 → 87 %"); what shrank only if nothing grew.
    grown = sorted((kd for kd in moved if kd[1] > 0), key=lambda kd: -kd[1])
    shrunk = sorted((kd for kd in moved if kd[1] < 0), key=lambda kd: kd[1])
    for key, _delta in (grown or shrunk)[: EXPLAIN["max_shares"]]:
        b = number(prec["baseline"].get(key)) or 0.0
        c = number(prec["candidate"].get(key)) or 0.0
        parts.append(f"{key} share {fmt_share(b)} {ARROW} {fmt_share(c)} %")
    tc = diff["tensor_cores_delta_pct"]
    tc_moved = diff.get("tensor_cores_significant", True)
    if tc is not None and abs(tc) >= EXPLAIN["share_min_points"] and tc_moved:
        t = diff["tensor_cores_pct"]
        parts.append(f"Tensor Core share {fmt_share(t['baseline'])} {ARROW} {fmt_share(t['candidate'])} %")
    if not parts:
        return None
    dc = diff["breakdown"].get("device_compute") or {}
    if dc.get("delta_pct") is not None and abs(dc["delta_pct"]) >= 1.0:
        return f"Device compute {fmt_signed_pct(dc['delta_pct'])}: " + ", ".join(parts) + "."
    return "Precision: " + ", ".join(parts) + "."


def _slower_16bit_sentence(diff: Dict[str, Any]) -> Optional[str]:
    significant = diff.get("precision_significant") or {}
    grown = [
        k for k in SIXTEEN_BIT
        if diff["precision_delta_pct"].get(k, 0.0) >= EXPLAIN["share_min_points"] and significant.get(k, True)
    ]
    if not grown:
        return None
    for category, where in (("device_compute", "accelerator"), ("host_compute", "CPU")):
        row = diff["breakdown"].get(category) or {}
        if row.get("significant") and row.get("delta_ms", 0.0) > 0 and (row.get("delta_pct") or 0.0) >= 10.0:
            return SLOWER_16BIT.format(where=where, kinds="/".join(grown))
    return None


def _verdict_sentence(diff: Dict[str, Any]) -> Optional[str]:
    b = (diff["verdict"]["baseline"] or {}).get("bottleneck")
    c = (diff["verdict"]["candidate"] or {}).get("bottleneck")
    if not b or not c:
        return None
    bl, cl = BOTTLENECK_LABELS.get(b, b), BOTTLENECK_LABELS.get(c, c)
    if b == c:
        return f"Bottleneck unchanged: {bl}."
    return f"Bottleneck: {bl} {ARROW} {cl}."


def _ops_sentence(diff: Dict[str, Any], key: str, what: str) -> List[str]:
    scale = diff["step_time"]["baseline_ms"] or 0.0
    limit = EXPLAIN["op_min_pct"] / 100.0 * scale
    rows = diff[key]
    changed = [
        r for r in rows if r["status"] == "changed" and abs(r["delta_ms"]) >= limit and r["delta_ms"] != 0
    ]
    new = [r for r in rows if r["status"] == "new" and not r["uncertain"] and r["candidate_ms"] >= limit]
    gone = [r for r in rows if r["status"] == "vanished" and not r["uncertain"] and r["baseline_ms"] >= limit]
    n = EXPLAIN["max_ops"]
    out = []
    if changed:
        items = ", ".join(f"{_named(r)} {fmt_signed_ms(r['delta_ms'])} ms" for r in changed[:n])
        out.append(f"Largest {what} changes per step: {items}.")
    if new:
        new.sort(key=lambda r: -r["candidate_ms"])
        more = f" and {len(new) - n} more" if len(new) > n else ""
        out.append(
            f"New {what}s: "
            + ", ".join(f"{_named(r)} ({fmt_ms(r['candidate_ms'])} ms)" for r in new[:n])
            + more
            + "."
        )
    if gone:
        gone.sort(key=lambda r: -r["baseline_ms"])
        more = f" and {len(gone) - n} more" if len(gone) > n else ""
        out.append(
            f"Vanished {what}s: "
            + ", ".join(f"{_named(r)} ({fmt_ms(r['baseline_ms'])} ms)" for r in gone[:n])
            + more
            + "."
        )
    return out


def _memory_sentence(diff: Dict[str, Any]) -> Optional[str]:
    m = diff["peak_memory_bytes"]
    if m["baseline"] is None or m["candidate"] is None or m["delta_pct"] is None:
        return None
    if abs(m["delta_pct"]) < EXPLAIN["memory_min_pct"]:
        return None
    return (
        f"Peak device memory {format_bytes(m['baseline'])} {ARROW} {format_bytes(m['candidate'])} "
        f"({fmt_signed_pct(m['delta_pct'])})."
    )


def explain(diff: Dict[str, Any]) -> str:
    """One paragraph in plain words; each clause appears only when its numbers pass EXPLAIN."""
    st = diff["step_time"]
    sentences: List[Optional[str]] = [
        _step_sentence(diff),
        _share_sentence(diff),
        _slower_16bit_sentence(diff),
        _verdict_sentence(diff),
    ]
    if st["significant"] or any(row["significant"] for row in diff["breakdown"].values()):
        sentences += _ops_sentence(diff, "ops", "op")  # op moves are only worth naming behind a real change
    sentences.append(_memory_sentence(diff))
    sentences += deep_sentences(diff)
    enough = STEP_TESTS[0]["min_steps"]
    if diff.get("significant_change") is False and not _few_steps(st):
        sentences.append("No significant change in any section.")
    fewest = min(st["baseline_steps"], st["candidate_steps"])
    if 0 < fewest < enough and not st["significant"]:
        profiled = f"Only {st['baseline_steps']} and {st['candidate_steps']} steps were profiled"
        if st.get("reason_code") == "too_few_steps":
            sentences.append(f"{profiled}: too few to test; profile at least {enough} steps per run to "
                             "judge a change.")
        else:
            smallest = fmt_share(st.get("min_effect_pct") or STEP_TESTS[-1]["min_effect_pct"])
            sentences.append(f"{profiled}: a change below {smallest} % cannot be told from the drift between "
                             f"runs; profile at least {enough} steps per run to judge smaller ones.")
    return " ".join(s for s in sentences if s)


def _few_steps(st: Dict[str, Any]) -> bool:
    """Fewer steps on a side than the rank test needs: only large changes can be called."""
    return min(st["baseline_steps"], st["candidate_steps"]) < STEP_TESTS[0]["min_steps"]
