"""The C walker (readers/_wire.c) against the numpy decoder on broken input: same profile or same error.

The walker accepts a subset of lines and must decode them exactly as numpy does; whatever it declines
goes to numpy. Mutated profiles probe both halves of that contract, and the C code's bounds checks
(a read past a buffer would crash the test process, not fail an assertion).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from fuzz_harness import MUTATIONS, valid_profile
from synth import XSpaceBuilder
from test_event_columns import assert_same, hostile_stats_profile
from wire_build import require_compiled_walker

from tb_plugin_advisor.readers import event_columns
from tb_plugin_advisor.readers import xspace_schema as schema
from tb_plugin_advisor.readers.xplane import read_xplane_bytes

T0 = 1_700_000_000_000_000_000


@pytest.fixture(autouse=True)
def walker():
    require_compiled_walker()


def outcome(data: bytes, compiled: bool, monkeypatch):
    monkeypatch.setattr(event_columns, "COMPILED", compiled)
    try:
        return read_xplane_bytes(data)
    except Exception as exc:  # the numpy decoder's error is the reference
        return f"{type(exc).__name__}: {exc}"


def assert_same_outcome(data: bytes, monkeypatch):
    with_c, numpy_only = outcome(data, True, monkeypatch), outcome(data, False, monkeypatch)
    if isinstance(numpy_only, str) or isinstance(with_c, str):
        assert with_c == numpy_only
    else:
        assert_same(with_c, numpy_only)


@pytest.mark.parametrize("seed", range(6))
def test_mutated_profiles_read_the_same_with_and_without_the_walker(seed, monkeypatch):
    rng = random.Random(seed)
    bases = [hostile_stats_profile(), valid_profile(rng), valid_profile(rng)]
    for _ in range(60):
        data = rng.choice(bases)
        for name in rng.sample(sorted(MUTATIONS), rng.choice([1, 1, 2])):
            data = MUTATIONS[name](data, rng)
        assert_same_outcome(data, monkeypatch)


def line_bytes(events) -> bytes:
    line = schema.XLine(id=1, name="x", timestamp_ns=5)
    for metadata_id, offset, duration, stats in events:
        event = line.events.add(metadata_id=metadata_id, offset_ps=offset, duration_ps=duration)
        for stat in stats:
            event.stats.add(**stat)
    return line.SerializeToString()


def test_the_walker_decodes_every_value_kind_and_keeps_the_last_value_of_a_stat():
    raw = line_bytes([
        (7, 10, 3, [dict(metadata_id=1, double_value=2.5), dict(metadata_id=2, uint64_value=(1 << 64) - 1),
                    dict(metadata_id=3, int64_value=-5), dict(metadata_id=4, str_value="ünï"),
                    dict(metadata_id=5, bytes_value=b"\x00"), dict(metadata_id=6, ref_value=9)]),
        (8, -1, 0, []),
    ])
    stop, *columns = event_columns._wire.decode_block(raw, raw.index(b"\x22"), 100, 100)
    meta, offset, duration, ends, owner, stat_id, kind, bits, start, end = (
        np.frombuffer(c, dtype=t) for c, t in zip(columns, ["i8"] * 4 + ["i4", "i8", "i1", "u8", "i8", "i8"]))
    assert meta.tolist() == [7, 8] and offset.tolist() == [10, -1] and duration.tolist() == [3, 0]
    assert owner.tolist() == [0] * 6 and stat_id.tolist() == [1, 2, 3, 4, 5, 6]
    assert kind.tolist() == [2, 3, 4, 5, 6, 7]
    assert bits[0].view(np.float64) == 2.5 and bits[1] == (1 << 64) - 1 and bits[2].view(np.int64) == -5
    assert raw[start[3]:end[3]].decode() == "ünï" and bits[5] == 9
    assert ends[-1] == stop  # the header fields follow the events
    # a oneof keeps the value written last
    one = (schema.XStat(metadata_id=1, int64_value=4).SerializeToString()
           + schema.XStat(uint64_value=8).SerializeToString())
    event = b"\x08\x01\x22" + bytes([len(one)]) + one
    raw = b"\x22" + bytes([len(event)]) + event
    _, *columns = event_columns._wire.decode_block(raw, 0, 10, 10)
    assert np.frombuffer(columns[6], dtype="i1").tolist() == [3]
    assert np.frombuffer(columns[7], dtype="u8").tolist() == [8]


@pytest.mark.parametrize("broken", [
    b"\x22\x05\x08\x01",  # an event longer than the line
    b"\x22\x02\x28\x03",  # num_occurrences: numpy and the runtime decide
    b"\x22\x03\x80\x01\x00",  # a two-byte tag
    b"\x22\x0b\x08" + b"\xff" * 9 + b"\x7f",  # a varint over 64 bits
    b"\x22\x03\x22\x01\x0b",  # a stat holding a group (wire type 3)
    b"\x22\x02\x09\x00",  # metadata_id with a fixed64 wire type
])
def test_the_walker_declines_what_it_does_not_expect(broken):
    assert event_columns._wire.decode_block(broken, 0, 10, 10) is None


def test_a_block_ends_at_the_event_limit_or_once_the_stat_limit_is_reached():
    raw = line_bytes([(1, i, 1, [dict(metadata_id=1, int64_value=i)] * 3) for i in range(10)])
    first = raw.index(b"\x22")
    stop, meta, *_ = event_columns._wire.decode_block(raw, first, 4, 100)
    assert len(meta) // 8 == 4
    stop, meta, _, _, _, owner, *_ = event_columns._wire.decode_block(raw, first, 100, 7)
    assert len(meta) // 8 == 3 and len(owner) // 4 == 9  # the event that reached 7 stats ends the block
    again = event_columns._wire.decode_block(raw, stop, 100, 100)
    assert len(again[1]) // 8 == 7


def test_owners_count_from_the_first_event_of_the_line_across_blocks(monkeypatch):
    monkeypatch.setattr(event_columns, "BLOCK", 3)
    b = XSpaceBuilder()
    line = b.plane("/host:CPU").line("python", id=1)
    for i in range(10):
        line.event(f"op{i % 2}", T0 + 100 * i, 10, stats={"i": i, "s": f"text{i}"})
    assert_same_outcome(b.to_bytes(), monkeypatch)
    profile = outcome(b.to_bytes(), True, monkeypatch)
    assert profile.planes[0].lines[0].stat_strings("s") == [f"text{i}" for i in range(10)]
