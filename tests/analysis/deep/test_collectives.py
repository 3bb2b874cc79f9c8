"""Collectives on synthetic multi-stream GPU profiles: exposed vs hidden time, sizes, bandwidth, skew."""

from __future__ import annotations

import numpy as np
import pytest
from deep_profiles import deep_findings, deep_section
from paths import CORPUS, NO_CORPUS
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis import intervals as iv
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.event_names import collective_type
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
MiB = 1 << 20
GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
ALL_GATHER = "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def profile(compute_ms=(10,), steps=4, small_gathers=0):
    """Per 20 ms step on each GPU: compute [0, c) on stream 7; an all-reduce [6, 12) and an all-gather
    [14, 16) on stream 13 (NCCL's own stream), with PyTorch's collective args as stats."""
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python", id=1)
    for s in range(steps):
        python.event("train", T0 + s * 20 * MS, 20 * MS - 1, stats={"step_num": s + 1, "_r": 1})
    for ordinal, c_ms in enumerate(compute_ms):
        plane = b.gpu_plane(ordinal)
        compute = plane.line("Stream #7(Kernel)", id=7)
        comm = plane.line("Stream #13(Kernel)", id=13)
        for s in range(steps):
            t = T0 + s * 20 * MS
            compute.kernel(GEMM, t, int(c_ms * MS))
            comm.kernel(ALL_REDUCE, t + 6 * MS, 6 * MS, stats={
                "in_msg_nelems": 25 * MiB, "out_msg_nelems": 25 * MiB, "dtype": "BFloat16", "group_size": 8})
            gather = {"message_bytes": 512 * 1024, "group_size": 8}
            comm.kernel(ALL_GATHER, t + 14 * MS, 2 * MS, stats=gather)
            for g in range(small_gathers):
                comm.kernel(ALL_GATHER, t + 17 * MS + g * 100_000, 50_000, stats={"message_bytes": 64 * 1024})
    return read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")


def test_collective_types_from_names():
    assert collective_type(ALL_REDUCE) == "all_reduce" and collective_type(ALL_GATHER) == "all_gather"
    assert collective_type("ncclKernel_ReduceScatter_RING_LL_Sum_float") == "reduce_scatter"
    assert collective_type("ncclDevKernel_SendRecv(ncclDevComm*)") == "send_recv"
    assert collective_type("ncclKernel_Broadcast_RING_LL_Sum_int8_t") == "broadcast"
    assert collective_type("%all-reduce.3 = f32[1024]{0} all-reduce(f32[1024]{0} %p)") == "all_reduce"
    assert collective_type("all-to-all.1") == "all_to_all"
    assert collective_type("ncclKernel_Reduce_RING_LL_Sum_float") == "reduce"
    assert collective_type("collective-permute-start.2") == "send_recv"


def test_intersection_of_interval_sets():
    a = iv.union(np.array([0, 10, 30]), np.array([5, 20, 40]))
    b = iv.union(np.array([3, 15, 40]), np.array([12, 35, 50]))
    starts, ends = iv.intersect(a, b)
    assert starts.tolist() == [3, 10, 15, 30] and ends.tolist() == [5, 12, 20, 35]
    assert iv.total(iv.intersect(a, iv.EMPTY)) == 0


def test_exposed_and_hidden_time_by_type_sizes_and_bandwidth():
    p = profile()
    out = deep_section(p, "collectives")
    assert out["calls"] == 8 and out["steps"] == 4 and out["devices_with_collectives"] == 1
    # all-reduce [6,12) under compute [0,10): 4 ms hidden, 2 ms exposed; all-gather [14,16) exposed
    assert out["per_step_ms"] == pytest.approx(8.0) and out["exposed_per_step_ms"] == pytest.approx(4.0)
    assert out["total_ms"] == pytest.approx(32.0) and out["exposed_ms"] == pytest.approx(16.0)
    assert out["hidden_pct"] == pytest.approx(50.0)
    assert out["exposed_step_pct"] == pytest.approx(100 * 4 / (20 - 1e-6), abs=0.01)
    ar, ag = out["types"]
    assert ar["type"] == "all_reduce" and ar["per_step_ms"] == pytest.approx(6.0)
    assert ar["exposed_per_step_ms"] == pytest.approx(2.0)
    assert ar["hidden_pct"] == pytest.approx(100 * 4 / 6, abs=0.01)
    assert ar["calls_per_step"] == pytest.approx(1.0)
    assert ar["mean_message_bytes"] == 50 * MiB and ar["group_size"] == 8  # 25 Mi bf16 elements
    algbw = 50 * MiB / 0.006 / 1e9
    assert ar["algbw_gbps"] == pytest.approx(algbw, rel=1e-3)
    assert ar["busbw_gbps"] == pytest.approx(algbw * 2 * 7 / 8, rel=1e-3)  # nccl-tests' all-reduce factor
    assert ag["type"] == "all_gather" and ag["exposed_per_step_ms"] == pytest.approx(2.0)
    assert ag["hidden_pct"] == 0
    assert ag["mean_message_bytes"] == 512 * 1024
    # bandwidths are rounded to 3 decimals (MB/s)
    assert ag["busbw_gbps"] == pytest.approx(512 * 1024 / 0.002 / 1e9 * 7 / 8, abs=5e-4)
    (finding,) = out["findings"]
    assert finding["id"] == "collectives.exposed" and finding["severity"] == "medium"  # 20 %: ≥ 10, < 25


def test_fully_hidden_collectives_have_no_finding_and_a_longer_compute_makes_them_hidden():
    p = profile(compute_ms=(16.5,))  # compute now covers [0, 16.5): both collectives hidden
    out = deep_section(p, "collectives")
    assert out["exposed_ms"] == 0 and out["hidden_pct"] == 100.0 and out["findings"] == []


def test_small_messages_finding_needs_enough_calls_per_step():
    limit = th.COLLECTIVES_SMALL_MIN_PER_STEP
    p = profile(small_gathers=limit - 1)  # + the 512 KiB one = limit calls per step, all < 1 MiB
    ids = [f["id"] for f in deep_section(p, "collectives")["findings"]]
    assert "collectives.small_messages" in ids
    q = profile(small_gathers=limit - 2)
    assert "collectives.small_messages" not in [f.id for f in deep_findings(q, "collectives")]


def test_straggler_across_devices():
    p = profile(compute_ms=(10, 10, 13))  # GPU 2 computes 30 % longer than the median
    out = deep_section(p, "collectives")
    skew = out["skew"]
    assert skew["ranks"] == 3 and skew["slowest"] == "/device:GPU:2"
    assert skew["slowest_compute_per_step_ms"] == pytest.approx(13.0)
    assert skew["median_compute_per_step_ms"] == pytest.approx(10.0)
    assert skew["compute_skew_pct"] == pytest.approx(30.0)
    assert "collectives.straggler" in [f["id"] for f in out["findings"]]
    even = profile(compute_ms=(10, 10, 11.9))  # 19 %: below the 20 % threshold
    assert "collectives.straggler" not in [f.id for f in deep_findings(even, "collectives")]


def test_no_collectives():
    b = XSpaceBuilder(hostnames=["h"])
    b.gpu_plane(0).line("Stream #7(Kernel)", id=7).kernel(GEMM, T0, MS)
    p = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    out = deep_section(p, "collectives")
    assert out["calls"] == 0 and out["types"] == [] and out["hidden_pct"] is None and out["findings"] == []


NCCL_TRACE = CORPUS / "hta/tests/data/nccl_parser_config/nccl_data.json.gz"


@pytest.mark.skipif(not NCCL_TRACE.is_file(), reason=NO_CORPUS)
def test_real_nccl_trace_sizes_bandwidth_and_overlap_are_plausible():
    """HTA's 2-rank A100 trace: PyTorch recorded each all-reduce's element count and dtype on its kernel.
    The sizes must be what the raw JSON says (read here independently), every call sized, and the
    bandwidth within what any GPU link can do (0.1–900 GB/s, NVLink 4 is 900)."""
    import gzip
    import json

    from tb_plugin_advisor.model import RunProfiles
    from tb_plugin_advisor.readers.kineto.reader import read_kineto
    from tb_plugin_advisor.report.run import build_report

    with gzip.open(NCCL_TRACE) as handle:
        raw = json.load(handle)["traceEvents"]
    kernels = [e for e in raw if e.get("cat") == "kernel" and "AllReduce" in e.get("name", "")]
    width = {"Float": 4}
    expected_bytes = [e["args"]["In msg nelems"] * width[e["args"]["dtype"]] for e in kernels]
    report = build_report(RunProfiles(run="nccl", profiles=[read_kineto(str(NCCL_TRACE))])).to_json()
    c = report["collectives"]
    (all_reduce,) = [t for t in c["types"] if t["type"] == "all_reduce"]
    assert all_reduce["calls"] == all_reduce["sized_calls"] == len(kernels) == 15
    assert all_reduce["mean_message_bytes"] == pytest.approx(sum(expected_bytes) / len(kernels), abs=1)
    assert all_reduce["group_size"] == 2
    assert 0.1 < all_reduce["busbw_gbps"] < 900
    assert all_reduce["busbw_gbps"] == pytest.approx(all_reduce["algbw_gbps"])  # 2(n-1)/n = 1 for 2 ranks
    assert 0 <= c["exposed_ms"] <= c["total_ms"] and 0 <= c["hidden_pct"] <= 100
    (broadcast,) = [t for t in c["types"] if t["type"] == "broadcast"]
    assert broadcast["busbw_gbps"] == pytest.approx(broadcast["algbw_gbps"])


def test_diff_names_exposed_time_and_hidden_share_that_moved():
    """Longer compute hides the whole all-reduce: exposed 4 → 2 ms per step, hidden 50 → 75 %."""
    from tb_plugin_advisor.diff.compare import diff_reports
    from tb_plugin_advisor.model import RunProfiles
    from tb_plugin_advisor.report.run import build_report
    from tb_plugin_advisor.views.export.diff import render_text

    def report(run, compute_ms):
        return build_report(RunProfiles(run=run, profiles=[profile(compute_ms=(compute_ms,))])).to_json()

    diff = diff_reports(report("a", 10), report("b", 13))
    co = diff["collectives"]
    assert co["exposed_per_step_ms"]["baseline"] == pytest.approx(4.0, abs=1e-3)
    assert co["exposed_per_step_ms"]["candidate"] == pytest.approx(2.0, abs=1e-3)
    assert co["hidden_pct"]["delta"] == pytest.approx(25.0, abs=0.01)
    (all_reduce,) = [t for t in co["types"] if t["type"] == "all_reduce"]
    assert all_reduce["exposed_per_step_ms"]["delta"] == pytest.approx(-2.0, abs=1e-3)
    assert co["types"][0]["type"] == "all_reduce"  # largest move first
    assert "Collectives: exposed time per step 4 ms \u2192 2 ms; hidden behind compute 50 % \u2192 75 %." in (
        diff["summary"])
    assert "exposed ms per step" in render_text(diff)
    same = diff_reports(report("a", 10), report("a2", 10))
    assert "Collectives:" not in same["summary"]


def test_no_collectives_no_diff_section():
    from tb_plugin_advisor.diff.collectives import collectives_diff
    from tb_plugin_advisor.report.document import read_report

    assert collectives_diff(read_report({"collectives": {"calls": 0}}), read_report({})) == {}


def _size_one_by_one(line, p):
    """The per-event rule, read one stat at a time: the spec the column-wise reading must match."""
    from tb_plugin_advisor.analysis.deep.collectives import DTYPE_BYTES, DTYPE_STAT, MAX_ELEMENTS, SIZE_STATS

    dtype = line.stat_value(DTYPE_STAT, p)
    width = DTYPE_BYTES.get(dtype.lower().replace("c10::", ""), 0) if isinstance(dtype, str) else 0
    for stat in SIZE_STATS["elements"]:
        count = line.stat_value(stat, p)
        if isinstance(count, (int, float)) and 0 <= count < MAX_ELEMENTS and width:
            return int(count) * width
    for stat in SIZE_STATS["bytes"]:
        value = line.stat_value(stat, p)
        if isinstance(value, (int, float)) and value >= 0:
            return int(value)
    return -1


def test_message_sizes_and_group_size_read_as_columns_match_the_per_event_rule():
    """Element counts with a known, unknown or missing dtype (then the byte counts), negative, float
    and huge values, a stat that a text value turned into text on its line, stats on some events only:
    `_message_sizes` reads the stats as columns at the collectives' events, and each size and the
    group size are what the per-event rule gives."""
    from tb_plugin_advisor.analysis.deep.collectives import _message_sizes

    numeric = [
        {"in_msg_nelems": 1000, "dtype": "BFloat16"},
        {"in_msg_nelems": 1000, "dtype": "c10::Half", "message_bytes": 7},
        {"in_msg_nelems": 1000, "dtype": "complex32", "message_bytes": 7},  # unknown width: bytes
        {"in_msg_nelems": -5, "out_msg_nelems": 30, "dtype": "float"},  # first count unusable: second
        {"in_msg_nelems": 12.9, "dtype": "double"},
        {"in_msg_nelems": 1 << 60, "dtype": "double", "message_bytes": 5},  # past MAX_ELEMENTS: bytes
        {"message_bytes": -1, "bytes_accessed": 64, "group_size": -2},
        {"dtype": "float"},
        {"group_size": 4},
        {"group_size": 16, "message_bytes": 3.5},
        {},
    ]
    text = [{"in_msg_nelems": "many", "dtype": "float", "bytes_accessed": 99},
            {"in_msg_nelems": 8, "dtype": "float"}]
    b = XSpaceBuilder(hostnames=["h"])
    plane = b.gpu_plane(0)
    for line_id, cases in ((13, numeric), (14, text)):
        line = plane.line(f"Stream #{line_id}(Kernel)", id=line_id)
        for k, stats in enumerate(cases):
            line.kernel(ALL_REDUCE, T0 + k * MS + line_id, 100_000, stats=stats)
    device = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h").devices[0]
    table = device.kernels
    rows = np.arange(len(table))
    sizes, group = _message_sizes(device, rows)
    expected = []
    for r in rows.tolist():
        line = device.plane.lines[int(table.line_index[r])]
        expected.append(_size_one_by_one(line, int(np.searchsorted(line.start_ns, table.start_ns[r]))))
    assert sizes.tolist() == expected
    size_at = dict(zip(table.start_ns.tolist(), sizes.tolist()))  # (starts are distinct)
    # spot checks of the rule itself; on stream 14 a text count made the column text: bytes, or none
    assert [size_at[T0 + k * MS + 13] for k in range(7)] == [2000, 2000, 7, 120, 96, 5, 64]
    assert [size_at[T0 + k * MS + 14] for k in range(2)] == [99, -1]
    assert group == 4
