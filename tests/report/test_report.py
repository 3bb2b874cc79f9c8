"""The report: JSON contract (DESIGN §2 + TEAM keys), multi-host summary, rendering, and the CLI."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from html_pages import outside_scripts
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES
from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.report.run import SCHEMA, build_report
from tb_plugin_advisor.views.cli.main import main as cli_main
from tb_plugin_advisor.views.export.render import render_html, render_markdown, render_text

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
EVIL = "<img src=x onerror=alert(1)>"


def gpu_host(
    host: str, input_ms: int, steps: int = 6, op_name: str = "model/dense/MatMul:MatMul"
) -> XSpaceBuilder:
    """`steps` steps of 100 ms: `input_ms` waiting in get-next, then bf16 GEMM kernels."""
    b = XSpaceBuilder(hostnames=[host])
    cpu = b.plane("/host:CPU")
    python = cpu.line("python3", id=1)
    launches = cpu.line("tf_Compute/2", id=2)
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    b.gpu_plane(1)  # an idle second GPU
    correlation = 0
    for s in range(steps):
        t = T0 + s * 120 * MS
        python.event("train", t, 100 * MS, stats={"step_num": 10 + s, "_r": 1})
        python.event("IteratorGetNextOp::DoCompute", t, input_ms * MS)
        python.event("EagerLocalExecute: __inference_train_step_5", t + input_ms * MS, (100 - input_ms) * MS)
        k = t + input_ms * MS
        while k + 10 * MS <= t + 100 * MS:
            correlation += 1
            launches.event("cudaLaunchKernel", k - 50_000, 20_000, stats={"correlation_id": correlation})
            stream.kernel(
                "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
                k,
                10 * MS,
                tf_op=op_name,
                correlation_id=correlation,
            )
            k += 10 * MS
    return b


def run_of(*builders_and_hosts) -> RunProfiles:
    profiles = [
        read_xplane_bytes(b.to_bytes(), source=f"{h}.xplane.pb", host=h) for b, h in builders_and_hosts
    ]
    return RunProfiles(run="run-1", profiles=profiles)


def test_single_host_report_follows_the_contract():
    report = build_report(run_of((gpu_host("w0", 40), "w0"))).to_json()
    assert report["schema"] == SCHEMA and report["run"] == "run-1" and report["hosts"] == ["w0"]
    steps = report["steps"]
    assert steps["count"] == 6 and steps["source"] == "root_marker"
    assert steps["mean_ms"] == pytest.approx(100.0) and steps["median_ms"] == pytest.approx(100.0)
    assert steps["p90_ms"] == pytest.approx(100.0)
    assert steps["numbers"] == [10, 11, 12, 13, 14, 15] and len(steps["times_ms"]) == 6
    first = steps["per_step"][0]
    assert first["step"] == 10 and first["start_ms"] == 0.0 and first["total_ms"] == pytest.approx(100.0)
    assert sum(first["breakdown_ms"].values()) == pytest.approx(100.0, abs=1e-3)
    assert set(report["breakdown_ms"]) == set(CATEGORIES) == set(report["breakdown_pct"])
    assert sum(report["breakdown_pct"].values()) == pytest.approx(100.0, abs=0.05)
    assert abs(report["breakdown_pct"]["input"] - 40.0) <= 1.0
    verdict = report["verdict"]
    assert verdict["bottleneck"] == "input" and verdict["input_bound"] == "high"
    assert verdict["summary"].startswith("Input-bound: 40 %")
    assert set(report["precision_pct"]) >= {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "unknown"}
    assert report["precision_pct"]["bf16"] == pytest.approx(100.0, abs=0.5)
    assert report["tensor_cores"]["device_time_pct"] == pytest.approx(100.0, abs=0.5)
    assert report["ops"][0]["name"] == "model/dense/MatMul:MatMul"
    assert report["ops"][0]["time_ms"] == pytest.approx(60.0, abs=0.01)
    assert report["ops"][0]["count"] == pytest.approx(6.0)
    devices = {d["name"]: d for d in report["devices"]}
    assert devices["/device:GPU:0"]["busy_pct"] == pytest.approx(60.0, abs=0.01)
    assert devices["/device:GPU:0"]["compute_capability"] == "8.0"
    assert devices["/device:GPU:1"]["kernel_count"] == 0
    for rec in report["recommendations"]:
        assert {"id", "severity", "title", "evidence", "snippet", "snippet_jax"} <= set(rec)
    assert "per_host" not in report
    assert {"input_pipeline", "peak_memory_bytes", "warnings", "kernels"} <= set(report)
    json.dumps(report, allow_nan=False)


def test_multi_host_run_has_an_all_hosts_summary_and_per_host_parts():
    report = build_report(run_of((gpu_host("w0", 40), "w0"), (gpu_host("w1", 10), "w1"))).to_json()
    assert report["hosts"] == ["w0", "w1"]
    per_host = {h["host"]: h for h in report["per_host"]}
    assert abs(per_host["w0"]["breakdown_pct"]["input"] - 40.0) <= 1.0
    assert abs(per_host["w1"]["breakdown_pct"]["input"] - 10.0) <= 1.0
    assert per_host["w1"]["verdict"]["input_bound"] == "moderate"
    assert abs(report["breakdown_pct"]["input"] - 25.0) <= 1.0  # pooled steps of both hosts
    assert report["steps"]["count"] == 12
    assert {s["host"] for s in report["steps"]["per_step"]} == {"w0", "w1"}
    assert sorted({d["host"] for d in report["devices"]}) == ["w0", "w1"]
    assert report["ops"][0]["time_ms"] == pytest.approx((60.0 + 90.0) / 2, abs=0.01)
    json.dumps(report, allow_nan=False)


def test_host_filter_and_unknown_host():
    run = run_of((gpu_host("w0", 40), "w0"), (gpu_host("w1", 10), "w1"))
    only = build_report(run, host="w1").to_json()
    assert only["hosts"] == ["w1"] and only["host"] == "w1" and "per_host" not in only
    with pytest.raises(AdvisorError, match="no host 'w9'.*'w0', 'w1'"):
        build_report(run, host="w9")


def test_no_kernels_on_a_gpu_profile_recommends_fixing_cupti():
    b = XSpaceBuilder(hostnames=["w0"])
    python = b.plane("/host:CPU").line("python3", id=1)
    for s in range(6):
        python.event("train", T0 + s * 100 * MS, 90 * MS, stats={"step_num": 5 + s, "_r": 1})
    b.gpu_plane(0)
    b.error("cupti_interface_->Subscribe: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")
    report = build_report(run_of((b, "w0"))).to_json()
    ids = {r["id"]: r for r in report["recommendations"]}
    assert ids["device.no_kernels"]["severity"] == "high"
    assert "NVreg_RestrictProfilingToAdminUsers=0" in ids["device.no_kernels"]["snippet"]
    assert any("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" in w for w in report["warnings"])


def test_tf_data_stages_parallelism_prefetch_and_autotune_from_iterator_events():
    b = XSpaceBuilder(hostnames=["w0"])
    cpu = b.plane("/host:CPU")
    python = cpu.line("python3", id=1)
    producer = cpu.line("tf_data_iterator_resource/3", id=3)
    for s in range(6):
        t = T0 + s * 100 * MS
        python.event("train", t, 100 * MS, stats={"step_num": 3 + s, "_r": 1})
        python.event("IteratorGetNextOp::DoCompute", t, 50 * MS)
        python.event("Iterator::Root", t, 50 * MS)
        python.event("Iterator::Root::Prefetch", t, 50 * MS, stats={"buffer_limit": 2, "autotune": "true"})
        producer.event(
            "Iterator::Root::Prefetch::ParallelMapV2",
            t,
            40 * MS,
            stats={"parallelism": 4, "autotune": "true", "name": "ParallelMapDatasetV2:3"},
        )
        producer.event("Iterator::Root::Prefetch::ParallelMapV2::TFRecord", t, 10 * MS)
        python.event("model/conv:Conv2D", t + 50 * MS, 50 * MS)
    report = build_report(run_of((b, "w0"))).to_json()
    pipeline = report["input_pipeline"]
    assert pipeline["dominant_stage"] == "map"
    # the 50 ms prefetch wait shared 30:10 between the producer's map and source stages
    assert pipeline["stages_ms"]["map"] == pytest.approx(37.5, abs=0.01)
    assert pipeline["stages_ms"]["source"] == pytest.approx(12.5, abs=0.01)
    assert (pipeline["parallelism"], pipeline["prefetch"], pipeline["autotune"]) == (4, True, True)
    assert report["verdict"]["summary"].startswith("Input-bound: 50 %")
    ids = {r["id"] for r in report["recommendations"]}
    assert (
        "input.preprocess_offline" in ids and "input.parallel_map" not in ids and "input.prefetch" not in ids
    )


def test_renderers_escape_profile_strings():
    report = build_report(run_of((gpu_host("w0", 40, op_name=f"{EVIL}/MatMul:MatMul"), "w0"))).to_json()
    report["run"] = EVIL
    page = outside_scripts(render_html(report))
    assert EVIL not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page and "http://" not in page and "https://" not in page
    markdown = render_markdown(report)
    assert EVIL not in markdown and "<img" not in markdown
    text = render_text(report, width=100)
    assert "Input-bound: 40 %" in text and "Recommendations" in text


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    session = tmp_path / "runA" / "plugins" / "profile" / "2024_01_01_00_00_00"
    gpu_host("w0", 40).write(session / "w0.xplane.pb")
    gpu_host("w1", 10).write(session / "w1.xplane.pb")
    older = tmp_path / "runB" / "plugins" / "profile" / "2023_01_01_00_00_00"
    gpu_host("w0", 2).write(older / "w0.xplane.pb")
    import os

    os.utime(older / "w0.xplane.pb", (1_600_000_000, 1_600_000_000))
    return tmp_path


def test_cli_json_text_md_html_and_output_file(logdir, tmp_path, capsys):
    assert cli_main(["report", str(logdir), "--run", "runA/2024_01_01_00_00_00", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["hosts"] == ["w0", "w1"] and len(report["per_host"]) == 2
    assert cli_main(["report", str(logdir), "--run", "runA/2024_01_01_00_00_00", "--host", "w0"]) == 0
    assert capsys.readouterr().out.startswith("tb-advisor report — run runA/2024_01_01_00_00_00 (host w0)")
    out = tmp_path / "r.html"
    assert (
        cli_main(
            [
                "report",
                str(logdir),
                "--run",
                "runB/2023_01_01_00_00_00",
                "--format",
                "html",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert cli_main(["report", str(logdir), "--run", "runB/2023_01_01_00_00_00", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("# Advisor report: runB/2023\\_01\\_01\\_00\\_00\\_00")


def test_cli_picks_the_newest_run_and_lists_runs(logdir, capsys):
    assert cli_main(["report", str(logdir), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["run"] == "runA/2024_01_01_00_00_00"
    assert "reporting the newest" in captured.err
    assert cli_main(["report", str(logdir), "--list"]) == 0
    listed = capsys.readouterr().out
    assert "runA/2024_01_01_00_00_00\tw0, w1" in listed and "runB/2023_01_01_00_00_00\tw0" in listed


def test_cli_errors_are_one_line_and_exit_2(logdir, tmp_path, capsys):
    assert cli_main(["report", str(logdir), "--run", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown run 'nope'" in err and "runA/2024_01_01_00_00_00" in err and "Traceback" not in err
    assert cli_main(["report", str(logdir), "--run", "runA/2024_01_01_00_00_00", "--host", "w7"]) == 2
    assert "unknown host 'w7'" in capsys.readouterr().err
    assert cli_main(["report", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    tool_output = tmp_path / "localhost.overview_page.pb"  # xprof's own tool output beside a capture
    tool_output.write_bytes(b"\x0a\x00")
    assert cli_main(["report", str(tool_output)]) == 2
    err = capsys.readouterr().err
    assert "is a file the Advisor does not read" in err and "give the folder it lies in" in err
    assert "*.xplane.pb" in err and "is not a directory" not in err and "Traceback" not in err
    bad = tmp_path / "bad" / "plugins" / "profile" / "s1"
    bad.mkdir(parents=True)
    (bad / "h.xplane.pb").write_bytes(b"not a profile")
    assert cli_main(["report", str(tmp_path / "bad")]) == 2
    assert re.search(r"cannot read profile .*h\.xplane\.pb", capsys.readouterr().err)


def test_console_script_entry_point_runs(logdir):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tb_plugin_advisor.views.cli.main",
            "report",
            str(logdir),
            "--format",
            "json",
            "--run",
            "runB/2023_01_01_00_00_00",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert not math.isnan(report["steps"]["mean_ms"]) and report["verdict"]["input_bound"] == "low"


@pytest.fixture
def named_logdir(tmp_path: Path) -> Path:
    """The demo's layout: `<name>/train/plugins/profile/<session>/` for run1_naive, run10_big and
    run2_parallel, so `run1` is a prefix of two runs and `train` a directory of all three."""
    for name, session, wait in (
        ("run1_naive", "2024_01_01_00_00_01", 40),
        ("run10_big", "2024_01_01_00_00_02", 20),
        ("run2_parallel", "2024_01_01_00_00_03", 2),
    ):
        profile_dir = tmp_path / name / "train" / "plugins" / "profile" / session
        gpu_host("vm", wait).write(profile_dir / "vm.xplane.pb")
    return tmp_path


@pytest.mark.parametrize(
    "query, run",
    [
        ("run1_naive", "run1_naive/train/2024_01_01_00_00_01"),  # the directory the user created
        ("run1_naive/", "run1_naive/train/2024_01_01_00_00_01"),  # as the shell completes it
        ("run1_naive/train", "run1_naive/train/2024_01_01_00_00_01"),  # the TensorBoard run
        ("run10", "run10_big/train/2024_01_01_00_00_02"),  # a unique prefix
        ("run2", "run2_parallel/train/2024_01_01_00_00_03"),
        ("run2_parallel/train/2024_01_01_00_00_03", "run2_parallel/train/2024_01_01_00_00_03"),
    ],
)
def test_cli_run_accepts_a_unique_prefix_or_the_directory_name(named_logdir, capsys, query, run):
    assert cli_main(["report", str(named_logdir), "--run", query, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["run"] == run


@pytest.mark.parametrize(
    "query, candidates",
    [
        ("run1", ["run1_naive/train/2024_01_01_00_00_01", "run10_big/train/2024_01_01_00_00_02"]),
        ("train", ["run1_naive/", "run10_big/", "run2_parallel/"]),
    ],
)
def test_cli_ambiguous_run_lists_the_candidates_and_exits_2(named_logdir, capsys, query, candidates):
    assert cli_main(["report", str(named_logdir), "--run", query]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert f"run '{query}' is ambiguous" in err and f"matches {len(candidates)} runs" in err
    assert all(c in err for c in candidates) and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_diff_accepts_directory_names_and_reports_ambiguity(named_logdir, capsys):
    assert cli_main(["diff", str(named_logdir), "run1_naive", "run2", "--format", "json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    assert (diff["baseline"], diff["candidate"]) == (
        "run1_naive/train/2024_01_01_00_00_01", "run2_parallel/train/2024_01_01_00_00_03")
    assert cli_main(["diff", str(named_logdir), "run1", "run2"]) == 2
    err = capsys.readouterr().err
    assert "baseline run 'run1' is ambiguous" in err and "run10_big/train/2024_01_01_00_00_02" in err
