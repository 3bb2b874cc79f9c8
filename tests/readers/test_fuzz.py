"""Bounded fuzzing in CI: ~2,000 generated inputs through the reader and every analysis.

Hypothesis drives the seeds of fuzz_harness's generator, so a failure shrinks to a small seed that
reproduces it (`make_case(random.Random(seed))`). bench/fuzz.py runs 100,000 of the same inputs.
"""

from __future__ import annotations

import random

from fuzz_harness import MUTATIONS, make_case, run_case, valid_profile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ_SETTINGS = settings(max_examples=400, deadline=None, derandomize=True,
                         suppress_health_check=[HealthCheck.too_slow])


@FUZZ_SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_valid_profiles_with_hostile_stats_and_names_always_report(seed):
    assert run_case(valid_profile(random.Random(seed))) == "report"


@FUZZ_SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), mutation=st.sampled_from(sorted(MUTATIONS)))
def test_each_mutation_gives_a_report_or_a_clear_refusal(seed, mutation):
    rng = random.Random(seed)
    data = MUTATIONS[mutation](valid_profile(rng), rng)
    assert run_case(data) in ("report", "refused")


@settings(max_examples=1200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_mixed_mutations_never_raise_anything_but_a_read_error(seed):
    # every other case reads its lines in windows, as a long line is read (line_windows.py)
    assert run_case(make_case(random.Random(seed)), windows=seed % 2 == 1) in ("report", "refused")
