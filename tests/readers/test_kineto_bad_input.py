"""Bad Kineto input: each case is a ProfileReadError naming the file and the problem, never a crash."""

from __future__ import annotations

import gzip
import json
import os

import pytest
from synth_kineto import BASE_NS, KinetoTrace, training_trace

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers import guarded_io
from tb_plugin_advisor.readers.kineto import load as kineto_load
from tb_plugin_advisor.readers.kineto.reader import read_kineto, read_kineto_bytes
from tb_plugin_advisor.views.cli.main import main as cli_main


def _refused(path, *fragments: str) -> str:
    with pytest.raises(ProfileReadError) as caught:
        read_kineto(str(path))
    message = str(caught.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message
    return message


def test_truncated_gzip(tmp_path):
    data = training_trace(steps=2).to_bytes(gzipped=True)
    path = tmp_path / "w.1.pt.trace.json.gz"
    path.write_bytes(data[: len(data) // 2])
    _refused(path, "gzip data is truncated")


def test_corrupt_gzip(tmp_path):
    data = bytearray(training_trace(steps=2).to_bytes(gzipped=True))
    data[20:40] = b"\xff" * 20
    path = tmp_path / "w.1.pt.trace.json.gz"
    path.write_bytes(bytes(data))
    _refused(path, "gzip data is truncated or corrupt")


def test_invalid_json_says_where(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2,, }]}')
    _refused(path, "invalid JSON", "(byte 47)")


def test_truncated_json(tmp_path):
    data = training_trace(steps=2).to_bytes()
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(data[:-100])
    _refused(path, "invalid JSON")


def test_json_without_trace_events(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "events": []}))
    _refused(path, "no 'traceEvents' list")


def test_json_array_is_not_a_kineto_trace(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps([{"ph": "X", "ts": 1, "dur": 1}]))
    _refused(path, "not a PyTorch profiler trace", "Expected `object`")


def test_wrong_type_names_the_event(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "X", "ts": "soon", "dur": 1}]}))
    _refused(path, "traceEvents[0].ts")


@pytest.mark.parametrize("missing", ["ts", "dur"])
def test_complete_event_without_time(tmp_path, missing):
    trace = KinetoTrace(devices=[])
    trace.op("aten::mm", BASE_NS + 1_000, 10_000)
    del trace.events[-1][missing]
    path = trace.write(tmp_path / "w.1.pt.trace.json")
    _refused(path, f"without '{missing}'", "aten::mm", "traceEvents[2]")


def test_negative_duration(tmp_path):
    trace = KinetoTrace(devices=[])
    trace.op("aten::mm", BASE_NS + 1_000, 10_000)
    trace.events[-1]["dur"] = -5
    path = trace.write(tmp_path / "w.1.pt.trace.json")
    _refused(path, "negative duration", "-5")


def test_empty_file(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(b"")
    _refused(path, "empty")


def test_missing_file(tmp_path):
    _refused(tmp_path / "nope.pt.trace.json", "cannot open file")


def test_file_over_the_profile_cap_is_refused_before_reading(tmp_path):
    """A sparse file one byte over the cap both readers share: refused from its size alone, without
    reading (or allocating) it."""
    path = tmp_path / "huge.1.pt.trace.json"
    with open(path, "wb") as handle:
        handle.truncate(guarded_io.current().max_profile_bytes + 1)
    _refused(path, "over the limit of 512 MB", "--max-profile-mb")


def test_decompression_bomb_is_refused_while_inflating(tmp_path, monkeypatch):
    monkeypatch.setattr(guarded_io, "_current", guarded_io.ReadLimits().with_profile_mb(1))
    # 64 MiB of spaces inside valid JSON compresses to ~64 KiB: inflating stops at the 1 MB cap
    payload = b'{"traceEvents": [' + b" " * (64 * 1024**2) + b"]}"
    path = tmp_path / "bomb.1.pt.trace.json.gz"
    path.write_bytes(gzip.compress(payload, compresslevel=9))
    _refused(path, "inflates to more than 1 MB, the profile size limit")


def test_the_cli_cap_applies_to_traces_too(tmp_path, monkeypatch, capsys):
    """`tb-advisor --max-profile-mb` caps a PyTorch trace exactly as it caps an XSpace."""
    monkeypatch.setattr(guarded_io, "_current", guarded_io.current())  # restored after the test
    monkeypatch.delenv(guarded_io.CAP_ENV, raising=False)
    path = training_trace(steps=40).write(tmp_path / "w.1.pt.trace.json")
    assert path.stat().st_size > 100_000
    assert cli_main(["report", str(path), "--format", "json", "--max-profile-mb", "0.05"]) == 2
    err = capsys.readouterr().err
    assert "over the limit of 52428 bytes" in err and str(path) in err
    assert cli_main(["report", str(path), "--format", "json", "--max-profile-mb", "5"]) == 0


def test_a_fifo_named_like_a_trace_is_refused_without_blocking(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    os.mkfifo(path)
    _refused(path, "is a FIFO (named pipe), not a regular file")


def test_concatenated_gzip_members_are_read():
    data = training_trace(steps=1).to_bytes()
    half = len(data) // 2
    joined = gzip.compress(data[:half]) + gzip.compress(data[half:])
    assert len(read_kineto_bytes(joined, source="m.json.gz").step_markers) == 1


def test_duplicated_pids_across_host_and_device_do_not_mix():
    """pid 0 is GPU 0 for kernels and may also be a host process id in the same file."""
    trace = KinetoTrace(pid=0, tid=0, devices=[])
    trace.op("aten::mm", BASE_NS + 1_000, 10_000)
    trace.complete("kernel", "k", BASE_NS + 5_000, 5_000, pid=0, tid=0, args={"correlation": 1})
    profile = read_kineto_bytes(trace.to_bytes(), source="t.json")
    assert profile.host_plane.event_names == ["aten::mm"]
    assert len(profile.devices[0].kernels) == 1


@pytest.mark.parametrize("text, ns", [
    (b"1623143089861", 1623143089861000),
    (b"1712170298123456.789", 1712170298123456789),  # past float64's ns precision at this size
    (b"2204338329788.6494", 2204338329788649),
    (b"-5", -5000),
    (b"0.04", 40),
    (b"1.5e3", 1500000),
    (b'"soon"', None),
    (b"null", None),
])
def test_microseconds_are_read_exactly(text, ns):
    import msgspec

    assert kineto_load.micros_to_ns(msgspec.Raw(text)) == ns


def test_absolute_float_timestamps_keep_their_nanoseconds():
    trace = KinetoTrace(devices=[])
    trace.top.pop("baseTimeNanoseconds")
    trace.raw({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": "TS", "dur": 1.001})
    # Kineto prints the digits itself; a Python float would already have lost them
    data = json.dumps(trace.document()).encode().replace(b'"TS"', b"1712170298123456.789")
    line = read_kineto_bytes(data, source="t.json").host_plane.lines[0]
    assert int(line.start_ns[0]) == 1712170298123456789 and int(line.duration_ns[0]) == 1001
