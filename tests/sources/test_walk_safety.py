"""Discovery against hostile logdirs: special files, symlinks out and in loops, huge trees, late files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.sources import markers
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.doctor import diagnose as doctor
from tb_plugin_advisor.sources.live import LiveDiscovery
from tb_plugin_advisor.sources.session import RunDir, Scan
from tb_plugin_advisor.sources.walk import Budget


def touch(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_a_fifo_named_like_a_profile_is_skipped_and_reported(tmp_path):
    session = tmp_path / "plugins/profile/s1"
    touch(session / "good.xplane.pb")
    os.mkfifo(session / "pipe.xplane.pb")
    (session / "folder.xplane.pb").mkdir()
    began = time.monotonic()
    scan = scan_logdir(str(tmp_path))
    opened = []

    def recording_read(path, host=None):
        opened.append(path)
        return read_xplane(path, host=host)

    report = doctor.diagnose_scan(scan, readers={"xplane": recording_read})
    assert time.monotonic() - began < 5
    assert not any("pipe" in p for p in opened), "doctor must never open the FIFO"
    assert scan.run("s1").host_names == ["good"], "only the regular file is a host"
    assert any("pipe.xplane.pb is a FIFO" in p for p in scan.problems), scan.problems
    assert any("folder.xplane.pb is a directory named like a profile" in p for p in scan.problems)
    problems = report.to_json()["problems"]
    assert any("FIFO" in p for p in problems) and not report.ok


def test_a_symlink_tree_is_read_as_tensorboard_reads_it(tmp_path):
    """TensorBoard recommends a symlink tree to compose a logdir: run directories and profile files
    linked from elsewhere are listed under the link's name. A link to a directory that holds the
    logdir (here `/`) is reported, not walked."""
    logdir = tmp_path / "logs"
    outside = tmp_path / "elsewhere"
    touch(outside / "plugins/profile/exp/h.xplane.pb")
    touch(logdir / "plugins/profile/s1/h.xplane.pb")
    (logdir / "root").symlink_to("/")
    (logdir / "up").symlink_to(tmp_path)
    (logdir / "exp1").symlink_to(outside)
    (logdir / "plugins/profile/s1/linked.xplane.pb").symlink_to(outside / "plugins/profile/exp/h.xplane.pb")
    began = time.monotonic()
    scan = scan_logdir(str(logdir))
    assert time.monotonic() - began < 5, "a link to / must not make discovery walk the disk"
    assert sorted(s.run for s in scan.sessions) == ["exp1/exp", "s1"]
    assert scan.run("s1").host_names == ["h", "linked"]
    assert sum("which holds the logdir itself: not followed" in p for p in scan.problems) == 2, scan.problems


def test_links_inside_the_logdir_are_followed_once_and_loops_end(tmp_path):
    touch(tmp_path / "real/plugins/profile/s1/h.xplane.pb")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "real/loop").symlink_to(tmp_path)
    scan = scan_logdir(str(tmp_path))
    assert [s.run for s in scan.sessions] == ["real/s1"] or [s.run for s in scan.sessions] == ["alias/s1"]
    assert not scan.problems


def test_the_walk_budget_ends_with_a_clear_warning(tmp_path):
    for i in range(40):
        touch(tmp_path / f"d{i:02d}/plugins/profile/s/h.xplane.pb")
    scan = scan_logdir(str(tmp_path), Budget(max_entries=80))
    (warning,) = scan.warnings
    assert "stopped after 80 entries" in warning and "directories left unread" in warning
    assert 0 < len(scan.sessions) < 40
    assert warning in doctor.diagnose_scan(scan).to_json()["problems"]
    assert len(scan_logdir(str(tmp_path)).sessions) == 40


def test_markers_are_only_written_inside_the_logdir(tmp_path):
    logdir = tmp_path / "logs"
    outside = tmp_path / "outside"
    outside.mkdir()
    logdir.mkdir()
    (logdir / "run").symlink_to(outside)
    with pytest.raises(markers.MarkerRefused, match="outside the logdir"):
        markers.write_marker(str(logdir / "run"), logdir=str(logdir))
    assert list(outside.iterdir()) == []
    scan = Scan(str(logdir), (), (), (RunDir("run", str(logdir / "run"), (), ("run/s",)),))
    (why,) = markers.refused_marker_writes(scan)
    assert why.startswith("run: no .profile-empty marker will be written") and str(outside) in why
    assert markers.MarkerWriter()(scan).failed
    assert list(outside.iterdir()) == []
    assert why in doctor.diagnose_scan(scan).to_json()["problems"]
    inside = logdir / "inside"
    inside.mkdir()
    assert Path(markers.write_marker(str(inside), logdir=str(logdir))).parent == inside


def test_a_session_empty_when_first_seen_is_rescanned_when_its_files_arrive(tmp_path):
    session = tmp_path / "plugins/profile/s1"
    session.mkdir(parents=True)
    live = LiveDiscovery(str(tmp_path), interval_s=0, min_rescan_s=60, session_recheck_s=0)
    live.refresh()
    assert live.lookup("s1").format == "unknown"
    touch(session / "h.xplane.pb", b"abc")
    found = live.lookup("s1")
    assert found.format == "xplane" and found.host_names == ["h"]
    assert live.scan.run("s1") is found
    touch(session / "h.xplane.pb", b"abcdef")
    assert live.lookup("s1").hosts[0].size_bytes == 6, "a rewritten file gets a new cache key"
