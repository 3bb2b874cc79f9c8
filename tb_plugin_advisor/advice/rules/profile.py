"""Rules about the capture itself rather than the training step: warm-up steps in the profiled range,
too few steps to average, no step markers, and a last step the capture's end cut off. Their fixes
improve the measurement, not the step, so none estimates a gain. Each check reads only `Facts`."""

from __future__ import annotations

from typing import Iterator, Tuple

from tb_plugin_advisor.advice import gains
from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rule import Fired, Rule, Snippets
from tb_plugin_advisor.analysis import thresholds as th


def warmup(f: Facts) -> Iterator[Fired]:
    if f.early_step_numbers or f.warmup_steps:
        which = (
            f"step {', '.join(str(s) for s in f.early_step_numbers)} is in the profiled range"
            if f.early_step_numbers
            else f"{f.warmup_steps} leading step{'s were' if f.warmup_steps > 1 else ' was'} much slower "
            "than the rest"
        )
        yield Fired("low", f"{which}; warm-up (tracing, compilation, allocator growth) distorts the numbers.")


WARMUP_STEP = Rule(
    id="profile.warmup_step",
    title="Profile steady steps, not the first ones",
    message="The first steps trace and compile functions and warm up allocators; profiled, they make "
    "the step look slower and differently shaped than it is.",
    check=warmup,
    gain=gains.measurement_only,
    evidence=("early_step", "worst_step"),
    snippets=Snippets(
        tf="keras.callbacks.TensorBoard(log_dir, profile_batch=(10, 20))\n"
        "# custom loop: start tf.profiler.experimental.start(logdir) after ~10 steps",
        jax="# run a few steps first, then: jax.profiler.start_trace(logdir) ... stop_trace()",
        pytorch="schedule = torch.profiler.schedule(skip_first=10, wait=1, warmup=2, active=5)",
    ),
)


def few_steps(f: Facts) -> Iterator[Fired]:
    if f.step_source != "none" and 0 < f.step_count < th.FEW_STEPS:
        yield Fired("low", f"Only {f.step_count} step{'s' if f.step_count != 1 else ''} in the profile.")


FEW_STEPS = Rule(
    id="profile.few_steps",
    title="Profile more steps",
    message="With few steps one slow step (a GC pause, an epoch boundary) moves every average; profile "
    "at least 5–10 steady steps.",
    check=few_steps,
    gain=gains.measurement_only,
    evidence=("worst_step",),
    snippets=Snippets(
        tf="keras.callbacks.TensorBoard(log_dir, profile_batch=(10, 20))",
        jax="for step in range(10):\n"
        "    with jax.profiler.StepTraceAnnotation('train', step_num=step):\n"
        "        state = train_step(state, next(batches))",
        pytorch="schedule = torch.profiler.schedule(wait=1, warmup=2, active=10)",
    ),
)


def step_markers(f: Facts) -> Iterator[Fired]:
    if f.step_source in ("none", "inferred"):
        found = (
            "no steps could be found"
            if f.step_source == "none"
            else "steps were inferred from a repeating pattern"
        )
        yield Fired("low", f"No step markers were recorded; {found}.")


STEP_MARKERS = Rule(
    id="profile.step_markers",
    title="Mark the steps in the profile",
    message="Without step markers steps must be guessed from repeating patterns (or not found at all). "
    "Mark each step so every tool splits the timeline the same way.",
    check=step_markers,
    gain=gains.measurement_only,
    evidence=("worst_step",),
    snippets=Snippets(
        tf="for step, (x, y) in enumerate(dataset):\n"
        "    with tf.profiler.experimental.Trace('train', step_num=step, _r=1):\n"
        "        train_step(x, y)",
        jax="with jax.profiler.StepTraceAnnotation('train', step_num=step):\n"
        "    state = train_step(state, batch)",
        pytorch="with torch.profiler.profile(schedule=..., on_trace_ready=...) as prof:\n"
        "    for x, y in loader:\n"
        "        train_step(x, y)\n"
        "        prof.step()  # marks ProfilerStep#N",
    ),
)


def cut_off_step(f: Facts) -> Iterator[Fired]:
    if f.cut_off_steps:
        plural = len(f.cut_off_steps) > 1
        yield Fired("low", (
            f"The capture ended before the device finished {' and '.join(f.cut_off_steps)}: the device "
            f"work of {'those steps was' if plural else 'that step was'} cut off, so "
            f"{'they are' if plural else 'it is'} left out of the averages."
        ))


CUT_OFF_STEP = Rule(
    id="profile.cut_off_step",
    title="Let the last profiled step finish before the capture ends",
    message="The last profiled step's device work was cut off by the end of the capture, so that step "
    "is left out of the averages, which rest on fewer steps. Close the profiled range at a step "
    "boundary: in PyTorch call prof.step() after the last step inside the profiler's context so its "
    "schedule closes it; when stopping by hand, synchronise the device first; in TF and JAX, stop the "
    "trace after the last step's outputs are ready.",
    check=cut_off_step,
    gain=gains.measurement_only,
    evidence=("worst_step",),
    snippets=Snippets(
        tf="for step in range(10):\n"
        "    with tf.profiler.experimental.Trace('train', step_num=step, _r=1):\n"
        "        loss = train_step(x, y)\n"
        "float(loss)  # the last step's outputs are ready: the device has finished it\n"
        "tf.profiler.experimental.stop()",
        jax="for step in range(10):\n"
        "    with jax.profiler.StepTraceAnnotation('train', step_num=step):\n"
        "        state, metrics = train_step(state, next(batches))\n"
        "jax.block_until_ready((state, metrics))  # the device has finished the last step\n"
        "jax.profiler.stop_trace()",
        pytorch="with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=2, active=5),\n"
        "                            on_trace_ready=...) as prof:\n"
        "    for x, y in loader:\n"
        "        train_step(x, y)\n"
        "        prof.step()  # after every step, the last one too: the schedule closes it\n"
        "# stopping by hand instead: torch.cuda.synchronize() before prof.stop()",
    ),
)

# Registration order is the tie order among advice of equal severity and gain (advice/registry.py).
RULES: Tuple[Rule[Facts], ...] = (WARMUP_STEP, FEW_STEPS, STEP_MARKERS, CUT_OFF_STEP)
