"""The reader against hostile files: special files, size caps, gzip bombs, rewrites, broken stats."""

from __future__ import annotations

import gzip
import math
import os
import threading
import time

import pytest
from paths import SAMPLE_LOGDIR
from synth import XSpaceBuilder

from tb_plugin_advisor.errors import ProfileChangedError, ProfileReadError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers import guarded_io
from tb_plugin_advisor.readers.guarded_io import MB, ReadLimits
from tb_plugin_advisor.readers.xplane import schema
from tb_plugin_advisor.readers.xplane.reader import read_xplane, read_xplane_bytes
from tb_plugin_advisor.report.run import build_report

T0 = 1_700_000_000_000_000_000


def profile_bytes(lines: int = 3, events: int = 200, stats=None, plane_stats=None) -> bytes:
    b = XSpaceBuilder(hostnames=["worker-0"])
    host = b.plane("/host:CPU")
    python = host.line("python", id=1)
    for step in range(3):
        python.event("train", T0 + step * 1_000_000, 900_000, stats={"step_num": step, "_r": 1})
    gpu = b.gpu_plane(0)
    if plane_stats:
        gpu.set_stats(plane_stats)
    for line in range(lines):
        stream = gpu.line(f"Stream #{line + 7}(Kernel)", id=line + 7)
        for i in range(events):
            stream.kernel(f"kernel_{i % 17}", T0 + i * 1_000, 500, tf_op=f"model/op_{i % 5}:MatMul",
                          correlation_id=i, stats=stats)
    return b.to_bytes()


def test_a_fifo_is_refused_at_once_without_blocking(tmp_path):
    fifo = tmp_path / "host.xplane.pb"
    os.mkfifo(fifo)
    began = time.monotonic()
    with pytest.raises(ProfileReadError, match="FIFO"):
        read_xplane(fifo)
    assert time.monotonic() - began < 5, "opening a FIFO must not wait for a writer"


def test_a_symlink_to_a_device_or_a_directory_is_refused(tmp_path):
    zero = tmp_path / "zero.xplane.pb"
    zero.symlink_to("/dev/zero")
    with pytest.raises(ProfileReadError, match="character device"):
        read_xplane(zero)
    folder = tmp_path / "dir.xplane.pb"
    folder.mkdir()
    with pytest.raises(ProfileReadError, match="directory"):
        read_xplane(folder)


def test_a_file_over_the_size_cap_is_refused_naming_file_and_limit(tmp_path):
    path = tmp_path / "big.xplane.pb"
    path.write_bytes(profile_bytes())
    small = ReadLimits().with_profile_mb(0.01)  # ~10 KB
    with pytest.raises(ProfileReadError) as caught:
        read_xplane(path, limits=small)
    message = str(caught.value)
    assert str(path) in message and "limit of 10485 bytes" in message
    assert "--advisor_max_profile_mb" in message


def test_the_process_wide_cap_is_configurable(tmp_path):
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(profile_bytes())
    before = guarded_io.current()
    try:
        guarded_io.configure(0.01)
        with pytest.raises(ProfileReadError, match="over the limit"):
            read_xplane(path)
        guarded_io.configure(before.max_profile_bytes / MB)
        assert read_xplane(path).gpus
    finally:
        guarded_io._current = before
    with pytest.raises(ValueError):
        guarded_io.configure(0)


def test_a_gzip_bomb_stops_at_the_cap_while_inflating():
    bomb = gzip.compress(b"\0" * (64 * MB))  # ~64 KB of gzip
    assert len(bomb) < 100_000
    with pytest.raises(ProfileReadError, match="inflates to more than 8 MB"):
        read_xplane_bytes(bomb, source="bomb.xplane.pb.gz", limits=ReadLimits().with_profile_mb(8))


def test_a_gzipped_profile_still_reads():
    raw = profile_bytes(lines=1, events=10)
    assert len(read_xplane_bytes(gzip.compress(raw)).gpus[0].kernels) == 10


def test_count_caps_name_the_limit(tmp_path):
    data = profile_bytes(lines=3, events=100)
    with pytest.raises(ProfileReadError, match="more than 250 events"):
        read_xplane_bytes(data, limits=ReadLimits(max_events=250))
    with pytest.raises(ProfileReadError, match="more than 2 lines"):
        read_xplane_bytes(data, limits=ReadLimits(max_lines_per_plane=2))
    with pytest.raises(ProfileReadError, match="more than 1 planes"):
        read_xplane_bytes(data, limits=ReadLimits(max_planes=1))
    with pytest.raises(ProfileReadError, match="more than 10 metadata entries"):
        read_xplane_bytes(data, limits=ReadLimits(max_metadata_per_plane=10))


def test_file_and_memory_reads_agree_and_progress_reaches_the_end(tmp_path):
    data = profile_bytes(lines=4, events=300)
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(data)
    seen = []
    from_file = read_xplane(path, on_progress=lambda done, total: seen.append((done, total)))
    from_memory = read_xplane_bytes(data)
    assert seen and seen[-1] == (len(data), len(data))
    assert all(total == len(data) for _, total in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen), "progress never goes back"
    for a, b in zip(from_file.planes, from_memory.planes):
        assert [len(line) for line in a.lines] == [len(line) for line in b.lines]
        for la, lb in zip(a.lines, b.lines):
            assert (la.start_ns == lb.start_ns).all() and (la.duration_ns == lb.duration_ns).all()


@pytest.mark.parametrize("change", ["truncate", "rewrite"])
def test_a_file_changed_while_read_gives_a_clear_error_and_reads_again_later(tmp_path, change):
    data = profile_bytes(lines=6, events=300)
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(data)
    done = []

    def meddle(position: int, total: int) -> None:
        if not done and position > total // 4:  # between two lines, as a writer would strike
            done.append(position)
            if change == "truncate":
                os.truncate(path, total // 3)
            else:
                time.sleep(0.01)  # a new mtime even on coarse clocks
                path.write_bytes(data[: total // 2] + bytes(total // 2))

    with pytest.raises(ProfileChangedError, match="changed while it was read"):
        read_xplane(path, on_progress=meddle)
    path.write_bytes(data)
    assert len(read_xplane(path).gpus[0].kernels) == 6 * 300


def test_nan_inf_huge_and_wrongly_typed_stats_are_ignored_with_a_counted_warning():
    hostile_plane = {
        "compute_cap_major": "eight",
        "core_count": math.inf,
        "memory_size": math.nan,
        "clock_rate": -5,
    }
    data = profile_bytes(lines=1, events=20, stats={"flops": math.nan, "bytes_accessed": 1e300},
                         plane_stats=hostile_plane)
    profile = read_xplane_bytes(data)
    (gpu,) = profile.gpus
    # the builder wrote sane values first: NaN/inf duplicates are dropped, the sane ones stay
    assert gpu.core_count == 108 and gpu.memory_bytes == 40 * (1 << 30)
    assert gpu.compute_capability is None and gpu.clock_rate_khz is None  # "eight", -5: not numbers we use
    (warning,) = [w for w in profile.warnings if "NaN" in w]
    assert warning.startswith("42 stat value(s)"), warning  # 20 + 20 event stats, inf and NaN on the plane
    report = build_report(RunProfiles("r", [profile])).to_json()
    assert report["verdict"]["summary"]


def test_hostile_memory_and_step_stats_never_raise():
    b = XSpaceBuilder()
    host = b.plane("/host:CPU")
    line = host.line("python", id=1)
    line.event("train", T0, 1000, stats={"step_num": math.nan, "_r": 1})
    line.event("train", T0 + 2000, 1000, stats={"step_num": -3, "_r": 1})
    mem = host.line("allocator", id=2)
    for offset, peak in ((10, -(1 << 40)), (20, math.inf), (30, 4096)):
        stats = {"peak_bytes_in_use": peak, "allocator_name": "GPU_0_bfc"}
        mem.event("MemoryAllocation", T0 + offset, 5, stats=stats)
    profile = read_xplane_bytes(b.to_bytes())
    assert [m.step_num for m in profile.step_markers] == [None, None]
    from tb_plugin_advisor.analysis.deep.memory_peaks import peak_by_allocator

    assert peak_by_allocator(profile) == {"GPU_0_bfc": 4096}
    build_report(RunProfiles("r", [profile])).to_json()


def test_reading_in_threads_while_a_writer_rewrites_never_crashes(tmp_path):
    """No SIGBUS: the old mmap reader died on about half of these reads."""
    data = profile_bytes(lines=8, events=400)
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(data)
    stop = threading.Event()

    def writer() -> None:
        cut = 1
        while not stop.is_set():
            with open(path, "r+b") as handle:
                handle.truncate(cut * len(data) // 7 % len(data))
                handle.seek(0)
                handle.write(data)
            cut += 1

    thread = threading.Thread(target=writer)
    thread.start()
    outcomes = {"ok": 0, "changed": 0, "error": 0}
    try:
        for _ in range(100):
            try:
                read_xplane(path)
                outcomes["ok"] += 1
            except ProfileChangedError:
                outcomes["changed"] += 1
            except ProfileReadError:
                outcomes["error"] += 1
    finally:
        stop.set()
        thread.join()
    assert sum(outcomes.values()) == 100, outcomes


def test_the_cli_cap_option_refuses_a_larger_profile_with_exit_2(capsys):

    from tb_plugin_advisor.views.cli.main import main

    sample = SAMPLE_LOGDIR
    before = guarded_io.current()
    try:
        assert main(["report", str(sample), "--max-profile-mb", "0.001"]) == 2
        assert "over the limit of 1048 bytes" in capsys.readouterr().err
        with pytest.raises(SystemExit) as stopped:
            main(["report", str(sample), "--max-profile-mb", "-1"])
        assert stopped.value.code == 2
    finally:
        guarded_io._current = before


def test_a_dropped_profile_is_freed_at_once_without_the_cyclic_gc():
    import gc
    import weakref

    profile = read_xplane_bytes(profile_bytes(lines=2, events=50))
    build_report(RunProfiles("r", [profile])).to_json()
    refs = [weakref.ref(profile)] + [weakref.ref(p) for p in profile.planes]
    refs += [weakref.ref(line) for p in profile.planes for line in p.lines]
    line = profile.planes[0].lines[0]
    assert line.plane is profile.planes[0]
    del line
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del profile
        alive = [r() for r in refs if r() is not None]
        assert not alive, f"{len(alive)} objects kept alive by reference cycles: {alive[:3]}"
    finally:
        if was_enabled:
            gc.enable()


def test_a_line_of_millions_of_empty_events_is_refused_before_it_is_decoded():
    """Two bytes per event: without the event cap such a file needs ~30x its size in memory."""
    line = b"\x08\x01" + b"\x22\x00" * 300_000  # XLine id=1, then 300,000 empty events
    plane = b"\x1a" + schema.encode_varint(len(line)) + line
    space = b"\x0a" + schema.encode_varint(len(plane)) + plane
    with pytest.raises(ProfileReadError, match="more than 100,000 events"):
        read_xplane_bytes(space, limits=ReadLimits(max_events=100_000))
    assert len(read_xplane_bytes(space).planes[0].lines[0]) == 300_000
