"""The XSpace reader: synthetic files with known content, bad files, the shared corpus, real TF files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from paths import CORPUS, NO_CORPUS
from synth import XSpaceBuilder

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.model import MEMCPY_DIRECTIONS, StringTable
from tb_plugin_advisor.readers.devices import parse_kernel_details
from tb_plugin_advisor.readers.xplane.plane_metadata import split_traceme_name
from tb_plugin_advisor.readers.xplane.reader import read_xplane, read_xplane_bytes

T0 = 1_700_000_000_000_000_000  # a realistic epoch start, ns: offsets must not overflow


def gpu_profile_bytes() -> bytes:
    b = XSpaceBuilder(hostnames=["worker-0"])
    host = b.plane("/host:CPU")
    python = host.line("python", id=11)
    for step in range(3):
        python.event("train", T0 + step * 100_000_000, 90_000_000, stats={"step_num": step, "_r": 1})
    launches = host.line("tf_Compute", id=12)
    launches.event("cudaLaunchKernel", T0 + 1_000, 5_000, stats={"correlation_id": 7})
    gpu = b.gpu_plane(0, model="NVIDIA A100-SXM4-40GB", compute_capability=(8, 0))
    stream = gpu.line("Stream #7(Kernel,MemcpyH2D)", id=7)
    stream.memcpy("MemcpyH2D", T0 + 2_000, 3_000, bytes=4096, correlation_id=6)
    stream.kernel(
        "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
        T0 + 10_000,
        40_000,
        tf_op="model/dense/MatMul:MatMul",
        correlation_id=7,
        details="regs:128 static_shared:0 dynamic_shared:49152 grid:4,8,1 block:128,1,1 occ_pct:12.5",
    )
    stream.memcpy("MEMCPYDToH", T0 + 60_000, 2_000, bytes=512)
    derived = gpu.line("TensorFlow Ops", id=100)  # xprof's derived view: must not double count
    derived.event("model/dense/MatMul", T0 + 10_000, 40_000)
    return b.to_bytes()


def test_synthetic_gpu_profile_reads_devices_kernels_copies_and_steps():
    profile = read_xplane_bytes(gpu_profile_bytes(), source="synthetic", host="worker-0")
    assert profile.host == "worker-0"
    assert [p.name for p in profile.planes] == ["/host:CPU", "/device:GPU:0"]
    (gpu,) = profile.gpus
    assert (gpu.vendor, gpu.model, gpu.compute_capability, gpu.core_count) == (
        "Nvidia", "NVIDIA A100-SXM4-40GB", (8, 0), 108
    )
    kernels = gpu.kernels
    assert len(kernels) == 1, "the derived 'TensorFlow Ops' line must not be read as kernels"
    assert kernels.names[kernels.name_index[0]] == "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"
    assert int(kernels.start_ns[0]) == T0 + 10_000
    assert int(kernels.duration_ns[0]) == 40_000
    assert kernels.string(kernels.tf_op, 0) == "model/dense/MatMul:MatMul"  # stored as ref_value
    assert int(kernels.correlation_id[0]) == 7
    details = parse_kernel_details(kernels.string(kernels.details, 0))
    assert details.grid == (4, 8, 1) and details.block == (128, 1, 1)
    assert details.registers_per_thread == 128 and details.dynamic_shared_bytes == 49152
    assert details.occupancy_pct == pytest.approx(12.5)
    copies = gpu.memcpys
    assert [MEMCPY_DIRECTIONS[d] for d in copies.direction.tolist()] == ["H2D", "D2H"]
    assert copies.bytes.tolist() == [4096, 512]
    assert copies.total_ns("H2D") == 3_000
    assert [(m.source, m.step_num, m.duration_ns) for m in profile.step_markers] == [
        ("root_marker", 0, 90_000_000),
        ("root_marker", 1, 90_000_000),
        ("root_marker", 2, 90_000_000),
    ]
    launch_line = profile.host_plane.line_named("tf_Compute")
    assert launch_line.stat_value("correlation_id", 0) == 7


def test_traceme_encoded_names_become_stats_and_markers_of_every_kind():
    b = XSpaceBuilder()
    host = b.plane("/host:CPU")
    line = host.line("python")
    line.event("train#step_num=5,_r=1#", T0, 1_000)
    line.event("Profiled batch", T0 + 2_000, 1_000, stats={"step_num": 6})
    line.event("TraceContext", T0 + 4_000, 1_000, stats={"graph_type": "train", "step_num": 7})
    get_next_op = {"tf_op": "IteratorGetNext:IteratorGetNext"}
    line.event("IteratorGetNext", T0 + 6_000, 500, metadata_stats=get_next_op)
    profile = read_xplane_bytes(b.to_bytes())
    assert [(m.source, m.name, m.step_num) for m in profile.step_markers] == [
        ("root_marker", "train", 5),
        ("keras3_marker", "Profiled batch", 6),
        ("legacy_marker", "TraceContext", 7),
    ]
    python = profile.host_plane.lines[0]
    # per-op constants on the metadata are visible per event
    assert python.stat_value("tf_op", 3) == "IteratorGetNext:IteratorGetNext"
    assert python.stat_value("tf_op", 0) is None
    assert split_traceme_name("a#b=x,c=2.5#") == ("a", {"b": "x", "c": 2.5})
    assert split_traceme_name("void f<int>#1") == ("void f<int>#1", {})


def test_events_are_sorted_and_name_masks_are_per_event():
    b = XSpaceBuilder()
    line = b.plane("/host:CPU").line("t", timestamp_ns=T0)
    line.event("b", T0 + 50, 10)
    line.event("a", T0 + 10, 10)
    line.event("b", T0 + 30, 10)
    read = read_xplane_bytes(b.to_bytes()).host_plane.lines[0]
    assert read.start_ns.tolist() == [T0 + 10, T0 + 30, T0 + 50]
    assert read.names() == ["a", "b", "b"]
    assert read.name_mask(lambda n: n == "b").tolist() == [False, True, True]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty"),
        (gpu_profile_bytes()[:-7], "truncated"),
        (b"\x0a\xff\xff\xff\xff\x0f" + b"x" * 40, "truncated"),
        (b"this is not a profile at all, just text\n", "not an XSpace"),
        (b"\x08\x01", "not an XSpace"),
        (b"\x1f\x8b\x08\x00garbage", "gzip"),
    ],
)
def test_bad_files_raise_one_clear_error_naming_the_file(tmp_path, content, problem):
    path = tmp_path / "worker-0.xplane.pb"
    path.write_bytes(content)
    with pytest.raises(ProfileReadError) as caught:
        read_xplane(path)
    message = str(caught.value)
    assert str(path) in message
    assert problem in message


def test_missing_file_is_a_profile_read_error(tmp_path):
    with pytest.raises(ProfileReadError, match="cannot open"):
        read_xplane(tmp_path / "absent.xplane.pb")


def test_reads_through_tensorboards_file_layer_for_remote_paths():
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    with fs.open("/advisor-test/run/plugins/profile/s1/worker-0.xplane.pb", "wb") as handle:
        handle.write(gpu_profile_bytes())
    profile = read_xplane("memory://advisor-test/run/plugins/profile/s1/worker-0.xplane.pb")
    assert profile.host == "worker-0"
    assert len(profile.gpus[0].kernels) == 1


CORPUS_XPLANES = sorted(CORPUS.glob("**/*.xplane.pb")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS_XPLANES, reason=NO_CORPUS)
@pytest.mark.parametrize("path", CORPUS_XPLANES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_xplane_loads_or_is_refused_clearly(path):
    if "_corrupt" in path.parts:
        with pytest.raises(ProfileReadError) as caught:
            read_xplane(path)
        assert path.name in str(caught.value)
        return
    profile = read_xplane(path)
    assert profile.planes, path
    active = [d for d in profile.devices if d.has_activity]
    assert active, f"{path}: every corpus xplane holds device activity"
    for device in active:
        kernels = device.kernels
        assert np.all(np.diff(kernels.start_ns) >= 0)
        assert np.all(kernels.duration_ns >= 0)


@pytest.mark.skipif(not CORPUS_XPLANES, reason=NO_CORPUS)
def test_corpus_v100_tf_profile_has_expected_devices_and_copies():
    path = CORPUS / "xprof/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb"
    profile = read_xplane(path)
    busy = {d.name: (len(d.kernels), len(d.memcpys)) for d in profile.devices if d.has_activity}
    # counted from the raw file's stream lines (the derived 'TensorFlow Ops' lines excluded)
    assert busy == {"/device:GPU:1": (0, 19), "/device:GPU:4": (665, 94), "/device:GPU:6": (665, 113)}
    gpu4 = next(d for d in profile.devices if d.name == "/device:GPU:4")
    assert gpu4.compute_capability == (7, 0) and gpu4.vendor == "Nvidia"


def test_real_tensorflow_profiles_load_with_their_step_markers(tf_profiles):
    loop = read_xplane(next(Path(tf_profiles.loop_input_bound).glob("**/*.xplane.pb")))
    roots = [m for m in loop.step_markers if m.source == "root_marker"]
    steps = [m for m in roots if m.name == "train"]
    assert [m.step_num for m in steps] == tf_profiles.steps("loop_input_bound")
    # TF also marks each tf.function call (`FunctionRun`) as a root, without a step number
    assert all(m.step_num is None for m in roots if m.name != "train")
    keras = read_xplane(next(Path(tf_profiles.keras_fit).glob("**/*.xplane.pb")))
    batches = [m for m in keras.step_markers if m.source == "keras3_marker"]
    assert len(batches) >= 3
    assert not [m for m in keras.step_markers if m.source == "root_marker" and m.step_num is not None]
    assert keras.host_plane is not None and keras.host_plane.event_count > 100


def test_one_stat_with_values_of_several_kinds_is_decoded_exactly():
    b = XSpaceBuilder()
    line = b.plane("/host:CPU").line("t")
    line.event("a", T0, 10, stats={"x": 5})
    line.event("a", T0 + 20, 10, stats={"x": 0})  # reads like an unset int: must still count
    line.event("a", T0 + 40, 10, stats={"x": "text"})
    line.event("a", T0 + 60, 10, stats={"x": 2.5})
    line.event("a", T0 + 80, 10)
    read = read_xplane_bytes(b.to_bytes()).host_plane.lines[0]
    assert [read.stat_value("x", i) for i in range(5)] == ["5", "0", "text", "2.5", None]
    assert read.stats["x"].kind == "str"
    assert read.stats["x"].present.tolist() == [True, True, True, True, False]


def test_a_stat_on_every_event_is_shared_read_only_not_copied_dense():
    """A GPU stream's correlation ids sit on every kernel: `values` is the data itself (tens of MB per
    line not copied), read-only so that no analysis can change the profile under the others."""
    b = XSpaceBuilder()
    line = b.plane("/host:CPU").line("t")
    for i in range(4):
        line.event("k", T0 + 20 * i, 10, stats={"correlation_id": 100 + i})
    line.event("k", T0 + 80, 10, stats={"correlation_id": 7, "other": 1})
    read = read_xplane_bytes(b.to_bytes()).host_plane.lines[0]
    full, sparse = read.stats["correlation_id"], read.stats["other"]
    assert full.values.tolist() == [100, 101, 102, 103, 7] and full.present.all()
    assert np.shares_memory(full.values, full.data) and not full.values.flags.writeable
    with pytest.raises(ValueError):
        full.values[0] = 1
    assert sparse.values.tolist() == [0, 0, 0, 0, 1] and sparse.present.tolist() == [False] * 4 + [True]


def test_interning_many_strings_at_once_equals_one_by_one():
    one, many = StringTable(["x"]), StringTable(["x"])
    texts = ["a", "x", "b", "a", "", "ü", "b"]
    assert many.intern_all(texts) == [one.intern(t) for t in texts] == [1, 0, 2, 1, 3, 4, 2]
    assert list(many) == list(one) and many.intern("new") == one.intern("new") == 5
    assert many.intern_all(iter(["b", "z"])) == [2, 6]


def test_a_kernel_stream_is_shared_by_the_kernel_table_not_copied():
    """A stream of kernels only (the usual case): the device's kernel table reads the line's own
    columns and its full-coverage stats, and a stat no kernel carries costs no memory per kernel
    (issue 12: these copies were 28 MB of a 111 MB profile). Values are unchanged."""
    b = XSpaceBuilder()
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    for i in range(5):
        stream.event(f"kernel_{i % 2}", T0 + 20 * i, 10,
                     stats={"correlation_id": 100 + i, "tf_op": f"op{i}:MatMul", "kernel_details": "regs:32"})
    partial = b.gpu_plane(1).line("Stream #8(Kernel)", id=8)
    partial.event("k", T0, 10, stats={"correlation_id": 1, "tf_op": "a:MatMul"})
    partial.event("k", T0 + 20, 10)
    profile = read_xplane_bytes(b.to_bytes())
    device, other = profile.devices
    line, table = device.plane.lines[0], device.kernels
    assert table.correlation_id.tolist() == [100, 101, 102, 103, 104]
    assert [table.strings[i] for i in table.tf_op.tolist()] == [f"op{i}:MatMul" for i in range(5)]
    assert table.line_index.tolist() == [0] * 5 and table.hlo_op.tolist() == [-1] * 5
    for shared, column in ((table.correlation_id, line.stats["correlation_id"].data),
                           (table.tf_op, line.stats["tf_op"].data),
                           (table.details, line.stats["kernel_details"].data),
                           (table.start_ns, line.start_ns)):
        assert np.shares_memory(shared, column) and not shared.flags.writeable
    for constant in (table.line_index, table.hlo_op, table.hlo_module):
        assert constant.strides == (0,) and not constant.flags.writeable
    # a stat on some kernels only is copied dense, -1 where absent
    assert other.kernels.correlation_id.tolist() == [1, -1]
    ops = other.kernels.tf_op.tolist()
    assert [other.kernels.strings[i] if i >= 0 else None for i in ops] == ["a:MatMul", None]
