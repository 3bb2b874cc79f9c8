"""The deeper views in the report: contract keys, all-hosts merge, `--section`, text/md/html exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from html_pages import outside_scripts
from synth import XSpaceBuilder

from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.report.combine import (
    Found,
    Pool,
    PooledCollectives,
    PooledKernelStats,
    PooledMemory,
    PooledRoofline,
)
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.report.sections import COLLECTIVES, KERNEL_STATS, MEMORY, ROOFLINE, VIEWS
from tb_plugin_advisor.views.cli.main import main as cli_main
from tb_plugin_advisor.views.export.render import render_html, render_markdown, render_text

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
US = 1_000
MiB = 1 << 20
EVIL = "<img src=x onerror=alert(1)>"
GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"
GEMM_DETAILS = "regs:168 static_shared:0 dynamic_shared:73728 grid:40,8,1 block:256,1,1 occ_pct:12.5"
REDUCE_DETAILS = "regs:64 static_shared:0 dynamic_shared:0 grid:108,1,1 block:256,1,1"


def host(name: str, gemm_us: float = 600, peak_mib: int = 300,
         kernel: str = "reduce_kernel") -> XSpaceBuilder:
    """4 steps of 10 ms: a GEMM and a reduce kernel per step; an allocator that peaks in step 3."""
    b = XSpaceBuilder(hostnames=[name])
    cpu = b.plane("/host:CPU")
    python = cpu.line("python", id=1)
    compute = cpu.line("tf_Compute", id=2)
    stream = b.gpu_plane(0, memory_size=16 << 30).line("Stream #7(Kernel)", id=7)
    for s in range(4):
        t = T0 + s * 10 * MS
        python.event("train", t, 10 * MS - 1, stats={"step_num": s + 1, "_r": 1})
        stream.kernel(GEMM, t + 100 * US, round(gemm_us * US), details=GEMM_DETAILS,
                      tf_op="m/dense/MatMul:MatMul")
        stream.kernel(kernel, t + 2 * MS, 200 * US, details=REDUCE_DETAILS)
        size = (peak_mib if s == 2 else 100) * MiB
        for ms, sign in ((1, 1), (5, -1)):
            compute.event("MemoryAllocation" if sign > 0 else "MemoryDeallocation", t + ms * MS, 0, stats={
                "allocator_name": "GPU_0_bfc", "bytes_allocated": size if sign > 0 else 0,
                "allocation_bytes": size, "addr": 1000 + s, "tf_op": f"m/layer{s}/{EVIL}", "data_type": 14})
    return b


def run_of(*hosts) -> RunProfiles:
    profiles = [read_xplane_bytes(b.to_bytes(), source=f"{h}.xplane.pb", host=h) for b, h in hosts]
    return RunProfiles("run-1", profiles)


def test_single_host_report_carries_kernel_stats_and_memory():
    report = build_report(run_of((host("w0"), "w0"))).to_json()
    ks = report["kernel_stats"]
    assert ks["launches"] == 8 and ks["distinct"] == 2 and ks["steps"] == 4
    assert ks["total_ms"] == pytest.approx(4 * 0.8)
    gemm, reduce = ks["kernels"]
    assert gemm["name"] == GEMM and gemm["per_step_ms"] == pytest.approx(0.6)
    assert gemm["occupancy_pct"] == 12.5 and gemm["occupancy_source"] == "profile_theoretical"
    assert reduce["occupancy_source"] == "computed_theoretical"
    assert reduce["occupancy_pct"] == pytest.approx(50.0)
    memory = report["memory"]
    (a,) = memory["allocators"]
    assert memory["main_allocator"] == "GPU_0_bfc" and memory["peak_bytes"] == 300 * MiB
    assert a["peak_step"] == 3 and a["peak_ms"] == pytest.approx(21.0)  # step 3 starts at 20 ms, +1 ms
    assert a["per_step_peak_bytes"] == [100 * MiB, 100 * MiB, 300 * MiB, 100 * MiB]
    assert a["capacity_bytes"] == 16 << 30 and a["device"] == "/device:GPU:0"
    json.dumps(report, allow_nan=False)


def test_all_hosts_merge_kernels_by_name_and_list_every_hosts_allocators():
    w0, w1 = host("w0", gemm_us=600), host("w1", gemm_us=1000, peak_mib=500)
    report = build_report(run_of((w0, "w0"), (w1, "w1")))
    out = report.to_json()
    ks = out["kernel_stats"]
    assert ks["launches"] == 16 and ks["distinct"] == 2
    gemm = ks["kernels"][0]
    assert gemm["name"] == GEMM and gemm["launches"] == 8 and gemm["hosts"] == ["w0", "w1"]
    assert gemm["total_ms"] == pytest.approx(4 * 0.6 + 4 * 1.0)
    assert gemm["min_us"] == pytest.approx(600) and gemm["max_us"] == pytest.approx(1000)
    assert gemm["mean_us"] == pytest.approx(800)
    assert gemm["per_step_ms"] == pytest.approx((0.6 + 1.0) / 2)  # per step on each host, mean over hosts
    assert [h["host"] for h in ks["per_host"]] == ["w0", "w1"]
    memory = out["memory"]
    assert memory["main_allocator"] == "w1:GPU_0_bfc" and memory["peak_bytes"] == 500 * MiB
    peaks = [(a["host"], a["peak_bytes"]) for a in memory["allocators"]]
    assert peaks == [("w1", 500 * MiB), ("w0", 300 * MiB)]
    json.dumps(out, allow_nan=False)


def test_exports_show_the_sections_and_escape_profile_strings():
    report = build_report(run_of((host("w0", kernel=EVIL), "w0"))).to_json()
    text = render_text(report, width=120)
    assert "Kernel statistics:" in text and "Memory over time:" in text
    assert "8 launches of 2 kernels" in text and "peak 300.00 MiB" in text and "in step 3" in text
    md = render_markdown(report)
    assert "## Kernel statistics" in md and "## Memory over time" in md
    assert EVIL not in md and "&lt;img src=x onerror=alert\\(1\\)&gt;" in md
    page = outside_scripts(render_html(report))
    assert '<h2 id="kernel-stats">' in page and '<h2 id="memory">' in page
    # the curve is drawn by the tab's own memory chart from the embedded bundle, not written here
    assert 'data-advisor-memory="0"' in page and "<polyline" not in page
    assert EVIL not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page


@pytest.fixture()
def logdir(tmp_path: Path) -> Path:
    session = tmp_path / "logs" / "runA" / "plugins" / "profile" / "2024_01_01_00_00_00"
    host("w0").write(session / "w0.xplane.pb")
    return tmp_path / "logs"


@pytest.mark.parametrize("section", sorted(VIEWS))
def test_cli_section_json_has_only_that_view(logdir, capsys, section):
    assert cli_main(["report", str(logdir), "--section", section, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sections"] == [section] and out["run"] == "runA/2024_01_01_00_00_00"
    assert VIEWS[section] in out and "verdict" not in out and "breakdown_pct" not in out


def test_cli_sections_in_text_md_and_html(logdir, capsys, tmp_path):
    assert cli_main(["report", str(logdir), "--section", "memory"]) == 0
    text = capsys.readouterr().out
    assert "Memory over time:" in text and "Kernel statistics" not in text and "Recommendations" not in text
    both = ["--section", "kernels", "--section", "memory"]
    assert cli_main(["report", str(logdir), *both, "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.index("## Kernel statistics") < md.index("## Memory over time")
    target = tmp_path / "k.html"
    html_args = ["--section", "kernels", "--format", "html", "-o", str(target)]
    assert cli_main(["report", str(logdir), *html_args]) == 0
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and '<h2 id="kernel-stats">' in page and EVIL not in page


def test_cli_section_on_a_profile_without_that_data_says_why(tmp_path, capsys):
    b = XSpaceBuilder(hostnames=["c"])
    b.plane("/host:CPU").line("python", id=1).event("train", T0, MS, stats={"_r": 1})
    b.write(tmp_path / "plugins" / "profile" / "s" / "c.xplane.pb")
    assert cli_main(["report", str(tmp_path), "--section", "kernels"]) == 0
    assert "No accelerator kernels in this profile" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:  # argparse refuses an unknown section with exit 2
        cli_main(["report", str(tmp_path), "--section", "bogus"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'bogus'" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------
# Collectives in the report (tests/deep_profiles.py: 5 ms of collectives per step, 3 ms exposed)


def test_collectives_in_the_report_the_exports_and_across_hosts():
    from deep_profiles import COLLECTIVE_MS, EXPOSED_MS, STEP_MS, gpu_training_profile

    one = build_report(run_of((gpu_training_profile("w0"), "w0"))).to_json()
    c = one["collectives"]
    assert c["per_step_ms"] == pytest.approx(COLLECTIVE_MS)
    assert c["exposed_per_step_ms"] == pytest.approx(EXPOSED_MS)
    assert c["hidden_pct"] == pytest.approx(100 * (COLLECTIVE_MS - EXPOSED_MS) / COLLECTIVE_MS)
    assert c["exposed_step_pct"] == pytest.approx(100 * EXPOSED_MS / STEP_MS, abs=0.01)
    assert [t["type"] for t in c["types"]] == ["all_reduce", "reduce_scatter"]
    assert [f["id"] for f in c["findings"]] == ["collectives.exposed"]
    assert "Collectives:" in render_text(one) and "## Collectives" in render_markdown(one)
    assert '<h2 id="collectives">' in render_html(one)
    # two hosts: the slower one computes longer (its GEMM takes longer): a straggler across hosts
    fast, slow = gpu_training_profile("w0"), gpu_training_profile("w1")
    both = build_report(run_of((fast, "w0"), (slow, "w1"))).to_json()["collectives"]
    assert both["calls"] == 2 * c["calls"] and [h["host"] for h in both["per_host"]] == ["w0", "w1"]
    assert both["skew"]["ranks"] == 2 and both["skew"]["compute_skew_pct"] == pytest.approx(0.0)
    assert [f["id"] for f in both["findings"]] == ["collectives.exposed", "collectives.exposed"]


# ---------------------------------------------------------------------------------------------------
# Pooled over hosts from each host's typed view, rounded once, when written


def pooled(section, report):
    """What `section`'s pooling makes of the report's hosts (before it is written)."""
    reports = report.host_reports
    return section.pooling.pool([section.of(r) for r in reports], Pool(reports))


def test_pooled_kernels_sum_each_hosts_own_times_and_round_once():
    # GEMMs of 600.012 and 1000.037 µs, 4 per host: 2.400048 and 4.000148 ms, rounded per host 2.4 and
    # 4.0001; pooled from the rounded ones the run would read 6.4001 ms and a mean of 800.013 µs
    report = build_report(run_of((host("w0", gemm_us=600.012), "w0"), (host("w1", gemm_us=1000.037), "w1")))
    kernels = pooled(KERNEL_STATS, report)
    assert isinstance(kernels, PooledKernelStats)
    gemm = kernels.kernels[0]
    assert gemm.name == GEMM and gemm.total_ns == 4 * (600_012 + 1_000_037)
    assert gemm.total_ns == sum(k.total_ns for r in report.host_reports for k in r.deep.kernel_stats.kernels
                                if k.name == GEMM)
    row = kernels.to_json()["kernels"][0]
    assert row["total_ms"] == 6.4002 and row["mean_us"] == pytest.approx(800.0245, abs=1e-3)
    assert row["min_us"] == 600.012 and row["max_us"] == 1000.037
    assert row["per_step_ms"] == 0.8  # (0.600012 + 1.000037) / 2: each host's per its own steps
    assert row["launches_per_step"] == 1.0 and row["hosts"] == ["w0", "w1"] and row["devices"] == 2
    assert row["occupancy_pct"] == 12.5 and row["tensor_core_pct"] == 100.0
    total = sum(r.deep.kernel_stats.total_ns for r in report.host_reports)
    assert row["time_pct"] == round(100.0 * gemm.total_ns / total, 3)
    assert kernels.to_json() == report.to_json()["kernel_stats"]  # the report writes the pooled view


def test_pooled_occupancy_is_weighted_by_each_hosts_kernel_time():
    # the GEMM reports 12.5 %, the reduce kernel's 50 % is computed: 21.875 % on w0 (0.6 ms GEMMs),
    # 16.25 % on w1 (1.8 ms GEMMs); the run weights each host's by its kernel time (17.86 %, not 19.06 %)
    report = build_report(run_of((host("w0"), "w0"), (host("w1", gemm_us=1800), "w1")))
    out = pooled(KERNEL_STATS, report).to_json()
    own = [r.deep.kernel_stats for r in report.host_reports]
    expected = sum(s.sums.occupancy_weighted / s.sums.occupancy_ns * s.total_ns for s in own) / sum(
        s.total_ns for s in own)
    assert out["occupancy_pct"] == round(expected, 2) == 17.86
    assert out["launches_per_step"] == 2.0 and out["steps"] == 8 and out["distinct"] == 2
    assert [h["host"] for h in out["per_host"]] == ["w0", "w1"]
    assert out["per_host"][1]["total_ms"] == own[1].to_json()["total_ms"]


def test_pooled_memory_keeps_each_hosts_allocators_typed():
    report = build_report(run_of((host("w0"), "w0"), (host("w1", peak_mib=500), "w1")))
    memory = pooled(MEMORY, report)
    assert isinstance(memory, PooledMemory)
    peaks = [(a.host, a.memory.peak_bytes) for a in memory.allocators]
    assert peaks == [("w1", 500 * MiB), ("w0", 300 * MiB)]
    out = memory.to_json()
    w1 = report.host_reports[1].deep.memory
    assert out["allocators"][0] == dict(w1.allocators[0].to_json(w1.origin_ns), host="w1")


def test_pooled_collectives_average_per_step_over_the_hosts_that_run_them():
    from deep_profiles import COLLECTIVE_MS, EXPOSED_MS, gpu_training_profile

    report = build_report(run_of((host("quiet"), "quiet"), (gpu_training_profile("busy"), "busy")))
    collectives = pooled(COLLECTIVES, report)
    assert isinstance(collectives, PooledCollectives)
    out = collectives.to_json()
    assert out["per_step_ms"] == pytest.approx(COLLECTIVE_MS)  # the quiet host does not halve it
    assert out["exposed_per_step_ms"] == pytest.approx(EXPOSED_MS)
    assert out["hidden_pct"] == pytest.approx(100 * (COLLECTIVE_MS - EXPOSED_MS) / COLLECTIVE_MS)
    assert out["steps"] == 9 and out["devices_with_collectives"] == 1
    assert [h["host"] for h in out["per_host"]] == ["quiet", "busy"]
    assert [d["host"] for d in out["per_device"]] == ["busy"] and out["skew"] is None  # one rank
    by_type = {t["type"]: t for t in out["types"]}
    assert list(by_type) == ["all_reduce", "reduce_scatter"]  # 3 ms, then 2 ms per step
    assert by_type["all_reduce"]["per_step_ms"] == 3.0 and by_type["all_reduce"]["hidden_pct"] == 0.0
    assert by_type["reduce_scatter"]["hidden_pct"] == 100.0 and by_type["reduce_scatter"]["group_size"] == 8.0
    assert by_type["all_reduce"]["sized_calls"] == by_type["all_reduce"]["calls"] == 5  # every size known
    assert [(f["id"], f["host"]) for f in out["findings"]] == [("collectives.exposed", "busy")]


def test_pooled_skew_names_every_rank_by_host_and_replaces_each_hosts_straggler():
    from deep_profiles import gpu_training_profile

    report = build_report(run_of((gpu_training_profile("w0"), "w0"), (gpu_training_profile("w1"), "w1")))
    collectives = pooled(COLLECTIVES, report)
    assert [name for name, _, _ in collectives.ranks] == ["w0:/device:GPU:0", "w1:/device:GPU:0"]
    out = collectives.to_json()
    assert out["skew"]["ranks"] == 2 and out["skew"]["slowest"] == "w0:/device:GPU:0"
    assert out["calls"] == sum(r.deep.collectives.to_json()["calls"] for r in report.host_reports)


def test_pooled_roofline_counts_only_the_hosts_that_cost_an_op():
    from deep_profiles import gpu_training_profile

    alone = build_report(run_of((gpu_training_profile("gpu"), "gpu"))).to_json()["roofline"]
    report = build_report(run_of((host("plain"), "plain"), (gpu_training_profile("gpu"), "gpu")))
    roofline = pooled(ROOFLINE, report)
    assert isinstance(roofline, PooledRoofline) and [p.host for p in roofline.active] == ["gpu"]
    out = roofline.to_json()
    assert out["hosts"] == 1 and out["devices"] == alone["devices"]
    assert out["model_flops"] == alone["model_flops"] and out["mfu_pct"] == alone["mfu_pct"]
    assert out["achieved_tflops"] == alone["achieved_tflops"]
    assert {op["host"] for op in out["ops"]} == {"gpu"} and len(out["ops"]) == len(alone["ops"])
    assert [p["host"] for p in out["per_host"]] == ["plain", "gpu"]
    assert {f["host"] for f in out["findings"]} == {"gpu"}


def test_a_roofline_no_host_costs_is_the_first_hosts_own_view():
    report = build_report(run_of((host("a"), "a"), (host("b"), "b")))
    roofline = pooled(ROOFLINE, report)
    assert isinstance(roofline, Found) and roofline.view is report.host_reports[0].deep.roofline
    alone = build_report(run_of((host("a"), "a"))).to_json()["roofline"]
    assert report.to_json()["roofline"] == alone
