"""The plane reader's one-pass field split (wire.split_fields) finds exactly the lines and header runs
that the field-by-field walk finds, and gives way to it (None) on anything malformed or over a limit."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.limits import ReadLimits
from tb_plugin_advisor.readers.wire import ByteSource, split_fields
from tb_plugin_advisor.readers.xplane import _walk_plane


def plane_bytes() -> bytes:
    space = XSpaceBuilder()
    gpu = space.gpu_plane(0)
    stream = gpu.line("Stream #7(Kernel)", id=7)
    for i in range(300):
        stream.kernel(f"loop_add_fusion_{i}", 1000 * i, 500, tf_op=f"layer_{i}/add:AddV2", correlation_id=i)
    return gpu.proto.SerializeToString()


def both(data: bytes, limits: ReadLimits):
    source = ByteSource.of_memory("p", memoryview(data))
    fast = split_fields(source, 0, len(data), 3, (4, 5), limits.max_lines_per_plane,
                        limits.max_metadata_per_plane)
    try:
        parts, lines = _walk_plane(source, 0, len(data), limits)
    except ProfileReadError:
        return fast, None
    return fast, (parts, lines)


def test_a_plane_splits_as_the_walk_splits_it():
    data = plane_bytes()
    fast, walked = both(data, ReadLimits())
    assert fast is not None and walked is not None
    lines, runs = fast
    assert lines == walked[1]
    assert [data[a:b] for a, b in runs] == walked[0]


@pytest.mark.parametrize("seed", range(150))
def test_damaged_planes_split_as_walked_or_give_way(seed):
    r = random.Random(seed)
    data = bytearray(plane_bytes())
    for _ in range(r.randint(1, 4)):
        data[r.randrange(len(data))] = r.randrange(256)
    data = bytes(data[: r.randint(1, len(data))] if r.random() < 0.3 else data)
    limits = replace(ReadLimits(), max_lines_per_plane=r.choice([0, 1] + [10**6] * 4),
                     max_metadata_per_plane=r.choice([5] + [10**6] * 4))
    fast, walked = both(data, limits)
    if fast is None:
        return  # the reader walks field by field: its answer (or its error) is `walked`
    assert walked is not None
    lines, runs = fast
    assert lines == walked[1] and [data[a:b] for a, b in runs] == walked[0]
