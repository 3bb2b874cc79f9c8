"""Host synchronisations (event_names.HOST_SYNC) on synthetic profiles whose truth is exact."""

from __future__ import annotations

import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis.classify.event_names import HOST_SYNC, first_match
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.sources.local_cpu import LocalCpu
from tb_plugin_advisor.views.export.render import render_text

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000

# One real name per table entry (CUPTI, roctracer, TF, JAX/PJRT, PyTorch/Kineto spellings).
EXAMPLES = {
    "cuda_sync": ["cudaStreamSynchronize", "cudaDeviceSynchronize", "cuStreamSynchronize",
                  "cudaEventSynchronize", "cudaStreamWaitEvent", "cudaStreamSynchronize_v3020"],
    "hip_sync": ["hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize"],
    "sync_memcpy": ["cudaMemcpy", "hipMemcpy", "cuMemcpyDtoH_v2", "cudaMemcpy_v3020"],
    "tf_recv": ["edge_12_loss/_Recv:_Recv", "_HostRecv"],
    "jax_block": ["block_until_ready", "BlockHostUntilReady", "PjRtStreamExecutorBuffer::BlockHostUntilReady",
                  "device_get"],
    "torch_item": ["aten::item", "aten::_local_scalar_dense"],
}
NOT_SYNC = ["cudaMemcpyAsync", "cuMemcpyHtoDAsync_v2", "cudaLaunchKernel", "hipMemcpyAsync", "aten::add",
            "cudaStreamCreate", "Recv"]


@pytest.mark.parametrize("pattern", HOST_SYNC, ids=lambda p: p.id)
def test_every_entry_matches_its_real_names(pattern):
    for name in EXAMPLES[pattern.id]:
        assert first_match(HOST_SYNC, name) is pattern, name


@pytest.mark.parametrize("name", NOT_SYNC)
def test_async_and_other_calls_are_not_syncs(name):
    assert first_match(HOST_SYNC, name) is None


def gpu_run(sync_name: str, syncs_per_step: int, sync_ms: int, kernel_ms: int) -> dict:
    """10 steps of 100 ms on one GPU. Each step launches one kernel of `kernel_ms` at +1 ms, then the
    host calls `sync_name` `syncs_per_step` times back to back, each `sync_ms` long, from +2 ms on."""
    space = XSpaceBuilder(hostnames=("gpuhost",))
    host = space.plane("/host:CPU")
    python = host.line("python", 1)
    gpu = space.gpu_plane(0)
    stream = gpu.line("Stream #7(Compute)", 7)
    for i in range(10):
        start = T0 + i * 100 * MS
        python.event("train", start, 100 * MS, stats={"step_num": i, "_r": 1})
        python.event("cudaLaunchKernel", start + 1 * MS, MS // 10)
        stream.kernel("volta_sgemm_128x64_nn", start + 1 * MS, kernel_ms * MS)
        for k in range(syncs_per_step):
            python.event(sync_name, start + 2 * MS + k * sync_ms * MS, sync_ms * MS)
    profile = read_xplane_bytes(space.to_bytes(), source="synthetic", host="gpuhost")
    return build_report(RunProfiles(run="sync", profiles=[profile]), local_cpu=LocalCpu("x", None)).to_json()


def test_syncs_that_stall_the_device_are_counted_timed_and_recommended():
    # 3 syncs × 20 ms per step from +2 ms to +62 ms; the kernel runs +1..+11 ms: 51 ms of idle device
    report = gpu_run("cudaStreamSynchronize", 3, 20, 10)
    sync = report["host_sync"]
    assert sync["count_per_step"] == pytest.approx(3.0)
    assert sync["time_ms"] == pytest.approx(60.0, abs=0.01)
    assert sync["device_idle_ms"] == pytest.approx(51.0, abs=0.01)
    assert sync["calls"] == [{"name": "cudaStreamSynchronize", "count": 3.0, "time_ms": 60.0}]
    rec = next(r for r in report["recommendations"] if r["id"] == "host.sync")
    assert rec["severity"] == "high" and "cudaStreamSynchronize ×3" in rec["evidence"]
    assert "Host syncs:" in render_text(report, width=120)


def test_a_sync_that_waits_for_a_running_kernel_does_not_stall_it():
    # one 50 ms sync while a 70 ms kernel runs: the host waits, the device is busy the whole time
    report = gpu_run("aten::item", 1, 50, 70)
    sync = report["host_sync"]
    assert sync["count_per_step"] == pytest.approx(1.0) and sync["time_ms"] == pytest.approx(50.0, abs=0.01)
    assert sync["device_idle_ms"] == pytest.approx(0.0, abs=0.01)
    assert not any(r["id"] == "host.sync" for r in report["recommendations"])


def test_a_run_without_syncs_reports_none():
    report = gpu_run("cudaStreamSynchronize", 0, 20, 10)
    assert report["host_sync"]["count_per_step"] == 0 and report["host_sync"]["calls"] == []
    assert "Host syncs:" not in render_text(report, width=120)
