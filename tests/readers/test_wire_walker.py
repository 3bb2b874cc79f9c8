"""The C walker (readers/_wire.c) against the numpy decoder on broken input: same profile or same error.

The walker accepts a subset of lines and must decode them exactly as numpy does; whatever it declines
goes to numpy. Mutated profiles probe both halves of that contract, and the C code's bounds checks
(a read past a buffer would crash the test process, not fail an assertion).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from fuzz_harness import MUTATIONS, make_case, run_case, valid_profile
from synth import XSpaceBuilder
from test_event_columns import assert_same, hostile_stats_profile
from wire_build import require_compiled_walker

from tb_plugin_advisor.readers.xplane import event_columns, schema
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

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


def walk(raw: bytes, pos: int, limit: int = 100, stat_limit: int = 100):
    """frame + fill_block of every block: (blocks, event columns, grouped stats per block, stop).

    Each block's stats come as (groups: (stat id, kind, count) rows, owner, bits, text start, end)."""
    framed = event_columns._wire.frame(raw, pos, limit, stat_limit)
    if framed is None:
        return None
    starts, events, stats = (np.frombuffer(x, dtype=np.int64).tolist() for x in framed[:3])
    total = sum(events)
    columns = [np.zeros(total, dtype=np.int64) for _ in range(3)]
    blocks, row = [], 0
    for start, n, m in zip(starts, events, stats):
        groups, *parts = event_columns._wire.fill_block(raw, start, n, m, stat_limit, *columns, row)
        rows = np.frombuffer(groups, dtype=np.int64).reshape(-1, 3).tolist()
        blocks.append([rows] + [np.frombuffer(c, dtype=t) for c, t in zip(parts, ["i4", "u8", "i8", "i8"])])
        row += n
    return list(zip(starts, events, stats)), columns, blocks, framed[3]


def test_the_walker_decodes_every_value_kind_and_keeps_the_last_value_of_a_stat():
    raw = line_bytes([
        (7, 10, 3, [dict(metadata_id=6, ref_value=9), dict(metadata_id=2, uint64_value=(1 << 64) - 1),
                    dict(metadata_id=3, int64_value=-5), dict(metadata_id=4, str_value="ünï"),
                    dict(metadata_id=5, bytes_value=b"\x00"), dict(metadata_id=1, double_value=2.5)]),
        (8, -1, 0, [dict(metadata_id=3, int64_value=6)]),
    ])
    blocks, (meta, offset, duration), [stats], stop = walk(raw, raw.index(b"\x22"))
    groups, owner, bits, start, end = stats
    assert blocks == [(raw.index(b"\x22"), 2, 7)]
    assert meta.tolist() == [7, 8] and offset.tolist() == [10, -1] and duration.tolist() == [3, 0]
    # grouped by (stat id, kind) in ascending id * 8 + kind order, file order within a group
    assert groups == [[1, 2, 1], [2, 3, 1], [3, 4, 2], [4, 5, 1], [5, 6, 1], [6, 7, 1]]
    assert owner.tolist() == [0, 0, 0, 1, 0, 0, 0]
    assert bits[0].view(np.float64) == 2.5 and bits[1] == (1 << 64) - 1
    assert bits[2:4].view(np.int64).tolist() == [-5, 6] and bits[6] == 9
    assert raw[start[4]:end[4]].decode() == "ünï"
    assert stop == len(raw)  # no field follows the events in this line
    # a oneof keeps the value written last
    one = (schema.XStat(metadata_id=1, int64_value=4).SerializeToString()
           + schema.XStat(uint64_value=8).SerializeToString())
    event = b"\x08\x01\x22" + bytes([len(one)]) + one
    _, _, [stats], _ = walk(b"\x22" + bytes([len(event)]) + event, 0)
    assert stats[0] == [[1, 3, 1]] and stats[2].tolist() == [8]


def test_many_distinct_stats_and_huge_or_negative_ids_group_like_numpy(monkeypatch):
    """Over 32 distinct (id, kind) pairs grow the walker's table; ids past 2**60 wrap as numpy's do."""
    ids = list(range(1, 80)) + [2**62 + 3, -5, 2**63 - 1]
    raw = line_bytes([(1, i, 1, [dict(metadata_id=ids[(i * 7 + j) % len(ids)], int64_value=i * 100 + j)
                                 for j in range(5)]) for i in range(60)])
    first = raw.index(b"\x22")
    _, _, [stats], _ = walk(raw, first, stat_limit=10**6)
    groups, owner, bits = stats[:3]
    as_numpy = event_columns._decode(raw)[0].stats[0]
    assert [tuple(g) for g in groups] == [(i, k, b - a) for i, k, a, b in as_numpy.groups]
    for (_, _, a, b) in as_numpy.groups:  # the same stats in each group (numpy keeps lockstep order)
        pairs = sorted(zip(as_numpy.owner[a:b].tolist(), as_numpy.bits[a:b].tolist()))
        assert sorted(zip(owner[a:b].tolist(), bits[a:b].tolist())) == pairs


@pytest.mark.parametrize("broken", [
    b"\x22\x05\x08\x01",  # an event longer than the line
    b"\x22\x02\x28\x03",  # num_occurrences: numpy and the runtime decide
    b"\x22\x03\x80\x01\x00",  # a two-byte tag
    b"\x22\x0b\x08" + b"\xff" * 9 + b"\x7f",  # a varint over 64 bits
    b"\x22\x03\x22\x01\x0b",  # a stat holding a group (wire type 3)
    b"\x22\x02\x09\x00",  # metadata_id with a fixed64 wire type
])
def test_the_walker_declines_what_it_does_not_expect(broken):
    assert event_columns._wire.frame(broken, 0, 10, 10) is None


def test_blocks_end_at_the_event_limit_or_once_the_stat_limit_is_reached():
    raw = line_bytes([(1, i, 1, [dict(metadata_id=1, int64_value=i)] * 3) for i in range(10)])
    first = raw.index(b"\x22")
    blocks, _, _, _ = walk(raw, first, limit=4)
    assert [(n, m) for _, n, m in blocks] == [(4, 12), (4, 12), (2, 6)]
    blocks, (_, offset, _), stats, _ = walk(raw, first, stat_limit=7)
    assert [(n, m) for _, n, m in blocks] == [(3, 9), (3, 9), (3, 9), (1, 3)]  # the event reaching 7 ends it
    assert offset.tolist() == list(range(10))
    assert np.concatenate([s[1] for s in stats]).tolist() == [i for i in range(10) for _ in range(3)]


def test_fill_block_refuses_a_block_frame_did_not_find():
    raw = line_bytes([(1, i, 1, [dict(metadata_id=1, int64_value=i)]) for i in range(4)])
    first = raw.index(b"\x22")
    columns = [np.zeros(4, dtype=np.int64) for _ in range(3)]
    for wrong_stats in (3, 5):  # fewer stat rows than the block holds: refused before writing past them
        with pytest.raises(ValueError):
            event_columns._wire.fill_block(raw, first, 4, wrong_stats, 100, *columns, 0)
    with pytest.raises(ValueError):  # rows past the buffers
        event_columns._wire.fill_block(raw, first, 4, 4, 100, *columns, 1)
    with pytest.raises(TypeError):  # the event buffers must be writable
        event_columns._wire.fill_block(raw, first, 4, 4, 100, bytes(32), *columns[1:], 0)


def test_owners_count_from_the_first_event_of_the_line_across_blocks(monkeypatch):
    monkeypatch.setattr(event_columns, "BLOCK", 3)
    b = XSpaceBuilder()
    line = b.plane("/host:CPU").line("python", id=1)
    for i in range(10):
        line.event(f"op{i % 2}", T0 + 100 * i, 10, stats={"i": i, "s": f"text{i}"})
    assert_same_outcome(b.to_bytes(), monkeypatch)
    profile = outcome(b.to_bytes(), True, monkeypatch)
    assert profile.planes[0].lines[0].stat_strings("s") == [f"text{i}" for i in range(10)]


# Found by `bench/fuzz.py --cases 100000` against the first walker: a field before the events that
# claims more bytes than the line has (the walker was handed a position past the end: ValueError), and
# ref values near 2**64 (lookup.py's presence table overflowed: OverflowError).
FUZZ_SEEDS = [51934, 57329, 61480, 79827, 84030]


@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_fuzz_finds_read_the_same_with_and_without_the_walker(seed, monkeypatch):
    data = make_case(random.Random(seed))
    assert run_case(data) in ("report", "refused")
    assert_same_outcome(data, monkeypatch)


# ---------------------------------------------------------------------------------------------------
# metadata_table: a plane's event metadata names from its bytes (readers/plane_metadata.py)


def _entry(key: bytes, value: bytes) -> bytes:
    """One XPlane event_metadata map entry (field 4) from its raw key and value fields."""
    body = key + value
    return b"\x22" + schema.encode_varint(len(body)) + body


def _key(mid: int) -> bytes:
    return b"\x08" + schema.encode_varint(mid)


def _value(meta) -> bytes:
    raw = meta.SerializeToString()
    return b"\x12" + schema.encode_varint(len(raw)) + raw


def _plane_with(entries: bytes, line_metadata=(1,)) -> bytes:
    """An XSpace of one host plane whose metadata map is `entries` (raw), and one line of events."""
    stat = schema.XPlane(stat_metadata={9: schema.XStatMetadata(id=9, name="flops")}).SerializeToString()
    line = schema.XLine(id=1, name="ops", timestamp_ns=5)
    for k, mid in enumerate(line_metadata):
        line.events.add(metadata_id=mid, offset_ps=1000 * k, duration_ps=500)
    line_raw = line.SerializeToString()
    plane = (b"\x12" + schema.encode_varint(len("/host:CPU")) + b"/host:CPU" + stat + entries
             + b"\x1a" + schema.encode_varint(len(line_raw)) + line_raw)
    return b"\x0a" + schema.encode_varint(len(plane)) + plane


def _meta(name: str, display: str = "", **stats):
    meta = schema.XEventMetadata(name=name, display_name=display)
    for value in stats.values():
        meta.stats.add(metadata_id=9, **value)
    return meta


def test_metadata_names_from_the_walker_equal_the_runtime_s(monkeypatch):
    """Display names, stats (one NaN: counted and dropped), TraceMe-encoded names, unsorted keys."""
    entries = b"".join([
        _entry(_key(5), _value(_meta("MatMul", "model/dense/MatMul"))),
        _entry(_key(2), _value(_meta("train#step_num=3,_r=1#"))),
        _entry(_key(9), _value(_meta("Conv2D", flops=dict(int64_value=12)))),
        _entry(_key(7), _value(_meta("nan op", flops=dict(double_value=float("nan"))))),
        _entry(_key(1), _value(_meta("ünïcode kernel<float>"))),
        _entry(b"", _value(_meta("no key: id 0"))),
        _entry(_key(3), b""),  # no value: an empty metadata
    ])
    data = _plane_with(entries, line_metadata=(5, 2, 9, 7, 1, 0, 3))
    table = event_columns._wire.metadata_table(entries)  # (the map's fields, in file order)
    assert table is not None
    keys, names, displays, special = table
    assert np.frombuffer(keys, dtype=np.int64).tolist() == [5, 2, 9, 7, 1, 0, 3]
    assert names[4] == "ünïcode kernel<float>" and displays[0] == "model/dense/MatMul"
    assert list(special) == [0, 1, 1, 1, 0, 0, 0]
    assert_same_outcome(data, monkeypatch)
    plane = outcome(data, True, monkeypatch).planes[0]
    assert plane.event_names == [
        "no key: id 0", "ünïcode kernel<float>", "train", "", "MatMul", "nan op", "Conv2D"
    ]
    (line,) = plane.lines  # the events use ids 5, 2, 9, 7, 1, 0, 3: the metadata's stats are theirs
    assert line.event(1).stats == {"step_num": 3, "_r": 1} and line.event(2).stats == {"flops": 12}
    assert line.event(3).stats == {}  # the NaN was dropped


@pytest.mark.parametrize("entries", [
    _entry(_key(4), _value(_meta("first"))) + _entry(_key(4), _value(_meta("second"))),  # a key twice
    _entry(_key(4), b"\x12\x02\xff\xfe"),  # a name that is not UTF-8
    _entry(_key(4) + _key(6), _value(_meta("key twice in one entry"))),
    _entry(_key(4), _value(_meta("a")) + _value(_meta("value twice"))),
    _entry(_key(4), b"\x12\x06\x12\x01a\x12\x01b"),  # a name given twice inside the value
    _entry(_key(4), b"\x12\x02\x08\x05" + b"\x2a\x00"),  # an unknown field beside the value
    _entry(b"\x09" + b"\x00" * 8, _value(_meta("fixed64 key"))),
])
def test_unusual_metadata_maps_read_as_the_runtime_reads_them(entries, monkeypatch):
    """What the walker declines (None) the runtime reads; what it reads must agree with the runtime."""
    assert_same_outcome(_plane_with(entries, line_metadata=(4,)), monkeypatch)


def test_the_walker_declines_unusual_metadata_maps():
    assert event_columns._wire.metadata_table(b"\x22\x05\x08\x01") is None  # longer than the header
    assert event_columns._wire.metadata_table(b"\x23\x00") is None  # field 4 as a group
    assert event_columns._wire.metadata_table(_entry(_key(4), b"\x12\x02\xff\xfe")) is None  # not UTF-8
    twice = _entry(_key(4), _value(_meta("a")) + _value(_meta("b")))
    assert event_columns._wire.metadata_table(twice) is None
    keys, names, _, _ = event_columns._wire.metadata_table(b"\x08\x07" + _entry(_key(4), _value(_meta("x"))))
    assert np.frombuffer(keys, dtype=np.int64).tolist() == [4] and names == ["x"]
