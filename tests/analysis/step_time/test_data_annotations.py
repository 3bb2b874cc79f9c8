"""Data loading marked by the user (event_names.DATA_LOADING_WORDS): time inside a step-thread
annotation whose name says data loading is input. Synthetic XSpace built like JAX on CPU writes it."""

from __future__ import annotations

import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis.classify.event_names import DATA_LOADING_WORDS, is_data_loading_annotation
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.sources.local_cpu import LocalCpu

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000
STEP_MS, INPUT_MS = 100, 78  # ~78 % of every step prepares the batch


def jax_cpu_run(annotation: str, steps: int = 8) -> dict:
    """JAX on CPU: StepTraceAnnotation('train') per step on the python thread; inside it the batch is
    prepared under TraceAnnotation(annotation) (numpy work: no events inside), then the jitted step is
    dispatched (PjitFunction) and runs on the XLA CPU executor."""
    space = XSpaceBuilder(hostnames=("jaxhost",))
    host = space.plane("/host:CPU")
    python = host.line("python3", 1)
    worker = host.line("XLA CPU thread", 2)
    for i in range(steps):
        start = T0 + i * STEP_MS * MS
        python.event("train", start, STEP_MS * MS, stats={"step_num": i, "_r": 1})
        python.event(annotation, start + 1 * MS, INPUT_MS * MS)
        python.event("PjitFunction(train_step)", start + (INPUT_MS + 2) * MS, 18 * MS)
        worker.event("TfrtCpuExecutable::ExecuteHelper", start + (INPUT_MS + 3) * MS, 16 * MS)
    profile = read_xplane_bytes(space.to_bytes(), source="synthetic", host="jaxhost")
    run = RunProfiles(run="jax", profiles=[profile])
    return build_report(run, local_cpu=LocalCpu("other", None)).to_json()


@pytest.mark.parametrize("annotation", ["input", "load_batch", "DataLoader", "preprocess#step=1#"])
def test_jax_run_inside_an_input_annotation_is_input_bound(annotation):
    report = jax_cpu_run(annotation)
    assert report["framework"] == "jax"
    assert report["steps"]["count"] >= 7
    # 78 ms of 100 ms per step: ±2 points for the step edges and the dispatch
    assert report["breakdown_pct"]["input"] == pytest.approx(78.0, abs=2.0), report["breakdown_pct"]
    assert report["verdict"]["input_bound"] == "high"
    assert report["verdict"]["bottleneck"] == "input", report["verdict"]


@pytest.mark.parametrize("annotation", ["download_weights", "payload", "compute_metrics"])
def test_other_annotations_are_not_input(annotation):
    report = jax_cpu_run(annotation)
    assert report["breakdown_pct"]["input"] < 1.0, report["breakdown_pct"]
    assert report["verdict"]["input_bound"] == "low"


def test_an_annotation_around_whole_steps_is_not_input():
    space = XSpaceBuilder(hostnames=("jaxhost",))
    python = space.plane("/host:CPU").line("python3", 1)
    python.event("data_epoch", T0 - MS, 10 * STEP_MS * MS)
    for i in range(8):
        start = T0 + i * STEP_MS * MS
        python.event("train", start, STEP_MS * MS, stats={"step_num": i, "_r": 1})
        python.event("PjitFunction(train_step)", start + 2 * MS, 90 * MS)
    profile = read_xplane_bytes(space.to_bytes(), source="synthetic", host="jaxhost")
    report = build_report(RunProfiles(run="jax", profiles=[profile]), local_cpu=LocalCpu("o", None)).to_json()
    assert report["breakdown_pct"]["input"] < 1.0, report["breakdown_pct"]


@pytest.mark.parametrize("word", sorted(DATA_LOADING_WORDS))
def test_every_word_matches_alone_and_inside_names(word):
    assert is_data_loading_annotation(word)
    assert is_data_loading_annotation(f"get_{word}_step")
    assert is_data_loading_annotation(word.capitalize() + "Stage")
    assert not is_data_loading_annotation(f"x{word}y")  # not a whole word


@pytest.mark.parametrize("name", [
    "download", "payload", "Profiled batch#step_num=3#", "model/input/Cast:Cast", "Iterator::Root::Prefetch",
    "PrefetchProduce", "input_reduce_fusion.1", "space-to-batch-converter", "LoadProgram", "Handle inputs",
    "ValidateInputTypeAndPlacement", "PjitFunction(load_batch)", "DistributedDataParallel.forward",
])
def test_framework_names_are_not_user_annotations(name):
    assert not is_data_loading_annotation(name)
