"""Compact columns (issue 12: memory): durations and correlation ids in 32 bits where they fit, and
no index array for a stat on every event. What a report says must not change with either.

The report of every profile at hand (synthetic GPU and PyTorch profiles built here, the bundled
real TensorFlow runs, the benchmark's A100-shaped profile and the shared corpus when present) is
built twice: as read, and with every column left at 64 bits (compaction turned off), and the two
must be equal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from deep_profiles import gpu_training_profile
from paths import NO_CORPUS, ROOT
from synth import XSpaceBuilder
from synth_kineto import training_trace

from tb_plugin_advisor.model import RunProfiles, StatColumn, compact_ints
from tb_plugin_advisor.readers.kineto import lines as kineto_lines
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.readers.xplane import event_columns
from tb_plugin_advisor.readers.xplane import lines as xplane_lines
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.report.run import build_report

SAMPLES = sorted((ROOT / "tb_plugin_advisor" / "sample_logdir").rglob("*.xplane.pb"))
CORPUS = ROOT.parent / "shared" / "corpus"
CORPUS_FILES = sorted(
    p for pattern in ("*.xplane.pb", "*.pt.trace.json*") if CORPUS.is_dir()
    for p in CORPUS.rglob(pattern) if "_corrupt" not in p.parts
)
T0 = 1_700_000_000_000_000_000


def _read(path: Path):
    return read_xplane(str(path)) if path.name.endswith(".xplane.pb") else read_kineto(str(path))


def _report(path: Path) -> str:
    return json.dumps(build_report(RunProfiles("run", [_read(path)])).to_json(), sort_keys=True)


def _bench_profile(tmp_path: Path) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import make_profile
    finally:
        sys.path.remove(str(ROOT / "bench"))
    path = tmp_path / "bench.xplane.pb"
    path.write_bytes(make_profile.build(30, 40))
    return path


def _profiles(tmp_path: Path):
    yield gpu_training_profile().write(tmp_path / "gpu.xplane.pb")
    yield training_trace(steps=4).write(tmp_path / "worker0.pt.trace.json")
    yield _bench_profile(tmp_path)
    yield from SAMPLES


@pytest.fixture
def wide_columns(monkeypatch):
    """Turn compaction off: every duration and correlation id stays int64, as before issue 12."""
    def turn_off():
        monkeypatch.setattr(xplane_lines, "compact_ints", lambda values: values)
        monkeypatch.setattr(kineto_lines, "compact_ints", lambda values: values)
    return turn_off


def test_reports_do_not_change_with_compact_columns(tmp_path, wide_columns):
    paths = list(_profiles(tmp_path))
    compact = {path: _report(path) for path in paths}
    profile = _read(paths[2])  # the A100-shaped profile: its columns are compact indeed
    stream = _stream(profile)
    assert stream.duration_ns.dtype == np.int32
    assert stream.stats["correlation_id"].data.dtype == np.int32
    assert profile.devices[0].kernels.duration_ns.dtype == np.int32
    wide_columns()
    assert _read(paths[2]).devices[0].kernels.duration_ns.dtype == np.int64
    for path in paths:
        assert _report(path) == compact[path], path.name


@pytest.mark.sweep
@pytest.mark.skipif(not CORPUS_FILES, reason=NO_CORPUS)
def test_corpus_reports_do_not_change_with_compact_columns(wide_columns):
    compact = {path: _outcome(path) for path in CORPUS_FILES}
    wide_columns()
    for path in CORPUS_FILES:
        assert _outcome(path) == compact[path], str(path.relative_to(CORPUS))


def _outcome(path: Path) -> str:
    """The report, or the refusal (refused files are covered by the corpus tests; the same one here)."""
    try:
        return _report(path)
    except Exception as error:
        return repr(error)


def test_compact_ints_keeps_values_and_narrows_only_what_fits():
    fits = np.array([0, -(1 << 31), (1 << 31) - 1, 17], dtype=np.int64)
    narrowed = compact_ints(fits)
    assert narrowed.dtype == np.int32 and narrowed.tolist() == fits.tolist()
    for too_big in ((1 << 31), -(1 << 31) - 1, 3_000_000_000):
        wide = np.array([5, too_big], dtype=np.int64)
        assert compact_ints(wide) is wide
    empty = np.zeros(0, dtype=np.int64)
    assert compact_ints(empty) is empty
    floats = np.array([1.5])
    assert compact_ints(floats) is floats


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


def test_a_line_with_an_event_longer_than_int32_keeps_64_bit_durations(tmp_path):
    long_ns = 3_000_000_000  # 3 s: past int32 nanoseconds (2.1 s)
    path = _stream_profile(tmp_path, [2_000, long_ns, 5_000])
    line = _stream(read_xplane(str(path)))
    assert line.duration_ns.dtype == np.int64
    assert line.duration_ns.tolist() == [2_000, long_ns, 5_000]
    kernels = read_xplane(str(path)).devices[0].kernels
    assert kernels.duration_ns.dtype == np.int64
    assert kernels.duration_ns.tolist() == [2_000, long_ns, 5_000]


def test_stat_column_without_indices_needs_a_value_per_event():
    with pytest.raises(ValueError, match="one value per event"):
        StatColumn("int", None, np.zeros(3, dtype=np.int64), 4)


def test_kernel_correlation_ids_stay_integers_when_a_stream_mixes_in_floats(tmp_path):
    space = XSpaceBuilder()
    gpu = space.gpu_plane(0)
    stream = gpu.line("Stream #7(Kernel)", id=7)
    for k, value in enumerate([1000, 1001.0, 1002]):  # a double among the ints: the column is float
        stream.event("volta_sgemm_128x64_nn", T0 + k * 10_000, 2_000, stats={"correlation_id": value})
    profile = read_xplane(str(space.write(tmp_path / "mixed.xplane.pb")))
    assert _stream(profile).stats["correlation_id"].kind == "float"
    ids = profile.devices[0].kernels.correlation_id
    assert ids.dtype.kind == "i" and ids.tolist() == [1000, 1001, 1002]
