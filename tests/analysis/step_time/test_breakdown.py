"""The per-step breakdown on synthetic profiles where every millisecond is known by construction."""

from __future__ import annotations

import numpy as np
import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis import intervals as iv
from tb_plugin_advisor.analysis.step_time.breakdown import PRIORITY, compute_breakdown
from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
STEPS = 5
PERIOD = 120  # ms between step starts; each step marker is 100 ms long


def analyse(builder: XSpaceBuilder):
    profile = read_xplane_bytes(builder.to_bytes(), source="synthetic", host="h")
    steps = find_steps(profile)
    return compute_breakdown(profile, steps)


def gpu_run(per_step):
    """STEPS steps of 100 ms; `per_step(t, host, python, stream)` adds the events of the step at t."""
    b = XSpaceBuilder(hostnames=["h"])
    host = b.plane("/host:CPU")
    python = host.line("python3", id=1)
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    for s in range(STEPS):
        t = T0 + s * PERIOD * MS
        python.event("train", t, 100 * MS, stats={"step_num": 10 + s, "_r": 1})
        per_step(t, host, python, stream)
    return b


def kernels(stream, start, total_ms, each_ms=10, name="ampere_sgemm_128x64_nn"):
    for k in range(total_ms // each_ms):
        stream.kernel(name, start + k * each_ms * MS, each_ms * MS, tf_op="model/dense/MatMul:MatMul")


def test_40_ms_input_wait_and_60_ms_of_kernels_is_40_percent_input():
    def step(t, host, python, stream):
        python.event("IteratorGetNextOp::DoCompute", t, 40 * MS)  # the host waits before any kernel
        python.event("EagerLocalExecute: __inference_train_step_1", t + 40 * MS, 60 * MS)
        kernels(stream, t + 40 * MS, 60)

    result = analyse(gpu_run(step))
    pct, ms = result.pct(), result.mean_ms()
    assert abs(pct["input"] - 40.0) <= 1.0
    assert abs(pct["device_compute"] - 60.0) <= 1.0
    assert ms["input"] == pytest.approx(40.0, abs=0.01)
    assert ms["idle"] == pytest.approx(0.0, abs=0.01)
    assert result.window_count == STEPS


def test_categories_sum_exactly_to_each_step():
    def step(t, host, python, stream):
        python.event("IteratorGetNextOp::DoCompute", t + 5 * MS, 20 * MS)
        host.line("tf_Compute", id=2).event("cudaLaunchKernel", t + 22 * MS, 6 * MS)
        kernels(stream, t + 30 * MS, 40)
        stream.memcpy("MemcpyD2H", t + 75 * MS, 3 * MS, bytes=4)

    result = analyse(gpu_run(step))
    totals = result.per_window_ns.sum(axis=1)
    assert totals.tolist() == (result.window_end_ns - result.window_start_ns).tolist()
    assert sum(result.pct().values()) == pytest.approx(100.0)


def test_overlapping_categories_are_resolved_by_priority():
    # get-next 0-50 ms overlaps kernels 30-100 ms: the device claims 30-50, input keeps 0-30.
    def step(t, host, python, stream):
        python.event("IteratorGetNextOp::DoCompute", t, 50 * MS)
        kernels(stream, t + 30 * MS, 70)

    ms = analyse(gpu_run(step)).mean_ms()
    assert ms["input"] == pytest.approx(30.0, abs=0.01)
    assert ms["device_compute"] == pytest.approx(70.0, abs=0.01)
    assert PRIORITY.index("device_compute") < PRIORITY.index("input")


def test_copies_launches_collectives_host_ops_python_and_idle():
    def step(t, host, python, stream):
        compute = host.line("tf_Compute", id=2)
        python.event("$train.py:40 train_loop_body", t, 5 * MS)  # python frame → other (5 ms)
        compute.event("model/dense/BiasAdd:BiasAdd", t + 5 * MS, 10 * MS)  # host op, device idle (10)
        compute.event("cudaLaunchKernel", t + 15 * MS, 5 * MS, stats={"correlation_id": 1})  # launch (5)
        stream.memcpy("MemcpyH2D", t + 20 * MS, 10 * MS, bytes=1 << 20)  # input copy (10)
        kernels(stream, t + 30 * MS, 30)  # device compute (30)
        stream.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 60 * MS, 15 * MS)  # comm (15)
        stream.memcpy("MemcpyD2H", t + 75 * MS, 5 * MS, bytes=4)  # memcpy (5)
        # 80-100 ms: nothing (idle 20)

    ms = analyse(gpu_run(step)).mean_ms()
    expected = {
        "other": 5,
        "host_compute": 10,
        "kernel_launch": 5,
        "input": 10,
        "device_compute": 30,
        "communication": 15,
        "memcpy": 5,
        "idle": 20,
    }
    for category, value in expected.items():
        assert ms[category] == pytest.approx(value, abs=0.01), category


def test_older_tf_launch_events_named_after_their_kernel_count_as_launch():
    name = "void tensorflow::functor::FillPhiloxRandomKernelLaunch<float>(float*)"

    def step(t, host, python, stream):
        host.line("tf_gpu_private_4", id=3).event(name, t + 10 * MS, 4 * MS)
        stream.kernel(name, t + 20 * MS, 10 * MS)

    ms = analyse(gpu_run(step)).mean_ms()
    assert ms["kernel_launch"] == pytest.approx(4.0, abs=0.01)
    assert ms["device_compute"] == pytest.approx(10.0, abs=0.01)


def test_api_call_sharing_a_kernels_correlation_id_is_a_launch():
    def step(t, host, python, stream):
        host.line("Host Threads/7", id=3).event(
            "someVendorLaunchCall", t + 10 * MS, 4 * MS, stats={"correlation_id": 77}
        )
        stream.kernel("gemm_fusion_dot.kd", t + 20 * MS, 10 * MS, correlation_id=77)

    assert analyse(gpu_run(step)).mean_ms()["kernel_launch"] == pytest.approx(4.0, abs=0.01)


def test_rocm_blit_kernel_of_a_host_to_device_copy_is_input():
    def step(t, host, python, stream):
        host.line("Host Threads/9", id=3).event(
            "hipMemcpyHtoDAsync", t, 1 * MS, stats={"correlation_id": 500}
        )
        stream.kernel("__amd_rocclr_copyBuffer.kd", t + 2 * MS, 8 * MS, correlation_id=500)
        stream.kernel("__amd_rocclr_copyBuffer.kd", t + 50 * MS, 6 * MS, correlation_id=501)  # D2D

    ms = analyse(gpu_run(step)).mean_ms()
    assert ms["input"] == pytest.approx(9.0, abs=0.01)  # 1 ms API + 8 ms device copy
    assert ms["memcpy"] == pytest.approx(6.0, abs=0.01)


def test_tf_data_producer_threads_are_not_step_time_but_outer_python_frames_are_not_other():
    def step(t, host, python, stream):
        producer = host.line("tf_data_private_threadpool/123", id=4)
        producer.event("adjust_saturation/AdjustSaturation:AdjustSaturation", t, 90 * MS)
        producer.event("Iterator::Root::Prefetch::MapAndBatch", t, 90 * MS)
        kernels(stream, t, 50)

    b = gpu_run(step)
    python = b.plane("/host:CPU").line("python3", id=1)
    python.event("$train.py:1 <module>", T0 - MS, (STEPS * PERIOD + 2) * MS)  # contains every step
    ms = analyse(b).mean_ms()
    assert ms["device_compute"] == pytest.approx(50.0, abs=0.01)
    assert ms["input"] == pytest.approx(0.0, abs=0.01)
    assert ms["host_compute"] == pytest.approx(0.0, abs=0.01)
    assert ms["other"] == pytest.approx(0.0, abs=0.01)
    assert ms["idle"] == pytest.approx(50.0, abs=0.01)


def test_cpu_only_custom_loop_input_wait_vs_host_compute():
    """TF on CPU: next(it) on the python thread, then the step's ops on tf_Compute threads."""
    b = XSpaceBuilder(hostnames=["h"])
    host = b.plane("/host:CPU")
    python = host.line("python3", id=1)
    compute = [host.line(f"tf_Compute/{i}", id=10 + i) for i in range(2)]
    producer = host.line("tf_data_private_threadpool/5", id=20)
    for s in range(STEPS):
        t = T0 + s * PERIOD * MS
        python.event("train", t, 100 * MS, stats={"step_num": s + 3, "_r": 1})
        python.event("EagerLocalExecute: IteratorGetNext", t + 1 * MS, 35 * MS)
        python.event("IteratorGetNextOp::DoCompute", t + 2 * MS, 33 * MS)
        python.event("Iterator::Root::BatchV2::Map", t + 3 * MS, 30 * MS)
        producer.event("decode/DecodePng:DecodePng", t + 3 * MS, 30 * MS)
        python.event("EagerLocalExecute: __inference_train_step_9", t + 36 * MS, 63 * MS)
        compute[0].event("ExecutorState::Process", t + 37 * MS, 60 * MS)
        compute[0].event("model/conv/Conv2D:Conv2D", t + 38 * MS, 30 * MS)
        compute[1].event("model/conv/Conv2DBackpropFilter:Conv2DBackpropFilter", t + 50 * MS, 40 * MS)
    ms = analyse(b).mean_ms()
    assert ms["input"] == pytest.approx(35.0, abs=0.01)
    assert ms["host_compute"] == pytest.approx(63.0, abs=0.01)
    assert ms["device_compute"] == 0.0
    assert ms["idle"] == pytest.approx(2.0, abs=0.01)  # 0-1 ms and 99-100 ms


def test_keras_get_next_on_its_own_thread_counts_as_input():
    b = XSpaceBuilder(hostnames=["h"])
    host = b.plane("/host:CPU")
    python = host.line("python3", id=1)
    getnext = host.line("tf_data_iterator_get_next/77", id=2)
    compute = host.line("tf_Compute/1", id=3)
    for s in range(STEPS):
        t = T0 + s * PERIOD * MS
        python.event("Profiled batch", t, 100 * MS, stats={"step_num": s + 4})
        python.event("EagerLocalExecute: __inference_multi_step_on_iterator_419", t + 1 * MS, 98 * MS)
        getnext.event("IteratorGetNextOp::DoCompute", t + 2 * MS, 25 * MS)
        compute.event("StatefulPartitionedCall/model/dense/MatMul:MatMul", t + 30 * MS, 60 * MS)
    result = analyse(b)
    ms = result.mean_ms()
    assert ms["input"] == pytest.approx(25.0, abs=0.01)
    assert ms["host_compute"] == pytest.approx(73.0, abs=0.01)  # the function call minus the wait
    assert result.input_evidence[0][0] == "IteratorGetNextOp::DoCompute"
    assert result.input_evidence[0][2] == pytest.approx(25.0, abs=0.01)


def test_device_busy_pct_per_device():
    def step(t, host, python, stream):
        kernels(stream, t, 30)

    b = gpu_run(step)
    b.gpu_plane(1)  # a second GPU that never ran anything
    result = analyse(b)
    assert result.device_busy_pct["/device:GPU:0"] == pytest.approx(30.0, abs=0.01)
    assert result.device_busy_pct["/device:GPU:1"] == 0.0


def test_warmup_step_is_left_out_of_the_averages_but_kept_per_step():
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python3", id=1)
    stream = b.gpu_plane(0).line("Stream #1(Kernel)", id=1)
    for s, length in enumerate([1000, 100, 100, 100, 100]):
        t = T0 + s * 2000 * MS
        python.event("train", t, length * MS, stats={"step_num": s, "_r": 1})
        kernels(stream, t, length // 2)
    result = analyse(b)
    assert result.steady.tolist() == [False, True, True, True, True]
    assert result.mean_ms()["device_compute"] == pytest.approx(50.0, abs=0.01)
    assert result.per_window_ms(0)["device_compute"] == pytest.approx(500.0, abs=0.01)


def test_without_steps_the_whole_profile_is_one_window():
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python3", id=1)
    python.event("IteratorGetNextOp::DoCompute", T0, 30 * MS)
    python.event("main", T0 + 30 * MS, 70 * MS)
    result = analyse(b)
    assert result.window_count == 1
    assert result.pct()["input"] == pytest.approx(30.0, abs=0.01)


def test_interval_union_and_window_measure_are_exact():
    starts = np.array([0, 5, 20, 22, 40], dtype=np.int64)
    ends = np.array([10, 8, 30, 25, 41], dtype=np.int64)
    merged = iv.union(starts, ends)
    assert merged[0].tolist() == [0, 20, 40] and merged[1].tolist() == [10, 30, 41]
    covered = iv.covered(merged, np.array([0, 5, 15, 25, 39]), np.array([100, 25, 18, 45, 40]))
    assert covered.tolist() == [21, 10, 0, 6, 0]
    assert iv.outermost(starts, ends).tolist() == [True, False, True, False, True]


def test_interval_primitives_are_exact_over_a_million_events():
    """Union and window measure over 1 M intervals (speed: bench/bench_kernels.py): the union is sorted
    and disjoint, and 1,000 windows tiling [0, 1e10) measure exactly its part inside that range."""
    rng = np.random.default_rng(1)
    n = 1_000_000
    starts = np.sort(rng.integers(0, 10**10, n)).astype(np.int64)
    ends = starts + rng.integers(1, 20_000, n)
    merged = iv.union(starts, ends)
    m_starts, m_ends = merged
    assert (m_starts[1:] > m_ends[:-1]).all() and (m_ends > m_starts).all()
    windows = np.arange(0, 10**10, 10**7, dtype=np.int64)
    covered = iv.covered(merged, windows, windows + 10**7)
    inside = np.clip(m_ends, 0, 10**10) - np.clip(m_starts, 0, 10**10)
    assert int(covered.sum()) == int(inside.sum())
    assert iv.total(merged) <= int((ends - starts).sum())
    assert set(PRIORITY) | {"idle"} == set(CATEGORIES)


def test_time_slices_give_the_same_numbers(monkeypatch):
    """Large profiles are claimed one time slice at a time; slicing must not change any number."""
    import tb_plugin_advisor.analysis.step_time.breakdown as module

    def step(t, host, python, stream):
        python.event("IteratorGetNextOp::DoCompute", t, 30 * MS)
        host.line("tf_Compute", id=2).event("model/x:AddV2", t + 25 * MS, 20 * MS)
        kernels(stream, t + 40 * MS, 50, each_ms=5)
        stream.memcpy("MemcpyD2H", t + 95 * MS, 2 * MS, bytes=4)

    builder = gpu_run(step)
    whole = analyse(builder)
    monkeypatch.setattr(module, "SLICE_EVENTS", 3)  # ~40 slices, many cutting through events
    sliced = analyse(builder)
    profile = read_xplane_bytes(builder.to_bytes(), source="synthetic", host="h")
    steps = find_steps(profile)
    assert len(module.time_slices(steps.start_ns, steps.end_ns, module.event_sources(profile, steps))) > 10
    assert sliced.per_window_ns.tolist() == whole.per_window_ns.tolist()
    assert sliced.device_busy_pct == pytest.approx(whole.device_busy_pct)
