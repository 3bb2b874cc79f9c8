"""The Kineto reader against synthetic traces whose every value is known."""

from __future__ import annotations

import numpy as np
import pytest
from synth_kineto import BASE_NS, MI300, KinetoTrace, training_trace

from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.readers.kineto.reader import read_kineto, read_kineto_bytes
from tb_plugin_advisor.readers.kineto.tables import worker_from_filename

ERAS = ("2021", "current")


@pytest.mark.parametrize("era", ERAS)
def test_host_plane_threads_and_times(era):
    trace = training_trace(era=era, steps=2)
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json", host="w0")
    assert profile.framework == "pytorch"
    host = profile.host_plane
    assert host is not None and host.name == "/host:CPU"
    thread = next(line for line in host.lines if line.name.startswith("thread 1 (python)"))
    names = thread.names()
    assert names[0] == "ProfilerStep#1"
    first = int(thread.start_ns[0])
    assert first == BASE_NS + 1_000_000_000  # exact: ns in, ns out (µs integers in 2021 also exact here)
    assert int(thread.duration_ns[0]) == 10_000_000 - 1_000
    assert "aten::conv2d" in names and "cudaLaunchKernel" in names
    memory = next(line for line in host.lines if line.name.startswith("[memory]"))
    assert len(memory) == 2
    assert memory.stat_value("total_allocated", 0) == 10 * 1024**2


def test_time_range_starts_at_the_first_event_of_any_line():
    """first_start_ns (what evidence links measure from) is time_range_ns's start: the earliest event
    of every host and device line, here the first profiler step at BASE_NS + 1 s."""
    profile = read_kineto_bytes(training_trace(steps=2).to_bytes(), source="t.json")
    start, end = profile.time_range_ns()
    every_start = [int(line.start_ns.min()) for plane in profile.planes for line in plane.lines if len(line)]
    assert profile.first_start_ns() == start == min(every_start) == BASE_NS + 1_000_000_000
    assert end > start


@pytest.mark.parametrize("era", ERAS)
def test_device_tables_and_properties(era):
    profile = read_kineto_bytes(training_trace(era=era, steps=3).to_bytes(), source="t.json")
    assert [d.name for d in profile.devices] == ["/device:GPU:0"]
    gpu = profile.devices[0]
    assert gpu.vendor == "Nvidia" and gpu.model == "NVIDIA A100-SXM4-40GB"
    assert gpu.compute_capability == (8, 0) and gpu.core_count == 108
    assert [line.name for line in gpu.plane.lines] == ["Stream #7"]
    # 2 kernels and one memset per step are kernels; one H2D copy per step
    assert len(gpu.kernels) == 9
    assert gpu.kernels.total_ns == 3 * (2_500_000 + 150_000 + 2_000)
    assert len(gpu.memcpys) == 3
    assert gpu.memcpys.total_ns("H2D") == 3 * 300_000
    assert gpu.memcpys.bytes.tolist() == [4 * 1024**2] * 3
    conv = gpu.kernels.names.index("void implicit_convolve_sgemm<float>(int)")
    first = int(np.flatnonzero(gpu.kernels.name_index == conv)[0])
    details = gpu.kernels.string(gpu.kernels.details, first)
    assert "grid:80,1,1" in details and "block:256,1,1" in details and "regs:32" in details
    assert gpu.kernels.correlation_id[first] > 0


def test_kernels_linked_to_launches_by_correlation():
    profile = read_kineto_bytes(training_trace(steps=2).to_bytes(), source="t.json")
    thread = next(line for line in profile.host_plane.lines if line.name.startswith("thread 1"))
    launches = [i for i, n in enumerate(thread.names()) if n == "cudaLaunchKernel"]
    launch_ids = {thread.stat_value("correlation_id", i) for i in launches}
    kernel_ids = set(profile.devices[0].kernels.correlation_id.tolist())
    assert launch_ids and launch_ids <= kernel_ids
    assert profile.properties["launch_flows"] == 2 * (4 + 2)  # s+f per kernel launch and per copy


def test_input_types_and_dims_kept():
    profile = read_kineto_bytes(training_trace(steps=1).to_bytes(), source="t.json")
    thread = next(line for line in profile.host_plane.lines if line.name.startswith("thread 1"))
    i = thread.names().index("aten::conv2d")
    assert thread.stat_value("input_type", i) == '["float","float","float"]'
    assert thread.stat_value("input_dims", i) == "[[32,3,224,224],[64,3,7,7],[64]]"
    assert isinstance(thread.stat_value("external_id", i), int)


@pytest.mark.parametrize("era", ERAS)
def test_profiler_steps_become_step_markers(era):
    profile = read_kineto_bytes(training_trace(era=era, steps=4).to_bytes(), source="t.json")
    assert [m.step_num for m in profile.step_markers] == [1, 2, 3, 4]
    assert {m.source for m in profile.step_markers} == {"profiler_step"}
    steps = find_steps(profile)
    assert steps.source == "profiler_step" and len(steps.start_ns) == 4


def test_amd_device_and_distributed_info():
    trace = training_trace(steps=1, devices=[MI300], rank=3, world_size=8)
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    gpu = profile.devices[0]
    assert gpu.vendor == "AMD" and gpu.core_count == 304
    assert profile.properties["rank"] == 3 and profile.properties["world_size"] == 8


def test_overlapping_ops_are_clipped_and_counted():
    trace = KinetoTrace(devices=[])
    t = BASE_NS + 5_000_000
    trace.op("aten::a", t, 1_000_000)
    trace.op("aten::b", t + 999_000, 500_000)  # starts inside a, ends 499 µs after it
    trace.op("aten::c", t + 200_000, 100_000)  # nested: untouched
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    line = profile.host_plane.lines[0]
    assert line.names() == ["aten::a", "aten::c", "aten::b"]
    assert line.duration_ns.tolist() == [1_000_000, 100_000, 1_000]
    # (what the clipping affects is the validity matrix's to say, not a warning: analysis/validity/)
    assert not any("overlapped" in w for w in profile.warnings)
    assert line.clipped.tolist() == [2]  # (sorted order: b, the one cut)
    # the model's invariant: every event ends within the event enclosing its start
    ends = (line.start_ns + line.duration_ns).tolist()
    assert ends[1] <= ends[0] and ends[2] <= ends[0]


def test_unknown_categories_are_counted_not_dropped_silently():
    trace = KinetoTrace(devices=[])
    trace.op("aten::mm", BASE_NS + 1_000, 10_000)
    trace.complete("brand_new_category", "x", BASE_NS + 2_000, 1_000)
    trace.complete("brand_new_category", "y", BASE_NS + 3_000, 1_000)
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    assert any("'brand_new_category' ×2" in w for w in profile.warnings)


def test_categories_match_case_insensitively():
    trace = KinetoTrace(devices=[])
    trace.complete("CPU_OP", "aten::add", BASE_NS + 1_000, 1_000)
    trace.complete("Kernel", "k", BASE_NS + 1_000, 1_000, pid=0, tid=7, args={"correlation": 1})
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    assert profile.host_plane.event_count == 1
    assert len(profile.devices[0].kernels) == 1
    assert not profile.warnings


def test_gpu_annotations_are_not_kernels():
    trace = training_trace(steps=1)
    trace.complete("gpu_user_annotation", "ProfilerStep#1", BASE_NS + 1_000_000_000, 9_000_000, pid=0, tid=7)
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    gpu = profile.devices[0]
    assert len(gpu.kernels) == 3
    assert [line.name for line in gpu.plane.lines] == ["Stream #7", "GPU annotations #7"]


def test_gzip_file_and_worker_name(tmp_path):
    path = training_trace(steps=1).write(tmp_path / "host_123.1700000000123.pt.trace.json.gz")
    profile = read_kineto(str(path))
    assert profile.host == "host_123"
    assert profile.size_bytes > path.stat().st_size  # uncompressed size
    assert worker_from_filename("/x/w0.pt.trace.json") == "w0"
    assert worker_from_filename("/x/trace.json.gz") == "trace"


def test_same_pid_named_twice_keeps_first_and_warns():
    trace = KinetoTrace(devices=[])
    trace.metadata("process_name", trace.pid, 0, "other")
    trace.op("aten::mm", BASE_NS + 1_000, 10_000)
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    assert any("named twice" in w for w in profile.warnings)
    assert profile.host_plane.lines[0].display_name.startswith("python / ")


def test_host_python_frames_on_pid_zero_stay_on_the_host():
    """ROCm traces put python_function events on pid 0 / tid 0: the role, not the pid, decides."""
    trace = training_trace(steps=1)
    trace.complete("python_function", "train.py(10): main", BASE_NS + 1_000_000_000, 5_000, pid=0, tid=0)
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    assert len(profile.devices[0].kernels) == 3
    assert "train.py(10): main" in profile.host_plane.event_names


def test_mtia_device_events_get_their_own_device_plane():
    trace = KinetoTrace(devices=[])
    trace.op("aten::mm", BASE_NS, 50_000)
    trace.complete("mtia_ccp_events", "gemm", BASE_NS + 10_000, 20_000, pid=9, tid=1)
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    assert [(d.name, d.kind, len(d.kernels)) for d in profile.devices] == [("/device:MTIA:9", "device", 1)]
    assert profile.gpus == []
