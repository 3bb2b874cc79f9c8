"""Bounded fuzzing in CI of the PyTorch profiler (Kineto) reader: ~2,000 mutated windows of real traces
through the reader and every analysis.

Kineto traces come from other programs, other torch versions and, through TensorBoard, from anyone who
can write to a logdir, so no input may crash the reader or an analysis: every one must give a report or
a clear refusal (AdvisorError). Windows of real traces (kineto_fuzz_harness.py) reach the code paths
random JSON never does. Hypothesis drives the seeds, so a failure shrinks to a small seed that
reproduces it; bench/fuzz_kineto.py runs many more of the same inputs.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kineto_fuzz_harness import MUTATIONS, make_case, mutated, run_case, unmutated

# Windows of up to this many events: small enough for ~2,000 cases in about a minute on two cores.
MAX_EVENTS = 400
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@_settings(200)
@given(seed=SEEDS)
def test_unmutated_windows_of_real_traces_give_a_report(seed: int) -> None:
    # the baseline: before any mutation a case is a real trace, which must be read, not refused
    assert run_case(unmutated(random.Random(seed), MAX_EVENTS)) == "report"


@_settings(800)
@given(seed=SEEDS, mutation=st.sampled_from(MUTATIONS))
def test_each_mutation_gives_a_report_or_a_clear_refusal(seed: int, mutation: str) -> None:
    assert run_case(mutated(random.Random(seed), [mutation], MAX_EVENTS)) in ("report", "refused")


@_settings(1000)
@given(seed=SEEDS)
def test_mixed_mutations_never_raise_anything_but_a_read_error(seed: int) -> None:
    assert run_case(make_case(random.Random(seed), MAX_EVENTS)) in ("report", "refused")
