"""Run-to-run diff: two Reports in, what changed per step, per category and per op — and is it real.

The diff works on report JSON dicts (`tb-advisor/report/1`, ARCHITECTURE.md §2) rather than
on Profiles: the numbers a user compares are the ones the report showed them,
and the core can be tested with report dicts built by hand. It reads them through
report/document.py, which reads old, partial and other-host reports defensively. `diff_runs` is
the thin wrapper that builds both reports first.

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

from typing import Any, Dict, List, Optional

from tb_plugin_advisor.diff.deep import deep_diff
from tb_plugin_advisor.diff.explain import (
    explain,
)
from tb_plugin_advisor.diff.hosts import diff_hosts
from tb_plugin_advisor.diff.outcomes import outcome_sentences, recommendation_outcomes
from tb_plugin_advisor.diff.parts import (
    breakdown_part,
    match_by_name,
    memory_part,
    shares_part,
    step_time_part,
)
from tb_plugin_advisor.diff.uniform import apply_uniform_guard
from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.formatting import finite_json
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.report.document import ReportDocument, number, read_report

SCHEMA = "tb-advisor/diff/1"

# ---------------------------------------------------------------------------------------------------
# The whole diff


def diff_reports(baseline: Dict[str, Any], candidate: Dict[str, Any]) -> Dict[str, Any]:
    """Compare two report dicts (`tb-advisor/report/1`) → diff dict (`tb-advisor/diff/1`)."""
    base, cand = read_report(baseline), read_report(candidate)
    step_time = step_time_part(base, cand)
    scale = step_time["baseline_median_ms"] or step_time["baseline_ms"]
    breakdown = breakdown_part(base, cand, scale)
    ops = match_by_name(base.ops, cand.ops)
    # ops all moved with the step: the machine, not the code (diff/uniform.py); judged before the
    # shares, whose significance follows their compute's
    apply_uniform_guard(step_time, breakdown, ops)
    shares = shares_part(base, cand, breakdown)
    memory = memory_part(base, cand)
    kernels = match_by_name(base.kernel_rows, cand.kernel_rows)
    warnings = _warnings(base, cand)
    frameworks = {"baseline": base.framework, "candidate": cand.framework}

    diff = {
        "schema": SCHEMA,
        "baseline": base.run,
        "candidate": cand.run,
        "baseline_hosts": base.hosts,
        "candidate_hosts": cand.hosts,
        "step_time": step_time,
        "breakdown_delta_ms": {k: v["delta_ms"] for k, v in breakdown.items()},
        "breakdown": breakdown,
        "verdict": {"baseline": dict(base.verdict.raw), "candidate": dict(cand.verdict.raw)},
        **shares,
        "peak_memory_bytes": memory,
        "ops": ops,
        "kernels": kernels,
        "warnings": warnings,
        "frameworks": frameworks,
        **deep_diff(base, cand),  # memory, kernel_stats … (diff/deep.py)
    }
    diff["significant_change"] = bool(
        step_time["significant"]
        or any(row["significant"] for row in breakdown.values())
        or any(shares["precision_significant"].values())
        or shares["tensor_cores_significant"]
    )
    per_host = diff_hosts(base, cand)
    if per_host is not None:
        diff["per_host"] = per_host
    diff["recommendation_outcomes"] = recommendation_outcomes(base, cand, step_time)
    diff = finite_json(diff)  # a figure derived from extreme inputs is unknown, not inf
    diff["summary"] = " ".join([explain(diff), *outcome_sentences(diff["recommendation_outcomes"], base)])
    return diff


def _warnings(base: ReportDocument, cand: ReportDocument) -> List[str]:
    """What the reader of the diff must know first: runs on different clocks or frameworks, reports
    of another schema or without per-step times, and each report's own warnings."""
    warnings: List[str] = []
    for side, report in (("baseline", base), ("candidate", cand)):
        schema = report.schema
        if schema and not schema.startswith("tb-advisor/report/"):
            warnings.append(f"{side}: unexpected schema {schema!r}")
        if not report.steps.times:
            warnings.append(f"{side}: the report has no per-step times; significance cannot be judged")
        warnings += [f"{side}: {w}" for w in report.warnings]
    mixed = cross_framework_caveat(base.framework, cand.framework)
    if mixed:
        warnings.insert(0, mixed)
    clocks = [base.steps.clock, cand.steps.clock]
    if all(clocks) and clocks[0] != clocks[1]:
        warnings.insert(0, (
            f"the baseline's steps are timed on the {clocks[0]} clock and the candidate's on the {clocks[1]} "
            "clock: a host-clock step ends when the host has queued it, a device-clock step when the device "
            "has run it, so step times and shares are not measured alike"))
    return warnings


def is_regression(diff: Dict[str, Any], threshold_pct: float) -> bool:
    """The CI gate: the candidate's step is significantly slower, by more than `threshold_pct`.

    Both the mean and the median must be worse by more than the threshold, so one slow outlier
    step cannot fail a build, and neither can a change that only moves the mean.
    """
    st = diff.get("step_time") or {}
    if not st.get("significant"):
        return False
    mean_pct, median_pct = number(st.get("delta_pct")), number(st.get("median_delta_pct"))
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
    from tb_plugin_advisor.report.run import build_report  # the engine; imported here to keep layers one-way

    reports = []
    for role, run, host in (("baseline", baseline, baseline_host), ("candidate", candidate, candidate_host)):
        if host is not None:
            profiles = [p for p in run.profiles if p.host == host]
            if not profiles:
                raise AdvisorError(
                    f"unknown {role} host '{host}' in run '{run.run}'; its hosts: {', '.join(run.hosts)}"
                )
            run = RunProfiles(run=run.run, profiles=profiles)
        reports.append(build_report(run).to_json())
    return diff_reports(reports[0], reports[1])


