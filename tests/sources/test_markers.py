"""The .profile-empty marker: a valid TFRecord events file, written only where it is missing."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.tensorflow_stub import errors as tb_errors
from tensorboard.compat.tensorflow_stub import pywrap_tensorflow as tb_records

from tb_plugin_advisor.sources import markers
from tb_plugin_advisor.sources.discovery import scan_logdir


def read_records(path: Path):
    """Every record of a TFRecord file, read by TensorBoard's own (CRC-checking) reader."""
    reader = tb_records.PyRecordReader_New(str(path))
    records = []
    while True:
        try:
            reader.GetNext()
        except tb_errors.OutOfRangeError:
            return records
        records.append(reader.record())


def test_record_framing_uses_tensorboards_masked_crc32c():
    """The CRC is TensorBoard's own (no hand-written copy); its CRC-32C check value is the standard one."""
    assert tb_records.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    rng = random.Random(7)
    for n in (0, 1, 7, 8, 88, 1000):
        data = bytes(rng.randrange(256) for _ in range(n))
        record = markers.tfrecord(data)
        header = struct.pack("<Q", n)
        assert record == (header + struct.pack("<I", tb_records.masked_crc32c(header)) + data
                          + struct.pack("<I", tb_records.masked_crc32c(data)))


def test_marker_is_one_file_version_event(tmp_path: Path):
    path = Path(markers.write_marker(str(tmp_path), wall_time=1700000000.25, host="myhost"))
    assert path.name == "events.out.tfevents.1700000000.myhost.profile-empty"
    records = read_records(path)
    assert len(records) == 1
    event = event_pb2.Event.FromString(records[0])
    assert event.file_version == "brain.Event:2"
    assert event.wall_time == 1700000000.25
    assert path.stat().st_size == 12 + len(records[0]) + 4


def test_tensorboards_reader_rejects_a_flipped_byte(tmp_path: Path):
    """The reader above really checks our CRCs: the same file with one bit flipped is refused."""
    path = Path(markers.write_marker(str(tmp_path), wall_time=1.0, host="h"))
    data = bytearray(path.read_bytes())
    data[14] ^= 0x01  # inside the Event payload
    path.write_bytes(bytes(data))
    with pytest.raises(tb_errors.DataLossError):
        read_records(path)


def test_marker_host_is_file_name_safe():
    assert re.fullmatch(r"[A-Za-z0-9._-]+", markers.marker_host())


def make_logdir(root: Path) -> Path:
    (root / "loop/plugins/profile/s1").mkdir(parents=True)
    (root / "loop/plugins/profile/s1/h.xplane.pb").write_bytes(b"x")
    (root / "keras/train/plugins/profile/s2").mkdir(parents=True)
    (root / "keras/train/plugins/profile/s2/h.xplane.pb").write_bytes(b"x")
    (root / "keras/train/events.out.tfevents.1.h.v2").write_bytes(b"")
    (root / "plugins/profile/s0").mkdir(parents=True)
    (root / "plugins/profile/s0/h.xplane.pb").write_bytes(b"x")
    return root


def listing(root: Path):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_writer_adds_markers_only_where_missing_and_nothing_else(tmp_path: Path):
    root = make_logdir(tmp_path / "logs")
    before = listing(root)
    writer = markers.MarkerWriter()
    result = writer(scan_logdir(str(root)))
    assert result.failed == []
    written = sorted(str(Path(p).relative_to(root)) for p in result.written)
    assert len(written) == 2
    assert re.fullmatch(r"events\.out\.tfevents\.\d+\.[^/]+\.profile-empty", written[0])
    assert re.fullmatch(r"loop/events\.out\.tfevents\.\d+\.[^/]+\.profile-empty", written[1])
    assert listing(root) == sorted(before + written)
    # Every run directory is now visible; a second pass (and a fresh writer) writes nothing.
    scan = scan_logdir(str(root))
    assert all(r.visible_in_tensorboard for r in scan.run_dirs)
    assert {r.rel for r in scan.run_dirs if r.has_marker} == {"", "loop"}
    assert writer(scan).written == []
    assert markers.MarkerWriter()(scan).written == []


def test_disabled_writer_writes_nothing(tmp_path: Path):
    root = make_logdir(tmp_path / "logs")
    before = listing(root)
    result = markers.MarkerWriter(enabled=False)(scan_logdir(str(root)))
    assert result.written == [] and result.failed == []
    assert listing(root) == before


@contextlib.contextmanager
def read_only(directory: Path):
    """Make `directory` unwritable for this process: chmod, plus the immutable flag when root."""
    os.chmod(directory, 0o555)
    immutable = False
    if os.geteuid() == 0 and shutil.which("chattr"):
        immutable = subprocess.run(["chattr", "+i", str(directory)], capture_output=True).returncode == 0
    probe = directory / ".probe"
    try:
        probe.touch()
    except OSError:
        pass
    else:
        probe.unlink()
        raise AssertionError(f"cannot make {directory} read-only here (root without chattr +i?)")
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        os.chmod(directory, 0o755)


def test_read_only_directory_is_logged_once_and_the_rest_continues(tmp_path: Path, caplog):
    root = make_logdir(tmp_path / "logs")
    writer = markers.MarkerWriter()
    logger = "tb_plugin_advisor.sources.markers"
    with read_only(root / "loop"), caplog.at_level(logging.WARNING, logger=logger):
        first = writer(scan_logdir(str(root)))
        second = writer(scan_logdir(str(root)))
        assert [Path(p).parent for p in first.written] == [root]
        assert len(first.failed) == 1 and first.failed[0].startswith(str(root / "loop"))
        assert second.written == [] and second.failed == []
        warnings = [r for r in caplog.records if "cannot write a .profile-empty marker" in r.getMessage()]
        assert len(warnings) == 1
        assert not any("tfevents" in p.name for p in (root / "loop").iterdir())
