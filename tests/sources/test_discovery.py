"""Discovery: sessions, run names and order like xprof; cache files ignored; legacy listed; remote paths."""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path

import fsspec
import pytest

from tb_plugin_advisor.sources import discovery
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.live import LiveDiscovery


def touch(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """A logdir shaped like real ones: root session, Keras train/ run, deep job dir, legacy, caches."""
    root = tmp_path / "logs"
    touch(root / "plugins/profile/2024_01_01_00_00_00/hostA.xplane.pb", b"a" * 10)
    touch(root / "train/events.out.tfevents.1.host.v2", b"")
    touch(root / "train/plugins/profile/2024_03_01_00_00_00/hostA.xplane.pb", b"a" * 100)
    touch(root / "train/plugins/profile/2024_03_01_00_00_00/hostB.xplane.pb", b"b" * 50)
    touch(root / "train/plugins/profile/2024_03_01_00_00_00/.cached_tools.json", b"[]" * 1000)
    touch(root / "train/plugins/profile/2024_03_01_00_00_00/cache_version.txt", b"2.24")
    touch(root / "train/plugins/profile/2024_03_01_00_00_00/ALL_HOSTS.op_stats_v2.pb", b"c" * 999)
    touch(root / "train/plugins/profile/2024_03_01_00_00_00/jit_f(1).hlo_proto.pb", b"c" * 999)
    touch(root / "train/plugins/profile/2024_03_01_00_00_00/hostA.SSTABLE", b"c" * 999)
    touch(root / "train/plugins/profile/2024_02_01_00_00_00/hostA.xplane.pb", b"a" * 7)
    touch(root / "job/a/b/plugins/profile/2023_12_31_23_59_59/worker-0.xplane.pb", b"w" * 3)
    touch(root / "old/plugins/profile/2019_05_05/10.0.0.1.overview_page.pb", b"o" * 20)
    touch(root / "old/plugins/profile/2019_05_05/10.0.0.1.trace.json.gz", b"t" * 30)
    touch(root / "old/plugins/profile/2019_05_06/.cached_tools.json", b"[]")
    (root / "empty/plugins/profile/2020_01_01").mkdir(parents=True)
    touch(root / "stray/model.xplane.pb", b"s" * 4)
    return root


def test_run_names_and_order_match_xprof(logdir: Path):
    scan = scan_logdir(str(logdir))
    # xprof: sorted(run names, reverse=True); session names are timestamps, so newest first per dir.
    assert [s.run for s in scan.sessions] == [
        "train/2024_03_01_00_00_00",
        "train/2024_02_01_00_00_00",
        "old/2019_05_06",
        "old/2019_05_05",
        "job/a/b/2023_12_31_23_59_59",
        "empty/2020_01_01",
        "2024_01_01_00_00_00",
    ]


def test_hosts_sizes_and_cache_files_ignored(logdir: Path):
    scan = scan_logdir(str(logdir))
    session = scan.run("train/2024_03_01_00_00_00")
    assert session.format == "xplane"
    assert session.host_names == ["hostA", "hostB"]
    assert session.size_bytes == 150  # xprof's caches are not counted
    assert set(session.files) == {"hostA.xplane.pb", "hostB.xplane.pb"}
    expected = logdir / "train/plugins/profile/2024_03_01_00_00_00/hostB.xplane.pb"
    assert session.host("hostB").path == str(expected)
    assert session.run_dir == str(logdir / "train") and session.run_dir_rel == "train"
    root_session = scan.run("2024_01_01_00_00_00")
    assert root_session.run_dir == str(logdir) and root_session.run_dir_rel == ""


def test_legacy_and_unknown_sessions_are_listed_not_hidden(logdir: Path):
    scan = scan_logdir(str(logdir))
    legacy = scan.run("old/2019_05_05")
    assert legacy.format == "legacy"
    assert legacy.host_names == ["10.0.0.1"]
    assert legacy.size_bytes == 50
    only_cache = scan.run("old/2019_05_06")
    assert only_cache.format == "unknown" and only_cache.hosts == () and only_cache.files == ()
    assert scan.run("empty/2020_01_01").format == "unknown"
    assert [s.to_json() for s in scan.sessions if s.run == "old/2019_05_05"] == [
        {"run": "old/2019_05_05", "hosts": ["10.0.0.1"], "format": "legacy", "size_bytes": 50,
         "framework": "tensorflow"}
    ]


def test_run_dirs_know_whether_tensorboard_lists_them(logdir: Path):
    scan = scan_logdir(str(logdir))
    by_rel = {r.rel: r for r in scan.run_dirs}
    assert set(by_rel) == {"", "train", "job/a/b", "old", "empty"}
    assert by_rel["train"].visible_in_tensorboard and not by_rel["train"].has_marker
    assert not by_rel[""].visible_in_tensorboard
    assert by_rel["old"].runs == ("old/2019_05_06", "old/2019_05_05")
    assert scan.run_dir_of(scan.run("job/a/b/2023_12_31_23_59_59")).path == str(logdir / "job/a/b")


def test_loose_xplane_files_are_reported_separately(logdir: Path):
    scan = scan_logdir(str(logdir))
    assert [(s.run, s.layout, s.host_names) for s in scan.loose] == [("stray", "loose", ["model"])]
    assert scan.run("stray") is None  # never served as a run


def test_rewritten_file_changes_its_cache_key(logdir: Path):
    path = logdir / "plugins/profile/2024_01_01_00_00_00/hostA.xplane.pb"
    before = scan_logdir(str(logdir)).run("2024_01_01_00_00_00").cache_key
    path.write_bytes(b"b" * 10)  # same size, new content
    os.utime(path, ns=(time.time_ns() + 5_000_000_000, time.time_ns() + 5_000_000_000))
    after = scan_logdir(str(logdir)).run("2024_01_01_00_00_00").cache_key
    assert before != after


def test_odd_directory_names_round_trip(tmp_path: Path):
    names = ["with space", "ünïcödé 日本", "<img src=x onerror=alert(1)>"]
    for name in names:
        touch(tmp_path / name / "plugins/profile/s1/h.xplane.pb")
    runs = {s.run for s in scan_logdir(str(tmp_path)).sessions}
    assert runs == {f"{name}/s1" for name in names}


def test_symlink_loop_terminates(tmp_path: Path):
    touch(tmp_path / "a/plugins/profile/s/h.xplane.pb")
    os.symlink(tmp_path, tmp_path / "a/loop")
    scan = scan_logdir(str(tmp_path))
    assert [s.run for s in scan.sessions] == ["a/s"]


def test_missing_logdir_gives_empty_scan_with_error(tmp_path: Path):
    scan = scan_logdir(str(tmp_path / "nope"))
    assert scan.sessions == () and scan.errors and "nope" in scan.errors[0]


def test_memory_fsspec_logdir_through_tensorboards_file_layer():
    """A non-local path goes through TensorBoard's gfile (fsspec support), the same way gs:// would."""
    fs = fsspec.filesystem("memory")
    base = f"/advisor-test-{uuid.uuid4().hex}"
    fs.pipe(f"{base}/train/events.out.tfevents.1.h.v2", b"")
    fs.pipe(f"{base}/train/plugins/profile/2024_05_05/host1.xplane.pb", b"x" * 42)
    fs.pipe(f"{base}/train/plugins/profile/2024_05_05/ALL_HOSTS.op_stats_v2.pb", b"c" * 5)
    fs.pipe(f"{base}/plugins/profile/2024_05_06/host2.overview_page.pb", b"o" * 8)
    try:
        scan = scan_logdir(f"memory://{base}")
        assert [(s.run, s.format, s.host_names, s.size_bytes) for s in scan.sessions] == [
            ("train/2024_05_05", "xplane", ["host1"], 42),
            ("2024_05_06", "legacy", ["host2"], 8),
        ]
        assert scan.run("train/2024_05_05").host("host1").path == f"memory://{base}/train/plugins/profile/2024_05_05/host1.xplane.pb"
        assert {r.rel: r.visible_in_tensorboard for r in scan.run_dirs} == {"": False, "train": True}
    finally:
        fs.rm(base, recursive=True)


# ---------------------------------------------------------------------------------------------------
# LiveDiscovery


class CountingScan:
    """Wraps the real scan_logdir and counts walks (so tests can see when the logdir is walked)."""

    def __init__(self):
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, logdir: str):
        with self.lock:
            self.calls += 1
        return scan_logdir(logdir)


def test_new_sessions_appear_without_restart(tmp_path: Path):
    touch(tmp_path / "plugins/profile/s1/h.xplane.pb")
    live = LiveDiscovery(str(tmp_path), interval_s=0.2)
    live.start()
    try:
        assert live.wait_ready(10)
        assert [s.run for s in live.scan.sessions] == ["s1"]
        touch(tmp_path / "later/plugins/profile/s2/h.xplane.pb")
        deadline = time.monotonic() + 10
        while "later/s2" not in {s.run for s in live.scan.sessions}:
            assert time.monotonic() < deadline, "new session not discovered within 10 s"
            time.sleep(0.05)
    finally:
        live.stop()


def test_unknown_run_triggers_one_rate_limited_rescan(tmp_path: Path):
    touch(tmp_path / "plugins/profile/s1/h.xplane.pb")
    counting = CountingScan()
    live = LiveDiscovery(str(tmp_path), interval_s=0, min_rescan_s=60, scan_fn=counting)
    live.refresh()
    assert counting.calls == 1
    # Known runs and the cached scan never walk.
    for _ in range(50):
        assert live.lookup("s1") is not None
        assert live.scan.sessions
    assert counting.calls == 1
    # Unknown run: within min_rescan_s of the last walk, no walk at all.
    assert live.lookup("../../etc/passwd") is None
    assert counting.calls == 1
    live.min_rescan_s = 0.0
    touch(tmp_path / "plugins/profile/s2/h.xplane.pb")
    assert live.lookup("s2") is not None  # found by the on-demand rescan
    assert counting.calls == 2
    live.min_rescan_s = 60
    for _ in range(20):
        assert live.lookup(f"bogus-{_}") is None
    assert counting.calls == 2


def test_on_scan_hook_runs_after_each_walk(tmp_path: Path):
    touch(tmp_path / "plugins/profile/s1/h.xplane.pb")
    seen = []
    live = LiveDiscovery(str(tmp_path), interval_s=0, on_scan=lambda scan: seen.append(len(scan.sessions)))
    live.refresh()
    live.refresh()
    assert seen == [1, 1]


def test_hook_that_changes_the_logdir_gets_one_more_walk(tmp_path: Path):
    """The plugin's marker writer returns truthy after writing: the scan must already show the marker."""
    touch(tmp_path / "plugins/profile/s1/h.xplane.pb")
    counting = CountingScan()

    def write_marker_once(scan):
        if scan.run_dirs[0].event_files:
            return False
        touch(tmp_path / "events.out.tfevents.1.h.profile-empty")
        return True

    live = LiveDiscovery(str(tmp_path), interval_s=0, on_scan=write_marker_once, scan_fn=counting)
    scan = live.refresh()
    assert counting.calls == 2
    assert scan.run_dirs[0].has_marker and live.scan is scan and live.ready


def test_the_xprof_cache_table_is_what_discovery_ignores():
    assert discovery.is_xprof_cache(".cached_tools.json")
    assert discovery.is_xprof_cache("cache_version.txt")
    assert discovery.is_xprof_cache("ALL_HOSTS.op_stats_v2.pb")
    assert discovery.is_xprof_cache("jit_f(3).hlo_proto.pb")
    assert discovery.is_xprof_cache("host.SSTABLE")
    assert not discovery.is_xprof_cache("host.xplane.pb")
