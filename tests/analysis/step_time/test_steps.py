"""Step detection on synthetic profiles whose steps are known by construction."""

from __future__ import annotations

import numpy as np
import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
MS = 1_000_000


def read(builder: XSpaceBuilder):
    return read_xplane_bytes(builder.to_bytes(), source="synthetic", host="h")


def marked(
    name="train", stats_of=lambda s: {"step_num": s, "_r": 1}, count=6, period=100, length=90, first=3
):
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python3", id=1)
    for i in range(count):
        python.event(name, T0 + i * period * MS, length * MS, stats=stats_of(first + i))
    return b


def test_root_markers_give_steps_numbers_times_and_stats():
    steps = find_steps(read(marked(count=6, period=100, length=90)))
    assert steps.source == "root_marker"
    assert steps.count == 6
    assert steps.numbers == [3, 4, 5, 6, 7, 8]
    assert steps.duration_ns.tolist() == [90 * MS] * 6
    stats = steps.stats_ms()
    assert stats["mean_ms"] == pytest.approx(90.0) and stats["median_ms"] == pytest.approx(90.0)
    assert steps.notes == []
    assert steps.step_lines, "the marker's thread is the step's thread"


def test_traceme_encoded_root_markers_count_too():
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python3", id=1)
    for i in range(5):
        python.event(f"train#step_num={10 + i},_r=1#", T0 + i * 50 * MS, 40 * MS)
    steps = find_steps(read(b))
    assert (steps.source, steps.count, steps.numbers) == ("root_marker", 5, [10, 11, 12, 13, 14])


def test_p90_and_median_of_uneven_steps():
    durations = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python3", id=1)
    start = T0
    for i, d in enumerate(durations):
        python.event("train", start, d * MS, stats={"step_num": 5 + i, "_r": 1})
        start += 200 * MS
    stats = find_steps(read(b)).stats_ms()
    assert stats["median_ms"] == pytest.approx(55.0)
    assert stats["p90_ms"] == pytest.approx(float(np.percentile(durations, 90)))
    assert stats["mean_ms"] == pytest.approx(55.0)


def test_keras3_profiled_batch_markers_when_no_root_markers():
    steps = find_steps(read(marked(name="Profiled batch", stats_of=lambda s: {"step_num": s})))
    assert steps.source == "keras3_marker"
    assert steps.count == 6 and steps.numbers[0] == 3


def test_legacy_trace_context_markers():
    steps = find_steps(
        read(marked(name="TraceContext", stats_of=lambda s: {"graph_type": "train", "step_num": s}))
    )
    assert steps.source == "legacy_marker" and steps.count == 6


def test_root_markers_win_over_keras_markers_and_nested_roots_are_one_step():
    b = marked(name="Profiled batch", stats_of=lambda s: {"step_num": s}, count=4)
    line = b.plane("/host:CPU").line("python_roots", id=2)
    for i in range(4):
        line.event("train", T0 + i * 100 * MS, 80 * MS, stats={"step_num": i, "_r": 1})
        line.event("train", T0 + i * 100 * MS + 10 * MS, 10 * MS, stats={"step_num": i, "_r": 1})  # nested
    steps = find_steps(read(b))
    assert steps.source == "root_marker"
    assert steps.count == 4
    assert steps.duration_ns.tolist() == [80 * MS] * 4


def test_tf_data_function_runs_marked_r1_are_not_steps():
    """TF marks tf.data's FunctionRun with _r=1 (no step_num); Keras' Profiled batch must win."""
    b = marked(name="Profiled batch", stats_of=lambda s: {"step_num": s}, count=5)
    producer = b.plane("/host:CPU").line("tf_data_iterator_resource/7", id=9)
    for i in range(40):
        producer.event("FunctionRun", T0 + i * 13 * MS, 2 * MS, stats={"_r": 1, "id": i})
    steps = find_steps(read(b))
    assert steps.source == "keras3_marker" and steps.count == 5


def test_inferred_from_tf_function_launches():
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python3", id=1)
    for i in range(5):
        python.event("EagerLocalExecute: IteratorGetNext", T0 + i * 100 * MS, 5 * MS)
        python.event("EagerLocalExecute: __inference_train_step_870", T0 + i * 100 * MS + 10 * MS, 80 * MS)
        python.event("EagerLocalExecute: __inference_log_metrics_99", T0 + i * 100 * MS + 92 * MS, 1 * MS)
    steps = find_steps(read(b))
    assert steps.source == "inferred"
    assert "__inference_train_step_870" in steps.method
    assert steps.count == 5
    assert steps.duration_ns[:-1].tolist() == [100 * MS] * 4  # launch to launch
    assert steps.numbers == [None] * 5
    assert any("inferred" in n for n in steps.notes)


def test_the_last_inferred_step_of_a_cpu_only_profile_ends_with_the_host_work_that_follows_it():
    """No successor and no device: the last step runs to the end of the host work starting within 1.5
    periods of it (a PyTorch loop's forward/backward after its DataLoader call), not to its own end."""
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python3", id=1)
    compute = b.plane("/host:CPU").line("tf_Compute", id=2)
    for i in range(5):
        python.event("EagerLocalExecute: __inference_train_step_870", T0 + i * 100 * MS, 20 * MS)
        compute.event("MatMul", T0 + i * 100 * MS + 25 * MS, 60 * MS)  # the step's own host work
    python.event("ProfilerTeardown", T0 + 4 * 100 * MS + 400 * MS, 1 * MS)  # later than 1.5 periods
    steps = find_steps(read(b))
    assert steps.source == "inferred"
    assert steps.duration_ns.tolist() == [100 * MS] * 4 + [85 * MS]


def test_inferred_prefers_the_train_step_over_a_busier_utility_function():
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python", id=1)
    for i in range(4):
        python.event("PjitFunction(train_step)", T0 + i * 100 * MS, 20 * MS)
        python.event("PjitFunction(evaluate_everything)", T0 + i * 100 * MS + 30 * MS, 60 * MS)
    steps = find_steps(read(b))
    assert "PjitFunction(train_step)" in steps.method and steps.count == 4


def test_inferred_from_xla_module_executions_on_a_tpu():
    b = XSpaceBuilder(hostnames=["h"])
    tpu = b.plane("/device:TPU:0")
    modules = tpu.line("XLA Modules", id=2)
    ops = tpu.line("XLA Ops", id=3)
    for i in range(7):
        start = T0 + i * 50 * MS
        modules.event("jit_train_step(1234567)", start, 40 * MS)
        ops.event("%fusion.1 = f32[8]{0} fusion(f32[8]{0} %p), kind=kLoop", start, 40 * MS)
    steps = find_steps(read(b))
    assert steps.source == "inferred" and steps.count == 7
    assert "jit_train_step" in steps.method
    assert steps.duration_ns[:-1].tolist() == [50 * MS] * 6


def test_inferred_from_a_repeating_kernel_sequence():
    b = XSpaceBuilder(hostnames=["h"])
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    sequence = ["embedding_kernel", "gemm_a", "gemm_b", "softmax", "gemm_b", "adam_update"]
    for step in range(8):
        t = T0 + step * 30 * MS
        for j, name in enumerate(sequence):
            stream.kernel(name, t + j * 3 * MS, 2 * MS)
    steps = find_steps(read(b))
    assert steps.source == "inferred"
    assert steps.count == 8
    assert "embedding_kernel" in steps.method
    assert steps.duration_ns[:-1].tolist() == [30 * MS] * 7


def test_no_markers_and_no_pattern_is_source_none_with_a_note():
    b = XSpaceBuilder(hostnames=["h"])
    b.plane("/host:CPU").line("python3", id=1).event("main", T0, 10 * MS)
    steps = find_steps(read(b))
    assert steps.source == "none" and steps.count == 0
    assert steps.stats_ms()["mean_ms"] == 0.0
    assert "No step markers" in steps.notes[0]


def test_warmup_step_in_range_is_noted_and_a_slow_first_step_left_out_of_averages():
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python3", id=1)
    durations = [900, 100, 100, 100, 100, 100]
    start = T0
    for i, d in enumerate(durations):
        python.event("train", start, d * MS, stats={"step_num": i, "_r": 1})
        start += 1000 * MS
    steps = find_steps(read(b))
    assert steps.warmup.tolist() == [True, False, False, False, False, False]
    assert steps.stats_ms()["mean_ms"] == pytest.approx(100.0)
    text = " ".join(steps.notes)
    assert "step 0" in text and "warm-up" in text and "left out of the averages" in text


def test_steady_first_step_is_not_warmup():
    steps = find_steps(read(marked(count=6, first=10)))
    assert not steps.warmup.any()
    assert not any("warm" in n for n in steps.notes)


def test_few_steps_note_below_the_threshold_only():
    few = find_steps(read(marked(count=th.FEW_STEPS - 1)))
    enough = find_steps(read(marked(count=th.FEW_STEPS)))
    assert any("Only 4 steps" in n for n in few.notes)
    assert not any("Only" in n for n in enough.notes)
