"""Findings of the collectives view (analysis/deep/collectives.py): communication not hidden behind
compute, many small messages, and a straggler rank the others wait for. Each check reads the view's
JSON, of one host (or of the whole run, for the skew across hosts: report/combine.py); their thresholds
are in analysis/thresholds.py."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Tuple

from tb_plugin_advisor.advice.expected_gain import ExpectedGain
from tb_plugin_advisor.advice.gains import fixed_interval, no_estimate, without_estimate
from tb_plugin_advisor.advice.rule import Fired, Rule, Snippets
from tb_plugin_advisor.analysis.thresholds import (
    COLLECTIVES_EXPOSED_HIGH_PCT,
    COLLECTIVES_EXPOSED_PCT,
    COLLECTIVES_SKEW_PCT,
    COLLECTIVES_SMALL_MESSAGE_BYTES,
    COLLECTIVES_SMALL_MIN_PER_STEP,
)
from tb_plugin_advisor.formatting import fixed, format_memory, format_ms, format_pct

Collectives = Dict[str, Any]  # the view's JSON (docs/deep-views.md)
COLLECTIVE_EVIDENCE = ("collective", "worst_step")


def _step_of(c: Collectives) -> float:
    """The step time the collectives' shares are of (exposed ms ÷ exposed share)."""
    exposed, share = c.get("exposed_per_step_ms"), c.get("exposed_step_pct")
    return 100.0 * exposed / share if exposed and share else 0.0


def exposed(c: Collectives) -> Iterator[Fired]:
    share = c.get("exposed_step_pct")
    if share is not None and share >= COLLECTIVES_EXPOSED_PCT:
        yield Fired("high" if share >= COLLECTIVES_EXPOSED_HIGH_PCT else "medium", (
            f"{format_ms(c.get('exposed_per_step_ms'))} of {format_ms(c.get('per_step_ms'))} collective time "
            "per step "
            f"is exposed: {format_pct(share)} of the step; {format_pct(c.get('hidden_pct') or 0)} is hidden"
        ))


def exposed_gain(c: Collectives) -> ExpectedGain:
    ms = float(c.get("exposed_per_step_ms") or 0.0)
    return fixed_interval(_step_of(c), 0.5 * ms, ms,
                          f"the {fixed(ms, 1)} ms of exposed collective time per step, hidden behind "
                          "compute; at the low end half of it (the backward pass may be shorter than the "
                          "communication)")


EXPOSED = Rule(
    id="collectives.exposed",
    title="Communication is not hidden behind compute",
    message="While these collectives run no compute kernel runs on the device, so they add to the "
    "step. Overlap them with the backward pass (gradient buckets, prefetching, async collectives).",
    check=exposed,
    gain=exposed_gain,
    evidence=COLLECTIVE_EVIDENCE,
    snippets=Snippets(every=(
        "# PyTorch DDP: larger gradient buckets overlap better with the backward pass\n"
        "model = DDP(model, bucket_cap_mb=100, gradient_as_bucket_view=True)\n"
        "# FSDP: prefetch the next all-gather during the current layer\n"
        "FSDP(model, backward_prefetch=BackwardPrefetch.BACKWARD_PRE, forward_prefetch=True)\n"
        "# JAX / XLA on GPU: let the scheduler hide collectives behind compute\n"
        "XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true"
    )),
)


def small_messages(c: Collectives) -> Iterator[Fired]:
    """Each collective type whose calls are many and small."""
    for t in c.get("types") or []:
        mean, per_step = t.get("mean_message_bytes"), t.get("calls_per_step")
        if mean is None or per_step is None:
            continue
        if mean < COLLECTIVES_SMALL_MESSAGE_BYTES and per_step >= COLLECTIVES_SMALL_MIN_PER_STEP:
            yield Fired("medium", (
                f"{fixed(per_step, 0)} calls per step, {format_memory(mean)} on average"
                + (f", {fixed(t['busbw_gbps'], 1)} GB/s bus bandwidth"
                   if t.get("busbw_gbps") is not None else "")
            ), subject=t["type"].replace("_", "-"))


SMALL_MESSAGES = Rule(
    id="collectives.small_messages",
    title="Many small {subject} messages",
    message="Small messages are latency-bound: each call pays the same setup cost whatever its size. "
    "Fewer, larger buckets (DDP bucket_cap_mb, FSDP wrapping larger units, XLA combiner thresholds) "
    "move the same bytes in fewer calls.",
    check=small_messages,
    gain=without_estimate("fewer, larger messages save per-call latency the profile cannot separate "
                          "from bandwidth"),
    evidence=COLLECTIVE_EVIDENCE,
)


def straggler(c: Collectives) -> Iterator[Fired]:
    skew = c.get("skew") or {}
    if skew.get("compute_skew_pct") is not None and skew["compute_skew_pct"] >= COLLECTIVES_SKEW_PCT:
        yield Fired("medium", (
            f"{skew['slowest']} computes {format_ms(skew['slowest_compute_per_step_ms'])} per step against "
            "a median "
            f"of {format_ms(skew['median_compute_per_step_ms'])} (+{format_pct(skew['compute_skew_pct'])}) "
            f"over {skew['ranks']} ranks"
        ), subject=str(skew["slowest"]))


def straggler_gain(c: Collectives) -> ExpectedGain:
    skew = c["skew"]
    extra = float(skew["slowest_compute_per_step_ms"]) - float(skew["median_compute_per_step_ms"])
    step = _step_of(c)
    if step <= 0:
        return no_estimate(step, "the step time of the ranks is not known here")
    return fixed_interval(step, 0.5 * extra, extra, f"the {fixed(extra, 1)} ms per step the other ranks wait "
                          "for the slowest one; at the low end half of it (some imbalance stays)")


STRAGGLER = Rule(
    id="collectives.straggler",
    title="{subject} is a straggler",
    message="One rank computes longer than the others, which then wait inside their collectives. Look "
    "for uneven data (sequence lengths, batch shapes), a slower device, or work only that rank does.",
    check=straggler,
    gain=straggler_gain,
    evidence=COLLECTIVE_EVIDENCE,
)

RULES: Tuple[Rule[Collectives], ...] = (EXPOSED, SMALL_MESSAGES, STRAGGLER)
