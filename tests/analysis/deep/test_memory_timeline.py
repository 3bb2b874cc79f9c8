"""Memory over time on synthetic allocator records whose curve, peak and live set are known exactly."""

from __future__ import annotations

import numpy as np
import pytest
from deep_profiles import deep_findings, deep_section
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.deep.memory_timeline import memory_timeline
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
MiB = 1 << 20
GiB = 1 << 30

# (ms, +alloc / -free, address, MiB, op, TF data_type): the allocator's own story, in order
STORY = [
    (1, +1, 1, 100, "m/conv1/Conv2D", 1),
    (2, +1, 2, 300, "m/conv2/Conv2D", 14),
    (3, -1, 1, 100, None, 0),
    (4, +1, 3, 50, "m/dense/MatMul", 14),
    (5, +1, 1, 200, "m/big/Concat", 1),  # address 1 reused: the peak, 550 MiB
    (6, -1, 2, 300, None, 0),
    (7, -1, 3, 50, None, 0),
]
PEAK_MIB = 550


def tf_profile(memory_size=40 * GiB, fragmentation_at_peak=0.25, allocator="GPU_0_bfc", story=STORY):
    b = XSpaceBuilder(hostnames=["h"])
    cpu = b.plane("/host:CPU")
    python = cpu.line("python", id=1)
    python.event("train", T0, int(4.5 * MS), stats={"step_num": 1, "_r": 1})
    python.event("train", T0 + int(4.5 * MS), int(4.5 * MS), stats={"step_num": 2, "_r": 1})
    compute = cpu.line("tf_Compute", id=2)
    b.gpu_plane(0, memory_size=memory_size)
    in_use = 0
    for ms, sign, addr, mib, op, dtype in story:
        in_use += sign * mib * MiB
        stats = {
            "allocator_name": allocator, "bytes_allocated": in_use, "allocation_bytes": mib * MiB,
            "requested_bytes": mib * MiB - 7, "addr": addr, "data_type": dtype,
            "bytes_available": GiB - in_use, "peak_bytes_in_use": 2 * GiB,
            "fragmentation": fragmentation_at_peak if in_use == PEAK_MIB * MiB else 0.01,
        }
        if op:
            stats.update(tf_op=op, shape=f"[{mib},1024,1024]", region_type="output")
        compute.event("MemoryAllocation" if sign > 0 else "MemoryDeallocation", T0 + ms * MS, 0, stats=stats)
    return read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")


def test_peak_step_op_live_set_and_headroom():
    profile = tf_profile()
    out = deep_section(profile, "memory")
    (a,) = out["allocators"]
    assert out["main_allocator"] == "GPU_0_bfc" and out["peak_bytes"] == PEAK_MIB * MiB
    assert a["kind"] == "device" and a["device"] == "/device:GPU:0" and a["records"] == 7
    assert a["relative"] is False
    assert a["peak_bytes"] == PEAK_MIB * MiB and a["peak_ms"] == pytest.approx(5.0)
    assert a["peak_step"] == 2 and a["peak_op"] == "m/big/Concat" and a["peak_op_source"] == "record"
    assert a["per_step_peak_bytes"] == [400 * MiB, 550 * MiB]
    assert a["allocator_peak_bytes"] == 2 * GiB  # the allocator's own figure, kept apart
    # live at the peak: B (300, bf16), D (200, fp32), C (50, bf16); A was freed before D reused its address
    assert a["live_at_peak_count"] == 3 and a["live_at_peak_bytes"] == 550 * MiB
    assert a["live_at_peak_unrecorded_bytes"] == 0
    assert [x["bytes"] for x in a["live_at_peak"]] == [300 * MiB, 200 * MiB, 50 * MiB]
    assert [x["op"] for x in a["live_at_peak"]] == ["m/conv2/Conv2D", "m/big/Concat", "m/dense/MatMul"]
    assert a["live_at_peak"][0]["dtype"] == "bfloat16" and a["live_at_peak"][1]["dtype"] == "float32"
    assert a["live_at_peak"][0]["requested_bytes"] == 300 * MiB - 7
    assert a["live_at_peak"][0]["allocated_ms"] == pytest.approx(2.0)
    assert a["live_at_peak_by_dtype"] == {"bfloat16": 350 * MiB, "float32": 200 * MiB}
    assert a["fragmentation_pct"] == pytest.approx(25.0) and a["fragmentation_source"] == "allocator"
    assert a["capacity_bytes"] == 40 * GiB and a["capacity_source"] == "device_properties"
    assert a["headroom_bytes"] == 40 * GiB - 550 * MiB
    assert a["headroom_pct"] == pytest.approx(100 * (1 - 550 / (40 * 1024)), abs=0.01)
    assert a["timeline"]["points"] == 7 and a["timeline"]["downsampled"] is False
    assert a["timeline"]["in_use_bytes"] == [100 * MiB, 400 * MiB, 300 * MiB, 350 * MiB, 550 * MiB, 250 * MiB,
                                             200 * MiB]
    assert a["timeline"]["t_ms"] == pytest.approx([1, 2, 3, 4, 5, 6, 7])
    assert out["findings"] == []  # 98.7 % headroom, 25 % fragmentation: below both thresholds


def test_without_a_device_the_allocator_limit_is_the_capacity_and_low_headroom_is_found():
    # no device of that ordinal: the limit is in use + available = 1 GiB; 550 MiB → 46 % headroom
    profile = tf_profile(allocator="GPU_3_bfc")
    (a,) = memory_timeline(profile, find_steps(profile)).to_json()["allocators"]
    assert a["capacity_bytes"] == GiB and a["capacity_source"] == "allocator_limit"
    # a device with 600 MiB: 50 MiB headroom = 8.3 % < 10 % → memory.low_headroom
    small = tf_profile(memory_size=600 * MiB)
    result = deep_section(small, "memory")
    ids = [f["id"] for f in result["findings"]]
    assert ids == ["memory.low_headroom"]
    assert "8.3 % headroom" in result["findings"][0]["evidence"]
    # 612 MiB: 62 MiB = 10.1 % headroom, just above the threshold
    roomy = tf_profile(memory_size=612 * MiB)
    assert deep_findings(roomy, "memory") == []


def test_fragmentation_finding_at_the_threshold():
    at = tf_profile(fragmentation_at_peak=th.MEMORY_FRAGMENTATION_PCT / 100)
    below = tf_profile(fragmentation_at_peak=th.MEMORY_FRAGMENTATION_PCT / 100 - 0.001)
    assert [f.id for f in deep_findings(at, "memory")] == ["memory.fragmentation"]
    assert deep_findings(below, "memory") == []


def test_kineto_style_records_signed_sizes_reserved_memory_and_innermost_op():
    """PyTorch `[memory]` records as the Kineto reader keeps them: signed size, totals, device type/id."""
    b = XSpaceBuilder(hostnames=["h"])
    cpu = b.plane("/host:CPU")
    ops = cpu.line("python", id=1)
    ops.event("ProfilerStep#3", T0, 10 * MS)
    ops.event("aten::linear", T0 + 1 * MS, 5 * MS)
    ops.event("aten::mm", T0 + 2 * MS, 2 * MS)
    mem = cpu.line("[memory]", id=2)
    b.gpu_plane(0, memory_size=16 * GiB)
    total = 0
    for ms, size, addr in ((1, 64, 10), (2.5, 256, 11), (3, -64, 10), (7, -256, 11)):
        total += size * MiB
        mem.event("[memory]", T0 + int(ms * MS), 0, stats={
            "memory_bytes": size * MiB, "total_allocated": total, "total_reserved": 512 * MiB,
            "device_type": 1, "device_id": 0, "address": addr})
    mem.event("[memory]", T0 + 8 * MS, 0, stats={"memory_bytes": 4096, "total_allocated": 4096,
                                                 "total_reserved": 0, "device_type": 0, "device_id": -1,
                                                 "address": 99})
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    out = deep_section(profile, "memory")
    gpu, host = out["allocators"]
    assert gpu["allocator"] == "GPU 0" and gpu["kind"] == "device" and gpu["device"] == "/device:GPU:0"
    assert host["allocator"] == "CPU" and host["kind"] == "host" and host["peak_bytes"] == 4096
    # no step markers here: times count from the first record (1 ms)
    assert gpu["peak_bytes"] == 320 * MiB and gpu["peak_ms"] == pytest.approx(1.5)
    # no op on the record: the innermost host event active at 2.5 ms
    assert gpu["peak_op"] == "aten::mm" and gpu["peak_op_source"] == "host_event"
    assert gpu["live_at_peak_bytes"] == 320 * MiB and gpu["live_at_peak_count"] == 2
    assert gpu["reserved_peak_bytes"] == 512 * MiB
    assert gpu["fragmentation_pct"] == pytest.approx(100 * (1 - 320 / 512))
    assert gpu["fragmentation_source"] == "reserved_not_in_use"
    assert gpu["capacity_bytes"] == 16 * GiB and gpu["timeline"]["reserved_bytes"] == [512 * MiB] * 4


def test_downsampling_keeps_at_most_the_limit_the_exact_peak_and_the_extremes():
    rng = np.random.default_rng(7)
    n = 20_000
    sizes = rng.integers(1, 1000, size=n) * 1024
    story, live, addr = [], [], 0
    for i in range(n):
        if live and rng.random() < 0.5:
            a, s = live.pop(int(rng.integers(len(live))))
            story.append((i * 0.001, -1, a, s))
        else:
            addr += 1
            live.append((addr, int(sizes[i])))
            story.append((i * 0.001, +1, addr, int(sizes[i])))
    b = XSpaceBuilder(hostnames=["h"])
    line = b.plane("/host:CPU").line("tf_Compute", id=1)
    in_use, curve = 0, []
    for ms, sign, a, s in story:
        in_use += sign * s
        curve.append(in_use)
        line.event("MemoryAllocation" if sign > 0 else "MemoryDeallocation", T0 + int(ms * MS), 0,
                   stats={"allocator_name": "GPU_0_bfc", "bytes_allocated": in_use, "allocation_bytes": s,
                          "addr": a})
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    (a,) = memory_timeline(profile).to_json()["allocators"]
    tl = a["timeline"]
    assert tl["downsampled"] is True and tl["points"] <= th.MEMORY_TIMELINE_POINTS
    assert a["peak_bytes"] == max(curve) and max(tl["in_use_bytes"]) == max(curve)
    assert min(tl["in_use_bytes"]) == min(curve)
    assert tl["t_ms"] == sorted(tl["t_ms"])
    # live set at the peak equals the running sum: every allocation has an address
    assert a["live_at_peak_bytes"] == a["peak_bytes"]


def test_no_records_no_allocators():
    b = XSpaceBuilder(hostnames=["h"])
    b.plane("/host:CPU").line("python", id=1).event("train", T0, MS, stats={"_r": 1})
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    empty = {"allocators": [], "main_allocator": None, "peak_bytes": None, "findings": []}
    assert deep_section(profile, "memory") == empty
