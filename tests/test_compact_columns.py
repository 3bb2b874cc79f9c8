"""A stat on every event of a line keeps no index array (issue 12: memory): `StatColumn` with
indices None. Reading, values and lookups must be the same as with the indices.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.model import StatColumn
from tb_plugin_advisor.readers import event_columns
from tb_plugin_advisor.readers.xplane import read_xplane

T0 = 1_700_000_000_000_000_000


def _stream_profile(tmp_path: Path, durations, every_event: bool = True) -> Path:
    space = XSpaceBuilder()
    gpu = space.gpu_plane(0)
    stream = gpu.line("Stream #7(Kernel)", id=7)
    t = T0
    for k, duration in enumerate(durations):
        stats = {"correlation_id": 1000 + k} if every_event or k % 2 else {}
        stream.event("volta_sgemm_128x64_nn", t, duration, stats=stats)
        t += duration + 1_000
    host = space.plane("/host:CPU")
    host.line("python3", id=1).event("train", T0, t - T0, stats={"_r": 1, "step_num": 1})
    return space.write(tmp_path / "stream.xplane.pb")


def _stream(profile):
    return next(line for plane in profile.planes for line in plane.lines if line.name.startswith("Stream"))


@pytest.mark.parametrize("block", [1, 3, 1 << 14])
def test_a_stat_on_every_event_keeps_no_index_array(tmp_path, monkeypatch, block):
    monkeypatch.setattr(event_columns, "BLOCK", block)  # the stat arrives in many pieces
    line = _stream(read_xplane(str(_stream_profile(tmp_path, [2_000] * 10))))
    column = line.stats["correlation_id"]
    assert column._indices is None and column.on_every_event
    assert column.indices.tolist() == list(range(10))
    assert column.values.tolist() == list(range(1000, 1010))
    assert column.present.all()
    assert column.get(3) == 1003 and column.get(10) is None and column.get(-1) is None
    assert line.stat_value("correlation_id", 9) == 1009


def test_a_stat_on_some_events_keeps_its_indices(tmp_path):
    line = _stream(read_xplane(str(_stream_profile(tmp_path, [2_000] * 10, every_event=False))))
    column = line.stats["correlation_id"]
    assert column._indices is not None and not column.on_every_event
    assert column.indices.tolist() == [1, 3, 5, 7, 9]
    assert column.get(3) == 1003 and column.get(4) is None


def test_stat_column_without_indices_needs_a_value_per_event():
    with pytest.raises(ValueError, match="one value per event"):
        StatColumn("int", None, np.zeros(3, dtype=np.int64), 4)
