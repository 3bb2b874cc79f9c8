"""The event decoders (the C walker and numpy) give exactly what the protobuf runtime gives, line by line.

Every test runs twice: with the C walker (readers/_wire.c) in front of the numpy decoder, and with
numpy alone (as on a machine where the package was installed without a compiler).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from paths import ROOT
from synth import XSpaceBuilder
from test_reader_safety import profile_bytes
from wire_build import require_compiled_walker

from tb_plugin_advisor.readers.xplane import event_columns, schema
from tb_plugin_advisor.readers.xplane import lines as xplane_lines
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.readers.xplane.varints import varints

SAMPLES = sorted((ROOT / "tb_plugin_advisor" / "sample_logdir").glob("**/*.xplane.pb"))
CORPUS_FILES = sorted((ROOT.parent / "shared" / "corpus").rglob("*.xplane.pb"))
CORPUS = [p for p in CORPUS_FILES if "_corrupt" not in p.parts and p.stat().st_size < 8 << 20][:12]
T0 = 1_700_000_000_000_000_000


@pytest.fixture(autouse=True, params=["c_walker", "numpy"])
def decoder(request, monkeypatch):
    if request.param == "c_walker":
        require_compiled_walker()
    monkeypatch.setattr(event_columns, "COMPILED", request.param == "c_walker")
    return request.param


def lines_of(profile):
    for plane in profile.planes:
        for line in plane.lines:
            yield plane, line


def assert_same(fast, slow):
    assert [p.event_names for p in fast.planes] == [p.event_names for p in slow.planes]
    assert [p.stats for p in fast.planes] == [p.stats for p in slow.planes]
    pairs = list(zip(lines_of(fast), lines_of(slow)))
    assert len(pairs) == sum(len(p.lines) for p in slow.planes)
    for (fp, fl), (sp, sl) in pairs:
        assert (fl.id, fl.name, fl.display_name) == (sl.id, sl.name, sl.display_name)
        for column in ("start_ns", "duration_ns", "metadata_index"):
            assert np.array_equal(getattr(fl, column), getattr(sl, column)), (fl.name, column)
        assert sorted(fl.stats) == sorted(sl.stats), fl.name
        for name, col in sl.stats.items():
            other = fl.stats[name]
            assert other.kind == col.kind and np.array_equal(other.indices, col.indices), (fl.name, name)
            if col.kind == "str":
                assert [fp.strings[i] for i in other.data] == [sp.strings[i] for i in col.data]
            else:
                assert np.array_equal(other.data, col.data, equal_nan=True), (fl.name, name)


def both_ways(data: bytes, monkeypatch):
    used = []
    real = event_columns.decode_events

    def recording(line, *callbacks, **options):
        result = real(line, *callbacks, **options)
        used.append(result is not None)
        return result

    monkeypatch.setattr(xplane_lines, "decode_events", recording)
    fast = read_xplane_bytes(data)
    monkeypatch.setattr(xplane_lines, "decode_events", lambda line, *callbacks, **options: None)
    slow = read_xplane_bytes(data)
    return fast, slow, used


def hostile_stats_profile() -> bytes:
    b = XSpaceBuilder()
    plane = b.plane("/host:CPU")
    line = plane.line("python", id=3)
    values = [1, -1, (1 << 64) - 1, -(1 << 63), 2.5, math.nan, "text", "ünïcode", b"\x00raw", 0, 0.0, ""]
    for i, value in enumerate(values):
        line.event(f"op{i % 3}", T0 + 1000 * (len(values) - i), 10, stats={"v": value, "w": i, "v2": value},
                   ref_stats={"r": f"ref{i % 4}"})
    line.event("dup", T0, 5, stats={"step_num": 3})
    return b.to_bytes()


@pytest.mark.parametrize("maker", [lambda: profile_bytes(lines=3, events=300), hostile_stats_profile],
                         ids=["gpu", "hostile_stats"])
def test_synthetic_profiles_decode_identically(maker, monkeypatch):
    fast, slow, used = both_ways(maker(), monkeypatch)
    assert used and all(used), "the numpy decoder must handle these lines"
    assert_same(fast, slow)


@pytest.mark.parametrize("path", SAMPLES + CORPUS, ids=lambda p: p.parent.name + "/" + p.name)
def test_real_profiles_decode_identically(path, monkeypatch):
    try:
        fast, slow, used = both_ways(path.read_bytes(), monkeypatch)
    except Exception as exc:  # a corrupt corpus file: both ways must refuse it the same
        pytest.skip(f"unreadable sample: {exc}")
    assert any(used)
    assert_same(fast, slow)


def test_unusual_lines_fall_back_to_the_runtime():
    line = schema.XLine(id=1, name="x", timestamp_ns=5)
    event = line.events.add(metadata_id=1, num_occurrences=3, duration_ps=7)
    event.stats.add(metadata_id=1, int64_value=2)
    assert event_columns.decode_events(line.SerializeToString()) is None  # num_occurrences: runtime decides
    plain = schema.XLine(id=1, name="x")
    plain.events.add(metadata_id=1, offset_ps=3, duration_ps=7)
    columns, _ = event_columns.decode_events(plain.SerializeToString())
    assert columns.offset_ps.tolist() == [3] and columns.duration_ps.tolist() == [7]
    assert event_columns.decode_events(plain.SerializeToString()[:-1]) is None  # truncated


def test_varints_of_every_length_and_padded_ones_decode_exactly():
    values = [0, 1, 127, 128, 300, 2**21 - 1, 2**28, 2**35 + 5, 2**49 - 1, 2**56 - 1, 2**56, 2**63 - 1, 2**63,
              2**64 - 1]
    encoded = [schema.encode_varint(v) for v in values]
    padded = []  # non-minimal ten-byte encodings, as some writers emit for values patched in place
    for v in values[:12]:
        groups = [(v >> (7 * k)) & 0x7F for k in range(10)]
        padded.append(bytes(g | 0x80 for g in groups[:9]) + bytes([groups[9]]))
    blob = b"".join(encoded + padded)
    starts, pos = [], 0
    for piece in encoded + padded:
        starts.append(pos)
        pos += len(piece)
    buffer = np.frombuffer(blob, dtype=np.uint8)
    at = np.array(starts, dtype=np.int64)
    got, after = varints(buffer, at, np.full(at.size, len(blob), dtype=np.int64))
    assert got.tolist() == values + values[:12]
    assert (after - at).tolist() == [len(p) for p in encoded + padded]
    with pytest.raises(event_columns._Unusual):  # a varint may not run past its message
        varints(buffer, at[-1:], np.array([len(blob) - 1]))


def test_a_line_unusual_only_in_a_late_block_reads_as_the_runtime_reads_it(monkeypatch):
    """Blocks hand their stats over as they finish; a later block that needs the runtime voids them."""
    monkeypatch.setattr(event_columns, "BLOCK", 4)
    space = schema.XSpace()
    plane = space.planes.add(id=1, name="/host:CPU")
    plane.event_metadata[1].id, plane.event_metadata[1].name = 1, "op"
    plane.stat_metadata[1].id, plane.stat_metadata[1].name = 1, "tag"
    plane.stat_metadata[2].id, plane.stat_metadata[2].name = 2, "late text"
    line = plane.lines.add(id=1, name="thread", timestamp_ns=T0)
    for i in range(13):
        event = line.events.add(metadata_id=1, offset_ps=1000 * i, duration_ps=500)
        event.stats.add(metadata_id=1, ref_value=2)
        event.stats.add(metadata_id=2, str_value=f"s{i}")
    line.events.add(metadata_id=1, num_occurrences=2, duration_ps=9)  # in the fourth block
    fast, slow, used = both_ways(space.SerializeToString(), monkeypatch)
    assert used == [False]
    assert_same(fast, slow)
    assert "s12" in fast.planes[0].lines[0].stat_strings("late text")


def test_a_line_over_the_event_budget_is_declined_before_decoding(decoder):
    line = schema.XLine(id=1, name="x")
    for i in range(5):
        line.events.add(metadata_id=1, offset_ps=i, duration_ps=1).stats.add(metadata_id=2, int64_value=i)
    raw = line.SerializeToString()
    assert event_columns.decode_events(raw, max_events=4) is None  # the runtime path then counts and refuses
    exact = 5 if decoder == "c_walker" else 10  # numpy bounds events by the tag bytes (stats' too)
    columns, _ = event_columns.decode_events(raw, max_events=exact)
    assert columns.offset_ps.tolist() == [0, 1, 2, 3, 4]
