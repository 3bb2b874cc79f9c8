"""Run-to-run diff: two Reports in, what changed per step, per category and per op — and is it real.

The diff works on report JSON dicts (`tb-advisor/report/1`, ARCHITECTURE.md §2) rather than
on Profiles: the numbers a user compares are the ones the report showed them,
and the core can be tested with report dicts built by hand. `diff_runs` is the thin wrapper that
builds both reports first.

Is a change real? Per-step times are skewed (a slow first step, a GC pause, an epoch boundary), so
the test is rank-based, not a t-test on means:

* **Mann–Whitney U** (Wilcoxon rank-sum) on the two sets of per-step times, two-sided. Exact null
  distribution when there are no ties and few pairs, normal approximation with tie correction
  otherwise. A run diffed with itself gives U = n²/2 exactly, p = 1.
* **Hodges–Lehmann shift** (median of all candidate-minus-baseline step differences) with its
  distribution-free confidence interval from the same U distribution; `noise_pct` is that
  interval's half-width relative to the baseline median.
* `significant` needs p < alpha, at least `min_steps` steps on each side (below 5 + 5 steps the
  exact test cannot reach alpha = 0.01 anyway: few steps are never significant), a shift of at least
  `min_effect_pct` of the baseline median (two profiles taken minutes apart differ by more than the
  within-run spread suggests: clocks, other load), and mean and median moving the same way.

The same test runs on every breakdown category's per-step values, so "input wait −296 ms" can be
called significant on its own.
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis.diff_deep import deep_diff, deep_sentences
from tb_plugin_advisor.analysis.diff_hosts import diff_hosts
from tb_plugin_advisor.analysis.diff_names import NAME_RULES, NAME_RULES_KEEP, NameRule, normalise_name
from tb_plugin_advisor.analysis.diff_stats import SIGNIFICANCE, ShiftTest, _significant, shift_test
from tb_plugin_advisor.analysis.thresholds import TOP_OPS
from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.model import RunProfiles

SCHEMA = "tb-advisor/diff/1"
# Re-exported: the name rules and the statistics moved to diff_names.py / diff_stats.py.
__all__ = ["NAME_RULES", "NAME_RULES_KEEP", "NameRule", "SIGNIFICANCE", "ShiftTest", "diff_reports",
           "diff_runs", "explain", "is_regression", "match_by_name", "normalise_name", "shift_test"]

# ---------------------------------------------------------------------------------------------------
# Thresholds: every number that decides a verdict or a sentence lives here.


EXPLAIN = {
    "category_min_pct": 2.0,  # a category is named when |Δ| ≥ this % of the baseline step
    "max_categories": 3,
    "share_min_points": 5.0,  # precision / Tensor Core shares moving by ≥ this many points are named
    "max_shares": 2,
    "op_min_pct": 1.0,  # an op is named when |Δ| ≥ this % of the baseline step
    "max_ops": 3,
    "memory_min_pct": 5.0,  # peak memory is mentioned when it moved by ≥ this %
}
# When the 16-bit share grew but the compute that runs it got significantly slower, the hardware is
# emulating 16-bit math (CPUs without AVX512-BF16/AMX, GPUs without Tensor Cores): say so.
SLOWER_16BIT = (
    "The 16-bit ops got slower, not faster: this {where} does not run {kinds} natively (CPUs need "
    "AVX512-BF16 or AMX, GPUs Tensor Cores), so keep float32 here and use mixed precision where it is "
    "supported."
)
SIXTEEN_BIT = ("fp16", "bf16")

SENTENCE_NAME_CHARS = 80  # op names in the summary are shortened to this (tables show more)

REPORT_LIST_LIMIT = TOP_OPS  # reports list their top ops / kernels only (analysis/thresholds.py)

# Breakdown categories (ARCHITECTURE.md §2) and the words used for them in sentences.
CATEGORIES: Tuple[Tuple[str, str], ...] = (
    ("input", "input wait"),
    ("device_compute", "device compute"),
    ("host_compute", "host compute"),
    ("kernel_launch", "kernel launch"),
    ("memcpy", "memory copies"),
    ("communication", "communication"),
    ("idle", "idle"),
    ("other", "other"),
)
CATEGORY_LABELS = dict(CATEGORIES)

BOTTLENECK_LABELS = {
    "input": "input pipeline",
    "device": "device compute",
    "host": "host compute",
    "launch": "kernel launch",
    "memcpy": "memory copies",
    "communication": "communication",
    "balanced": "balanced",
    "unknown": "unknown",
}

PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "unknown")

INPUT_BOUND = ("high", "moderate")  # input_bound levels that put the input pipeline on the critical path

# What a verdict change means, first match wins: (id, before levels, after levels, phrase).
INPUT_INTERPRETATIONS: Tuple[Tuple[str, Tuple[str, ...], Tuple[str, ...], str], ...] = (
    ("input_resolved", INPUT_BOUND, ("low",), "the input pipeline is no longer on the critical path"),
    ("input_regressed", ("low",), INPUT_BOUND, "the input pipeline is now on the critical path"),
    ("input_eased", ("high",), ("moderate",), "the input pipeline is still on the critical path, less so"),
    ("input_worsened", ("moderate",), ("high",), "the input pipeline weighs more on the critical path"),
)

MINUS = "\u2212"  # typographic minus, as in "−38 %"
ARROW = "\u2192"

# ---------------------------------------------------------------------------------------------------
# Reading report dicts defensively (reports from older versions or other hosts may lack keys)


def _num(value: Any) -> Optional[float]:
    if isinstance(value, bool) or value is None:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _steady_steps(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The per-step entries the report's means are made of: warm-up steps left out (as the engine does)."""
    per_step = [s for s in (report.get("steps") or {}).get("per_step") or [] if isinstance(s, dict)]
    steady = [s for s in per_step if not s.get("warmup")]
    return steady or per_step


def _step_times(report: Dict[str, Any]) -> List[float]:
    steps = _steady_steps(report)
    if steps:
        times = [_num(s.get("total_ms")) for s in steps]
    else:
        times = [_num(t) for t in (report.get("steps") or {}).get("times_ms") or []]
    return [t for t in times if t is not None]


def _category_series(report: Dict[str, Any], category: str) -> List[float]:
    out = []
    for step in _steady_steps(report):
        value = _num((step.get("breakdown_ms") or {}).get(category))
        out.append(value if value is not None else 0.0)
    return out


def _mean_median(report: Dict[str, Any], times: List[float]) -> Tuple[Optional[float], Optional[float]]:
    """The report's own mean/median (what the user saw), else computed from the per-step times."""
    steps = report.get("steps") or {}
    if steps.get("count") == 0 and not times:
        return None, None  # the engine writes 0.0 for "no steps"; that is not a step time
    mean, median = _num(steps.get("mean_ms")), _num(steps.get("median_ms"))
    if mean is None and times:
        mean = float(np.mean(times))
    if median is None and times:
        median = float(np.median(times))
    return mean, median


def _pct(delta: Optional[float], base: Optional[float]) -> Optional[float]:
    if delta is None or base is None or base == 0:
        return None
    return 100.0 * delta / base


def _sub(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else a - b


# ---------------------------------------------------------------------------------------------------
# The parts of the diff


def _step_time(base: Dict[str, Any], cand: Dict[str, Any]) -> Dict[str, Any]:
    bt, ct = _step_times(base), _step_times(cand)
    b_mean, b_median = _mean_median(base, bt)
    c_mean, c_median = _mean_median(cand, ct)
    delta = _sub(c_mean, b_mean)
    test = shift_test(bt, ct)
    significant, reason = _significant(test, len(bt), len(ct), b_median, delta)
    noise = None
    if test.ci is not None and b_median:
        noise = 100.0 * (test.ci[1] - test.ci[0]) / 2.0 / b_median
    return {
        "baseline_ms": b_mean,
        "candidate_ms": c_mean,
        "delta_ms": delta,
        "delta_pct": _pct(delta, b_mean),
        "baseline_median_ms": b_median,
        "candidate_median_ms": c_median,
        "median_delta_pct": _pct(_sub(c_median, b_median), b_median),
        "baseline_steps": len(bt),
        "candidate_steps": len(ct),
        "shift_ms": test.shift,
        "shift_ci_ms": list(test.ci) if test.ci else None,
        "noise_pct": noise,
        "p_value": test.p_value,
        "test": test.test,
        "significant": significant,
        "reason": reason,
    }


def _breakdown(
    base: Dict[str, Any], cand: Dict[str, Any], scale: Optional[float]
) -> Dict[str, Dict[str, Any]]:
    b_ms, c_ms = base.get("breakdown_ms") or {}, cand.get("breakdown_ms") or {}
    keys = [k for k, _ in CATEGORIES] + sorted((set(b_ms) | set(c_ms)) - set(CATEGORY_LABELS))
    out = {}
    for key in keys:
        b, c = _num(b_ms.get(key)), _num(c_ms.get(key))
        b, c = (b or 0.0), (c or 0.0)
        bs, cs = _category_series(base, key), _category_series(cand, key)
        test = shift_test(bs, cs)
        significant, reason = _significant(test, len(bs), len(cs), scale, c - b)
        out[key] = {
            "baseline_ms": b,
            "candidate_ms": c,
            "delta_ms": c - b,
            "delta_pct": _pct(c - b, b),
            "baseline_pct": _num((base.get("breakdown_pct") or {}).get(key)),
            "candidate_pct": _num((cand.get("breakdown_pct") or {}).get(key)),
            "p_value": test.p_value,
            "significant": significant,
            "reason": reason,
        }
    return out


def _share_significant(
    delta: Optional[float], changed_verdict: bool, compute_row: Dict[str, Any]
) -> bool:
    """A share is a ratio of times, so it moves with noise in any of them: it counts as a change only
    when it moved by at least EXPLAIN's minimum points AND the time it is a share of moved
    significantly (the rank test and minimum effect of the step times) or the verdict it drives changed.
    Two runs of the same configuration then diff to no change (fp32 81 → 71 % was reported before)."""
    if delta is None or abs(delta) < EXPLAIN["share_min_points"]:
        return False
    return changed_verdict or bool(compute_row.get("significant"))


def _shares(
    base: Dict[str, Any], cand: Dict[str, Any], breakdown: Dict[str, Dict[str, Any]]
) -> Dict[str, Any]:
    b_prec, c_prec = base.get("precision_pct") or {}, cand.get("precision_pct") or {}
    keys = list(PRECISIONS) + sorted((set(b_prec) | set(c_prec)) - set(PRECISIONS))
    precision_delta = {}
    for key in keys:
        b, c = _num(b_prec.get(key)), _num(c_prec.get(key))
        if b is None and c is None:
            continue
        precision_delta[key] = (c or 0.0) - (b or 0.0)
    b_tc = _num((base.get("tensor_cores") or {}).get("device_time_pct"))
    c_tc = _num((cand.get("tensor_cores") or {}).get("device_time_pct"))
    b_precision, c_precision = base.get("precision") or {}, cand.get("precision") or {}
    b_pv, c_pv = b_precision.get("verdict"), c_precision.get("verdict")
    bases = {b_precision.get("basis"), c_precision.get("basis")}
    rows = [r for r, basis in (("host_compute", "host"), ("device_compute", "device")) if basis in bases]
    # older reports do not say what the shares are of: either compute moving will do
    rows = rows or ["host_compute", "device_compute"]
    compute_row = {"significant": any((breakdown.get(r) or {}).get("significant") for r in rows)}
    b_tcv = (base.get("tensor_cores") or {}).get("verdict")
    c_tcv = (cand.get("tensor_cores") or {}).get("verdict")
    tc_delta = _sub(c_tc, b_tc)
    return {
        "precision_delta_pct": precision_delta,
        "precision_significant": {
            k: _share_significant(d, b_pv != c_pv, compute_row) for k, d in precision_delta.items()
        },
        "precision_pct": {"baseline": dict(b_prec), "candidate": dict(c_prec)},
        "precision_verdict": {"baseline": b_pv, "candidate": c_pv},
        "tensor_cores_delta_pct": tc_delta,
        "tensor_cores_significant": _share_significant(
            tc_delta, b_tcv != c_tcv, breakdown.get("device_compute") or {}
        ),
        "tensor_cores_pct": {"baseline": b_tc, "candidate": c_tc},
    }


def _memory(base: Dict[str, Any], cand: Dict[str, Any]) -> Dict[str, Any]:
    b, c = base.get("peak_memory_bytes"), cand.get("peak_memory_bytes")
    b = int(b) if _num(b) is not None else None
    c = int(c) if _num(c) is not None else None
    delta = None if b is None or c is None else c - b
    return {"baseline": b, "candidate": c, "delta_bytes": delta, "delta_pct": _pct(delta, b)}


def _kernel_rows(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The report's kernel table (per step); older reports only list kernels under tensor_cores."""
    rows = report.get("kernels")
    if rows is None:
        rows = (report.get("tensor_cores") or {}).get("kernels") or []
    return [
        dict(k, category=k.get("category") or "kernel") for k in rows if isinstance(k, dict) and k.get("name")
    ]


def match_by_name(
    baseline: Sequence[Dict[str, Any]], candidate: Sequence[Dict[str, Any]]
) -> List[Dict[str, Any]]:
    """Match op (or kernel) rows of two reports by normalised name; sorted by |Δ time per step|.

    Rows sharing a normalised name are one group per side. When both sides hold exactly the same raw
    names in a group (the usual case: the same script run twice) the group is compared name by name,
    keeping per-layer detail; otherwise — instance numbers shifted, fusions renumbered — the group is
    compared as a whole under its normalised name.

    Reports list only their top REPORT_LIST_LIMIT rows. An op missing from a full list may sit below
    its cut-off, so such "new"/"vanished" rows are marked `uncertain` and not narrated.
    """
    floors = [_list_floor(baseline), _list_floor(candidate)]
    groups: Dict[str, List[Dict[str, Dict[str, Any]]]] = {}
    for side, rows in ((0, baseline), (1, candidate)):
        for row in rows:
            name = str(row.get("name", ""))
            key = normalise_name(name)
            group = groups.setdefault(key, [{}, {}])
            entry = group[side].setdefault(
                name, {"time_ms": 0.0, "count": 0.0, "category": row.get("category")}
            )
            entry["time_ms"] += _num(row.get("time_ms")) or 0.0
            entry["count"] += _num(row.get("count")) or 0.0

    out = []
    for key, (b_rows, c_rows) in groups.items():
        if b_rows and set(b_rows) == set(c_rows):
            for name in b_rows:
                out.append(_op_row(name, key, {name: b_rows[name]}, {name: c_rows[name]}, "exact"))
        else:
            out.append(_op_row(key, key, b_rows, c_rows, "normalised"))
    for row in out:
        missing_side = {"new": 0, "vanished": 1}.get(row["status"])
        row["uncertain"] = missing_side is not None and floors[missing_side] is not None
    out.sort(key=lambda r: (-abs(r["delta_ms"]), -max(r["baseline_ms"], r["candidate_ms"]), r["name"]))
    return out


def _list_floor(rows: Sequence[Dict[str, Any]]) -> Optional[float]:
    """The smallest listed time when the list is full (so it was cut), else None."""
    if len(rows) < REPORT_LIST_LIMIT:
        return None
    return min((_num(r.get("time_ms")) or 0.0) for r in rows)


def _op_row(
    name: str, key: str, b_rows: Dict[str, Any], c_rows: Dict[str, Any], match: str
) -> Dict[str, Any]:
    b = sum(r["time_ms"] for r in b_rows.values())
    c = sum(r["time_ms"] for r in c_rows.values())
    category = next(
        (r["category"] for r in list(b_rows.values()) + list(c_rows.values()) if r["category"]), None
    )
    status = "new" if not b_rows else "vanished" if not c_rows else "changed"
    return {
        "name": name,
        "key": key,
        "category": category,
        "baseline_ms": b,
        "candidate_ms": c,
        "delta_ms": c - b,
        "delta_pct": _pct(c - b, b),
        "baseline_count": sum(r["count"] for r in b_rows.values()),
        "candidate_count": sum(r["count"] for r in c_rows.values()),
        "status": status,
        "match": match,
        "instances": {"baseline": len(b_rows), "candidate": len(c_rows)},
        "raw_names": sorted(set(b_rows) | set(c_rows))[:5],
    }


# ---------------------------------------------------------------------------------------------------
# The whole diff


def diff_reports(baseline: Dict[str, Any], candidate: Dict[str, Any]) -> Dict[str, Any]:
    """Compare two report dicts (`tb-advisor/report/1`) → diff dict (`tb-advisor/diff/1`)."""
    step_time = _step_time(baseline, candidate)
    scale = step_time["baseline_median_ms"] or step_time["baseline_ms"]
    breakdown = _breakdown(baseline, candidate, scale)
    shares = _shares(baseline, candidate, breakdown)
    memory = _memory(baseline, candidate)
    ops = match_by_name(baseline.get("ops") or [], candidate.get("ops") or [])
    kernels = match_by_name(_kernel_rows(baseline), _kernel_rows(candidate))

    warnings: List[str] = []
    for side, report in (("baseline", baseline), ("candidate", candidate)):
        schema = report.get("schema")
        if schema and not str(schema).startswith("tb-advisor/report/"):
            warnings.append(f"{side}: unexpected schema {schema!r}")
        if not _step_times(report):
            warnings.append(f"{side}: the report has no per-step times; significance cannot be judged")
        for w in report.get("warnings") or []:
            warnings.append(f"{side}: {w}")
    frameworks = {"baseline": baseline.get("framework") or "", "candidate": candidate.get("framework") or ""}
    mixed = cross_framework_caveat(frameworks["baseline"], frameworks["candidate"])
    if mixed:
        warnings.insert(0, mixed)

    diff = {
        "schema": SCHEMA,
        "baseline": baseline.get("run", ""),
        "candidate": candidate.get("run", ""),
        "baseline_hosts": list(baseline.get("hosts") or []),
        "candidate_hosts": list(candidate.get("hosts") or []),
        "step_time": step_time,
        "breakdown_delta_ms": {k: v["delta_ms"] for k, v in breakdown.items()},
        "breakdown": breakdown,
        "verdict": {
            "baseline": dict(baseline.get("verdict") or {}),
            "candidate": dict(candidate.get("verdict") or {}),
        },
        **shares,
        "peak_memory_bytes": memory,
        "ops": ops,
        "kernels": kernels,
        "warnings": warnings,
        "frameworks": frameworks,
        **deep_diff(baseline, candidate),  # memory, kernel_stats … (diff_deep.py)
    }
    diff["significant_change"] = bool(
        step_time["significant"]
        or any(row["significant"] for row in breakdown.values())
        or any(shares["precision_significant"].values())
        or shares["tensor_cores_significant"]
    )
    per_host = diff_hosts(baseline, candidate)
    if per_host is not None:
        diff["per_host"] = per_host
    diff["summary"] = explain(diff)
    return diff


def is_regression(diff: Dict[str, Any], threshold_pct: float) -> bool:
    """The CI gate: the candidate's step is significantly slower, by more than `threshold_pct`.

    Both the mean and the median must be worse by more than the threshold, so one slow outlier
    step cannot fail a build, and neither can a change that only moves the mean.
    """
    st = diff.get("step_time") or {}
    if not st.get("significant"):
        return False
    mean_pct, median_pct = _num(st.get("delta_pct")), _num(st.get("median_delta_pct"))
    if mean_pct is None or median_pct is None:
        return False
    return min(mean_pct, median_pct) > threshold_pct


def cross_framework_caveat(baseline_framework: str, candidate_framework: str) -> str:
    """A PyTorch run against a TF/JAX run: the diff works, with this caveat ("" when they match).

    Step times, the breakdown categories, precision and Tensor Core shares mean the same thing in
    both; op names do not (aten ops vs TF ops / HLO), so op rows show up as new and vanished.
    """
    torch_side = {baseline_framework == "pytorch", candidate_framework == "pytorch"}
    if torch_side != {True, False}:
        return ""
    return (
        "cross-framework diff (PyTorch vs TensorFlow/JAX): step time, breakdown, precision and Tensor "
        "Core shares compare; op and kernel names differ between frameworks, so ops show as new and "
        "vanished rather than changed"
    )


def diff_runs(
    baseline: RunProfiles,
    candidate: RunProfiles,
    baseline_host: Optional[str] = None,
    candidate_host: Optional[str] = None,
) -> Dict[str, Any]:
    """Build both runs' reports (only the given host of each, when given) and diff them."""
    from tb_plugin_advisor.report import build_report  # the engine; imported here to keep layers one-way

    reports = []
    for role, run, host in (("baseline", baseline, baseline_host), ("candidate", candidate, candidate_host)):
        if host is not None:
            profiles = [p for p in run.profiles if p.host == host]
            if not profiles:
                raise AdvisorError(
                    f"unknown {role} host '{host}' in run '{run.run}'; its hosts: {', '.join(run.hosts)}"
                )
            run = RunProfiles(run=run.run, profiles=profiles)
        report = build_report(run)
        reports.append(report.to_json() if hasattr(report, "to_json") else report)
    return diff_reports(reports[0], reports[1])


# ---------------------------------------------------------------------------------------------------
# The plain-words paragraph. Every clause is computed from the diff's numbers.


def short_name(name: str, limit: int = SENTENCE_NAME_CHARS) -> str:
    """A readable kernel/op name for sentences and text tables: C++ `void ` and the argument list
    dropped (they repeat the template arguments), the middle elided when still too long."""
    if name.startswith("void ") and "<" in name:
        name = name[5:]
    if name.endswith(")") and "(" in name and "<" in name:
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i] if i > 0 else name
                break
    if len(name) > limit:
        name = _elide_at_separators(name, limit)
    return name


_NAME_PARTS = re.compile(r"(?<=[/:,<>( ])")


def _elide_at_separators(name: str, limit: int) -> str:
    """First part, "…", then as many whole trailing parts as fit (`a/…/conv2d/Conv2D:Conv2D`): a name
    cut mid-word reads as a different op. Names without separators are cut in the middle."""
    parts = [p for p in _NAME_PARTS.split(name) if p]

    def joined(head: List[str], tail: List[str]) -> str:
        dropped = parts[len(head) : len(parts) - len(tail)]
        sep = dropped[-1][-1] if dropped and not dropped[-1][-1].isalnum() else ""
        return "".join(head) + "\u2026" + sep + "".join(tail)

    for head in (parts[:1], []):  # keep the first part if it fits beside a tail, else only a tail
        tail: List[str] = []
        for part in reversed(parts[len(head) :]):
            if len(joined(head, [part, *tail])) > limit:
                break
            tail.insert(0, part)
        if tail and len(parts) > len(head) + len(tail):
            return joined(head, tail)
    keep = limit - 1
    return name[: keep // 2] + "\u2026" + name[len(name) - (keep - keep // 2) :]


def fmt_ms(value: float) -> str:
    a = abs(value)
    text = f"{a:.0f}" if a >= 100 else f"{a:.1f}" if a >= 10 else f"{a:.2f}" if a >= 0.1 else f"{a:.3f}"
    return (MINUS if value < 0 and float(text) != 0 else "") + text


def fmt_signed_ms(value: float) -> str:
    text = fmt_ms(value)
    return text if text.startswith(MINUS) else "+" + text


def fmt_signed_pct(value: float) -> str:
    a = abs(value)
    text = f"{a:.0f}" if a >= 10 else f"{a:.1f}"
    if float(text) == 0:
        return "±0 %"
    return (MINUS if value < 0 else "+") + text + " %"


def fmt_share(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    a = abs(value)
    return f"{value:.0f}" if a >= 10 or a == 0 else f"{value:.1f}"


def fmt_bytes(value: int) -> str:
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def _step_sentence(diff: Dict[str, Any]) -> str:
    st = diff["step_time"]
    b, c, pct = st["baseline_ms"], st["candidate_ms"], st["delta_pct"]
    if b is None or c is None:
        return (
            "Step time could not be compared: "
            + ("the baseline has no steps" if b is None else "the candidate has no steps")
            + "."
        )
    if st["significant"]:
        quality = "significant"
    elif (
        st["baseline_steps"] < SIGNIFICANCE["min_steps"] or st["candidate_steps"] < SIGNIFICANCE["min_steps"]
    ):
        quality = "too few steps to call it significant"
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
        labels = dict(CATEGORY_LABELS)
        if set((diff.get("frameworks") or {}).values()) == {"pytorch"}:
            labels["input"] = "DataLoader wait"  # PyTorch's input wait is next() on its DataLoader
        sentence += ": " + ", ".join(f"{labels.get(k, k)} {fmt_signed_ms(d)} ms" for k, d in drivers)
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
        b = _num(prec["baseline"].get(key)) or 0.0
        c = _num(prec["candidate"].get(key)) or 0.0
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
        items = ", ".join(f"{short_name(r['name'])} {fmt_signed_ms(r['delta_ms'])} ms" for r in changed[:n])
        out.append(f"Largest {what} changes per step: {items}.")
    if new:
        new.sort(key=lambda r: -r["candidate_ms"])
        more = f" and {len(new) - n} more" if len(new) > n else ""
        out.append(
            f"New {what}s: "
            + ", ".join(f"{short_name(r['name'])} ({fmt_ms(r['candidate_ms'])} ms)" for r in new[:n])
            + more
            + "."
        )
    if gone:
        gone.sort(key=lambda r: -r["baseline_ms"])
        more = f" and {len(gone) - n} more" if len(gone) > n else ""
        out.append(
            f"Vanished {what}s: "
            + ", ".join(f"{short_name(r['name'])} ({fmt_ms(r['baseline_ms'])} ms)" for r in gone[:n])
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
        f"Peak device memory {fmt_bytes(m['baseline'])} {ARROW} {fmt_bytes(m['candidate'])} "
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
    if diff.get("significant_change") is False and min(st["baseline_steps"], st["candidate_steps"]) >= (
        SIGNIFICANCE["min_steps"]
    ):
        sentences.append("No significant change in any section.")
    fewest = min(st["baseline_steps"], st["candidate_steps"])
    if 0 < fewest < SIGNIFICANCE["min_steps"]:
        sentences.append(
            f"Only {st['baseline_steps']} and {st['candidate_steps']} steps were profiled; "
            f"profile at least {SIGNIFICANCE['min_steps']} steps per run to judge a change."
        )
    return " ".join(s for s in sentences if s)
