"""The plane reader's one-pass field split (wire.split_fields, in Python and in the C walker) finds
exactly the lines and header runs that the field-by-field walk finds, and gives way to it (None) on
anything malformed or over a limit."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from synth import XSpaceBuilder
from wire_build import require_compiled_walker

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.guarded_io import ReadLimits
from tb_plugin_advisor.readers.xplane import wire
from tb_plugin_advisor.readers.xplane.reader import _walk_plane
from tb_plugin_advisor.readers.xplane.wire import ByteSource, Window, split_fields

COMPILED = [False, True]  # the Python loop, the C walker's


def plane_bytes(lines: int = 1) -> bytes:
    space = XSpaceBuilder()
    gpu = space.gpu_plane(0)
    for k in range(lines):
        stream = gpu.line(f"Stream #{k + 7}(Kernel)", id=k + 7)
        for i in range(300 // lines):
            stream.kernel(f"loop_add_fusion_{i}", 1000 * i, 500, tf_op=f"layer_{i}/add:AddV2",
                          correlation_id=i)
    return gpu.proto.SerializeToString()


def both(data: bytes, limits: ReadLimits, compiled: bool = False):
    if compiled:
        require_compiled_walker()
    source = ByteSource.of_memory("p", memoryview(data))
    fast = split_fields(source, 0, len(data), 3, (4, 5), limits.max_lines_per_plane,
                        limits.max_metadata_per_plane, compiled=compiled)
    try:
        parts, lines = _walk_plane(source, 0, len(data), limits)
    except ProfileReadError:
        return fast, None
    return fast, (parts, lines)


@pytest.mark.parametrize("compiled", COMPILED)
@pytest.mark.parametrize("lines", [1, 100])
def test_a_plane_splits_as_the_walk_splits_it(compiled, lines):
    data = plane_bytes(lines)
    fast, walked = both(data, ReadLimits(), compiled)
    assert fast is not None and walked is not None
    if compiled:  # the C loop's own answer (split_fields would fall back to Python where it declines)
        source = ByteSource.of_memory("p", memoryview(data))
        assert wire._split_fields_compiled(source, 0, len(data), 3, (4, 5), 10**6, 10**6) == fast
    lines, runs = fast
    assert lines == walked[1]
    assert [data[a:b] for a, b in runs] == walked[0]


@pytest.mark.parametrize("compiled", COMPILED)
@pytest.mark.parametrize("seed", range(150))
def test_damaged_planes_split_as_walked_or_give_way(seed, compiled, monkeypatch):
    r = random.Random(seed)
    data = bytearray(plane_bytes())
    for _ in range(r.randint(1, 4)):
        data[r.randrange(len(data))] = r.randrange(256)
    data = bytes(data[: r.randint(1, len(data))] if r.random() < 0.3 else data)
    limits = replace(ReadLimits(), max_lines_per_plane=r.choice([0, 1] + [10**6] * 4),
                     max_metadata_per_plane=r.choice([5] + [10**6] * 4))
    monkeypatch.setattr(Window, "SPAN", r.choice([24, 100, 1 << 16]))  # fields across windows
    fast, walked = both(data, limits, compiled)
    if fast is None:
        return  # the reader walks field by field: its answer (or its error) is `walked`
    assert walked is not None
    lines, runs = fast
    assert lines == walked[1] and [data[a:b] for a, b in runs] == walked[0]
