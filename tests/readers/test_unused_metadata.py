"""The XSpace reader drops the event metadata no event uses: every event keeps its name and its
metadata's per-op stats; a plane without events keeps all of its names."""

from __future__ import annotations

import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.readers.xplane.unused_metadata import SLICED_RUNS

T0 = 1_700_000_000_000_000_000


def _profile_bytes() -> bytes:
    """A device plane naming 40 ops of which the events use every third (on two lines, in another order
    than the metadata's), with display names and per-op stats on used and unused entries alike; one
    event refers to a metadata id the file does not define; a metadata plane holds entries only."""
    b = XSpaceBuilder()
    gpu = b.gpu_plane(0)
    for k in range(40):
        gpu.event_id(f"fusion.{k}", display_name=f"shown fusion {k}", metadata_stats={"flops": 1000 + k})
    first, second = gpu.line("Stream #1(Kernel)", id=1), gpu.line("Stream #2(Kernel)", id=2)
    for i, k in enumerate(range(39, -1, -3)):  # 39, 36, …, 0: the lines use the entries in reverse
        line = first if i % 2 else second
        line.event(f"fusion.{k}", T0 + i * 1_000, 500, display_name=f"shown fusion {k}",
                   metadata_stats={"flops": 1000 + k})
    second.proto.events.add(metadata_id=999, offset_ps=20_000_000, duration_ps=1_000)
    metadata = b.plane("/host:metadata")
    for k in range(5):
        metadata.event_id(f"program {k}", metadata_stats={"program_id": 70 + k})
    return b.proto.SerializeToString()


def _names_of_events(plane):
    return [(line.name, line.name_of(i), line.event(i).stats)
            for line in plane.lines for i in range(len(line))]


def test_events_keep_their_names_and_stats_while_unused_entries_go():
    profile = read_xplane_bytes(_profile_bytes())
    gpu = next(p for p in profile.planes if p.name == "/device:GPU:0")
    used = [f"fusion.{k}" for k in range(0, 40, 3)]
    assert gpu.event_names == used + ["<unknown event 999>"]  # in metadata id order, placeholders last
    events = _names_of_events(gpu)
    assert len(events) == 15
    for line, name, stats in events:
        if name.startswith("<unknown"):
            assert (line, stats) == ("Stream #2(Kernel)", {})
            continue
        k = int(name.split(".")[1])
        assert k % 3 == 0
        assert stats == {"flops": 1000 + k}
    assert sorted(name for _, name, _ in events) == sorted(gpu.event_names)


def test_a_plane_without_events_keeps_every_entry():
    profile = read_xplane_bytes(_profile_bytes())
    metadata = next(p for p in profile.planes if p.name == "/host:metadata")
    assert metadata.event_names == [f"program {k}" for k in range(5)]


def test_the_device_view_reads_the_renumbered_names():
    profile = read_xplane_bytes(_profile_bytes())
    (device,) = profile.devices
    kernels = device.kernels
    names = sorted(kernels.names[int(i)] for i in kernels.name_index)
    assert names == sorted([f"fusion.{k}" for k in range(0, 40, 3)] + ["<unknown event 999>"])


def test_metadata_no_plane_defines_is_counted_once_per_id_and_plane():
    b = XSpaceBuilder()
    gpu = b.gpu_plane(0).line("Stream #1(Kernel)", id=1)
    gpu.event("fusion.1", T0, 500)
    for k, metadata_id in enumerate((70, 71, 70)):  # two ids, one of them named twice
        gpu.proto.events.add(metadata_id=metadata_id, offset_ps=(k + 1) * 1_000_000, duration_ps=1_000)
    host = b.plane("/host:CPU").line("python", id=2)
    host.event("step", T0, 500)
    host.proto.events.add(metadata_id=70, offset_ps=2_000_000, duration_ps=1_000)
    profile = read_xplane_bytes(b.proto.SerializeToString())
    notes = [w for w in profile.warnings if "metadata the file does not define" in w]
    assert notes == ["3 event(s) reference metadata the file does not define; shown as <unknown event N>"]
    assert read_xplane_bytes(_profile_bytes()).warnings == [
        "1 event(s) reference metadata the file does not define; shown as <unknown event N>"]


@pytest.mark.parametrize("names, used", [
    (40, range(0, 40, 3)),  # 27 runs of unused entries: each deleted as a slice
    (400, range(0, 400, 3)),  # 267 runs: the kept entries gathered
    (400, range(100, 300)),  # one stretch used: the runs before and after it
])
def test_the_names_kept_are_the_used_ones_in_order_however_many_runs_are_dropped(names, used):
    assert SLICED_RUNS < 267  # (the second case takes the other path)
    b = XSpaceBuilder()
    gpu = b.gpu_plane(0)
    for k in range(names):
        gpu.event_id(f"fusion.{k}")
    line = gpu.line("Stream #1(Kernel)", id=1)
    for i, k in enumerate(used):
        line.event(f"fusion.{k}", T0 + i * 1_000, 500)
    profile = read_xplane_bytes(b.proto.SerializeToString())
    plane = next(p for p in profile.planes if p.name == "/device:GPU:0")
    assert plane.event_names == [f"fusion.{k}" for k in used]
    assert [plane.lines[0].name_of(i) for i in range(len(used))] == [f"fusion.{k}" for k in used]
