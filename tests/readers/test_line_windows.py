"""A long line read from the file a window at a time (readers/line_windows.py) reads exactly as the
whole line does: every window size, every block size, from memory and from a file; and whatever
is unusual goes back to the whole line (which decides and words the errors)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from fuzz_harness import MUTATIONS, valid_profile
from test_event_columns import SAMPLES, assert_same, hostile_stats_profile
from test_reader_safety import profile_bytes
from wire_build import require_compiled_walker

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.xplane import event_columns, line_windows, schema
from tb_plugin_advisor.readers.xplane import lines as xplane_lines
from tb_plugin_advisor.readers.xplane.reader import read_xplane, read_xplane_bytes
from tb_plugin_advisor.readers.xplane.wire import field_end


@pytest.fixture(autouse=True)
def walker(monkeypatch):
    require_compiled_walker()
    monkeypatch.setattr(event_columns, "COMPILED", True)


def read_both(data: bytes, monkeypatch, window: int, block: int = 1 << 16, tmp_path: Path = None):
    """(windowed read, whole-line read, how many lines the windows decoded)."""
    decoded = []
    real = line_windows.decode_windows

    def counting(*args, **kwargs):
        result = real(*args, **kwargs)
        decoded.append(result is not None)
        return result

    monkeypatch.setattr(xplane_lines, "decode_windows", counting)
    monkeypatch.setattr(event_columns, "BLOCK", block)
    monkeypatch.setattr(line_windows, "WHOLE_BELOW", 0)
    monkeypatch.setattr(line_windows, "WINDOW", window)
    if tmp_path is not None:
        path = tmp_path / "host.xplane.pb"
        path.write_bytes(data)
        windowed = read_xplane(path)
    else:
        windowed = read_xplane_bytes(data)
    monkeypatch.setattr(line_windows, "WHOLE_BELOW", 1 << 62)
    whole = read_xplane(path) if tmp_path is not None else read_xplane_bytes(data)
    return windowed, whole, sum(decoded)


@pytest.mark.parametrize("window", [1, 16, 97, 1000, 1 << 20])
@pytest.mark.parametrize("block", [1, 7, 1 << 16])
def test_windows_of_any_size_read_as_the_whole_line(window, block, monkeypatch):
    data = profile_bytes(lines=3, events=300)
    windowed, whole, decoded = read_both(data, monkeypatch, window, block)
    assert decoded == 4  # the python line and the three streams
    assert_same(windowed, whole)


def test_a_profile_file_read_in_windows_reads_as_the_whole_line(monkeypatch, tmp_path):
    windowed, whole, decoded = read_both(hostile_stats_profile(), monkeypatch, 40, 3, tmp_path)
    assert decoded == 1
    assert_same(windowed, whole)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.parent.name + "/" + p.name)
def test_real_profiles_read_in_windows_as_whole_lines(path, monkeypatch):
    windowed, whole, decoded = read_both(path.read_bytes(), monkeypatch, 4096, 1000)
    assert decoded > 0
    assert_same(windowed, whole)


def test_an_event_longer_than_the_window_widens_it(monkeypatch):
    line = schema.XLine(id=1, name="long", timestamp_ns=5)
    for i in range(5):
        event = line.events.add(metadata_id=1, offset_ps=i * 10, duration_ps=3)
        event.stats.add(metadata_id=1, str_value="x" * (500 * (i + 1)))  # events of 0.5-2.5 KB
    plane = schema.XPlane(id=1, name="/host:CPU")
    plane.lines.append(line)
    plane.event_metadata[1].id, plane.event_metadata[1].name = 1, "op"
    plane.stat_metadata[1].id, plane.stat_metadata[1].name = 1, "text"
    data = schema.XSpace(planes=[plane]).SerializeToString()
    windowed, whole, decoded = read_both(data, monkeypatch, 64)
    assert decoded == 1
    assert_same(windowed, whole)
    assert [windowed.planes[0].lines[0].stat_value("text", i) for i in range(5)] == ["x" * 500 * (i + 1)
                                                                                    for i in range(5)]


def test_fields_after_the_events_are_read_and_interleaved_ones_go_back_to_the_whole_line(monkeypatch):
    line = schema.XLine(id=1, timestamp_ns=5)
    for i in range(20):
        line.events.add(metadata_id=1, offset_ps=i * 10, duration_ps=3)
    events = line.SerializeToString()
    after = schema.XLine(name="tail", display_name="shown").SerializeToString()
    late = schema.XEvent(metadata_id=1, offset_ps=500, duration_ps=1)
    more = schema.XLine(events=[late]).SerializeToString()
    for raw, windows_decode in ((events + after, 1), (events + after + more, 0)):
        plane = schema.XPlane(id=1, name="/host:CPU")
        plane.event_metadata[1].id, plane.event_metadata[1].name = 1, "op"
        data = _with_line_bytes(plane, raw)  # the line's fields in exactly this order
        windowed, whole, decoded = read_both(data, monkeypatch, 32)
        assert decoded == windows_decode
        assert_same(windowed, whole)
        read = windowed.planes[0].lines[0]
        assert read.name == "tail" and len(read) == 20 + (1 - windows_decode)


def _with_line_bytes(plane, raw: bytes) -> bytes:
    """An XSpace holding `plane` with its one line serialized as `raw` (field order as given)."""
    head = schema.XPlane()
    head.CopyFrom(plane)
    del head.lines[:]
    body = head.SerializeToString() + b"\x1a" + schema.encode_varint(len(raw)) + raw  # field 3: lines
    return b"\x0a" + schema.encode_varint(len(body)) + body  # XSpace field 1: planes


def test_a_block_that_changed_between_the_passes_goes_back_to_the_whole_line(monkeypatch):
    """The line is framed, then each block is read again: if a block is not what was framed (the file
    was rewritten in between), the windows give up, what they handed over is dropped, and the line
    is read whole."""
    data = profile_bytes(lines=1, events=200)
    real_fill = event_columns._wire.fill_block
    calls = []

    def changed(buf, *args):
        calls.append(1)
        if len(calls) == 3:
            raise ValueError("the block is not the one frame() found at this position")
        return real_fill(buf, *args)

    monkeypatch.setattr(event_columns._wire, "fill_block", changed)
    windowed, whole, decoded = read_both(data, monkeypatch, 500, 20)
    assert len(calls) >= 3 and decoded < 2  # the stream line went back to the whole line
    assert_same(windowed, whole)


def test_a_line_over_the_event_budget_is_refused_with_the_limit_s_message(monkeypatch):
    data = profile_bytes(lines=1, events=300)
    monkeypatch.setattr(line_windows, "WHOLE_BELOW", 0)
    monkeypatch.setattr(line_windows, "WINDOW", 64)
    with pytest.raises(ProfileReadError) as windowed:
        read_xplane_bytes(data, limits=_limits(max_events=100))
    monkeypatch.setattr(line_windows, "WHOLE_BELOW", 1 << 62)
    with pytest.raises(ProfileReadError) as whole:
        read_xplane_bytes(data, limits=_limits(max_events=100))
    assert str(windowed.value) == str(whole.value) and "100" in str(whole.value)


def _limits(**changes):
    from dataclasses import replace

    from tb_plugin_advisor.readers import guarded_io

    return replace(guarded_io.current(), **changes)


def test_frame_stops_before_an_event_the_window_cuts():
    """`frame(..., partial=True)` on every prefix of a line's events: the blocks cover exactly the
    events that are whole, and the stop is where the cut one starts; without `partial` a cut event
    is unusual (None)."""
    line = schema.XLine()
    for i in range(6):
        event = line.events.add(metadata_id=i + 1, offset_ps=i * 1000, duration_ps=7)
        event.stats.add(metadata_id=1, int64_value=i * 300)
    raw = line.SerializeToString()
    ends = [0]
    while ends[-1] < len(raw):  # where each event field ends
        ends.append(field_end(memoryview(raw), ends[-1], len(raw), "line"))
    ends = ends[1:]
    for cut in range(1, len(raw) + 1):
        framed = event_columns._wire.frame(raw[:cut], 0, 4, 100, True)
        whole = [e for e in ends if e <= cut]
        assert framed is not None, cut
        events = int(np.frombuffer(framed[1], dtype=np.int64).sum())
        assert events == len(whole) and framed[3] == (whole[-1] if whole else 0), cut
        if cut not in ends:
            assert event_columns._wire.frame(raw[:cut], 0, 4, 100) is None, cut


def test_a_stat_the_walker_declines_inside_a_long_line_goes_back_to_the_whole_line(monkeypatch):
    """The windows are framed shallowly (each stat skipped by its length), so a stat the walker
    cannot decode exactly (here an unknown field 16, which the runtime keeps as unknown) is found by
    fill_block: the windows give up and the line is read whole, with the same result."""
    v = schema.encode_varint

    def event(i: int, stat_extra: bytes = b"") -> bytes:
        stat = b"\x08" + v(1) + b"\x20" + v(i * 3) + stat_extra  # metadata_id, int64_value
        body = b"\x08" + v(1) + b"\x10" + v(i * 1000) + b"\x18" + v(7) + b"\x22" + v(len(stat)) + stat
        return b"\x22" + v(len(body)) + body  # XLine field 4: events

    unknown_field = b"\x80\x01" + v(5)  # field 16, varint
    raw = b"".join(event(i, unknown_field if i == 37 else b"") for i in range(60))
    assert event_columns._wire.frame(raw, 0, 8, 100, False, True) is not None  # shallow: passes
    assert event_columns._wire.frame(raw, 0, 8, 100) is None  # checked inside: declined
    plane = schema.XPlane(id=1, name="/host:CPU")
    plane.event_metadata[1].id, plane.event_metadata[1].name = 1, "op"
    plane.stat_metadata[1].id, plane.stat_metadata[1].name = 1, "step_num"
    windowed, whole, decoded = read_both(_with_line_bytes(plane, raw), monkeypatch, 64, 8)
    assert decoded == 0
    assert_same(windowed, whole)
    line = windowed.planes[0].lines[0]
    assert len(line) == 60 and line.stat_value("step_num", 59) == 59 * 3


@pytest.mark.parametrize("seed", range(3))
def test_mutated_profiles_read_the_same_in_windows(seed, monkeypatch):
    """Damaged profiles: the windowed read and the whole-line read agree (both the same profile, or
    both the same error)."""
    rng = random.Random(seed)
    for _ in range(40):
        data = valid_profile(rng)
        for name in rng.sample(sorted(MUTATIONS), rng.choice([1, 2])):
            data = MUTATIONS[name](data, rng)
        outcomes = []
        for whole_below in (0, 1 << 62):
            monkeypatch.setattr(line_windows, "WHOLE_BELOW", whole_below)
            monkeypatch.setattr(line_windows, "WINDOW", rng.choice([8, 64, 4096]))
            try:
                outcomes.append(read_xplane_bytes(data))
            except Exception as exc:  # the whole-line error is the reference
                outcomes.append(f"{type(exc).__name__}: {exc}")
        windowed, whole = outcomes
        if isinstance(windowed, str) or isinstance(whole, str):
            assert windowed == whole
        else:
            assert_same(windowed, whole)
