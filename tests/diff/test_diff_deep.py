"""The deeper views in the diff: memory and kernel statistics, on constructed reports and the sample."""

from __future__ import annotations

import pytest
from paths import SAMPLE_LOGDIR

from tb_plugin_advisor.diff.compare import diff_reports, diff_runs
from tb_plugin_advisor.diff.deep import DEEP_EXPLAIN
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.runs import find_run, load_run
from tb_plugin_advisor.views.export.diff import render_html, render_markdown, render_text

MiB = 1 << 20
SAMPLE = SAMPLE_LOGDIR


def report(run, peak_mib, by_dtype_mib, launches=100.0, occupancy=50.0, kernel_occ=50.0, device=True):
    allocator = {
        "allocator": "GPU_0_bfc" if device else "cpu", "kind": "device" if device else "host",
        "peak_bytes": peak_mib * MiB, "live_at_peak_bytes": sum(by_dtype_mib.values()) * MiB,
        "headroom_pct": 50.0, "live_at_peak_by_dtype": {k: v * MiB for k, v in by_dtype_mib.items()},
    }
    kernels = {
        "launches_per_step": launches, "occupancy_pct": occupancy, "tiny_launch_pct": 10.0,
        "tensor_core_time_pct": 40.0, "distinct": 2,
        "kernels": [{"name": "k1", "occupancy_pct": kernel_occ, "total_ms": 5.0},
                    {"name": "k2", "occupancy_pct": 30.0, "total_ms": 1.0}],
    }
    return {"schema": "tb-advisor/report/1", "run": run, "hosts": ["h"],
            "steps": {"count": 0, "times_ms": []}, "memory": {"allocators": [allocator]},
            "kernel_stats": kernels, "peak_memory_bytes": peak_mib * MiB if device else None}


def test_memory_change_by_dtype_and_its_sentence():
    base = report("fp32", 400, {"float32": 380, "int32": 20})
    cand = report("bf16", 250, {"float32": 60, "bfloat16": 170, "int32": 20})
    diff = diff_reports(base, cand)
    m = diff["memory"]
    assert m["baseline_allocator"] == m["candidate_allocator"] == "GPU_0_bfc"
    assert m["peak_bytes"]["delta"] == -150 * MiB and m["peak_bytes"]["delta_pct"] == pytest.approx(-37.5)
    assert m["live_at_peak_bytes"]["delta"] == -150 * MiB
    assert m["by_dtype_delta_bytes"] == {"float32": -320 * MiB, "bfloat16": 170 * MiB, "int32": 0}
    # the device peak is diff.py's sentence; this one adds which dtypes moved
    assert "Live at the peak: float32 \u2212320.0 MiB, bfloat16 +170.0 MiB." in diff["summary"]
    assert "Peak device memory 400.0 MiB \u2192 250.0 MiB" in diff["summary"]


def test_memory_sentence_on_cpu_runs_names_the_allocator_and_respects_the_threshold():
    base = report("a", 100, {"float32": 100}, device=False)
    moved = diff_reports(base, report("b", 94, {"float32": 94}, device=False))  # −6 %: ≥ 5 %
    assert "Peak memory of cpu 100.0 MiB \u2192 94.0 MiB (\u22126 %)" in moved["summary"]
    still = diff_reports(base, report("b", 96, {"float32": 96}, device=False))  # −4 %: below
    assert "Peak memory" not in still["summary"]
    # dtype moves below 10 % of the baseline peak are left out of the sentence
    assert "Live at the peak" not in moved["summary"] and "live at the peak" not in moved["summary"]


def test_kernel_statistics_change_and_its_thresholds():
    base = report("a", 100, {"float32": 100}, launches=100, occupancy=50.0, kernel_occ=50.0)
    cand = report("b", 100, {"float32": 100}, launches=60, occupancy=40.0, kernel_occ=20.0)
    diff = diff_reports(base, cand)
    ks = diff["kernel_stats"]
    assert ks["launches_per_step"]["delta"] == -40 and ks["launches_per_step"]["delta_pct"] == -40.0
    assert ks["occupancy_pct"]["delta"] == -10.0
    assert ks["occupancy_changes"] == [{"name": "k1", "baseline": 50.0, "candidate": 20.0, "delta": -30.0,
                                        "time_ms": 5.0}]
    sentence = "Kernels: kernel launches per step 100 \u2192 60; time-weighted occupancy 50 % \u2192 40 %."
    assert sentence in diff["summary"]
    limit = DEEP_EXPLAIN["launches_min_pct"]
    small = diff_reports(base, report("c", 100, {"float32": 100}, launches=100 * (1 - limit / 100) + 1))
    assert "Kernels:" not in small["summary"]


def test_diff_exports_show_the_deep_tables():
    diff = diff_reports(report("fp32", 400, {"float32": 400}), report("bf16", 250, {"bfloat16": 250}))
    text = render_text(diff)
    assert "Memory (main allocator)" in text and "Kernel statistics" in text
    assert "live bfloat16 at the peak" in text
    assert "## Memory (main allocator)" in render_markdown(diff)
    page = render_html(diff)
    assert "<h2>Memory (main allocator)</h2>" in page and "<h2>Kernel statistics</h2>" in page


def test_bundled_sample_mixed_precision_shrinks_the_peak_and_moves_it_to_bf16():
    """Seed story: run3 (mixed_bfloat16) against run2 (float32), real TF 2.21 CPU profiles.

    Plausibility, not exact truth: activations in bf16 take half the bytes, so the allocator's peak must
    drop, float32 bytes live at the peak must drop and bfloat16 bytes rise from nothing.
    """
    scan = scan_logdir(str(SAMPLE))
    runs = {s.run.split("/")[0]: s for s in scan.sessions}
    base = load_run(find_run(scan, runs["run2_parallel"].run))
    cand = load_run(find_run(scan, runs["run3_mixed"].run))
    diff = diff_runs(base, cand)
    m = diff["memory"]
    assert m["baseline_allocator"] == m["candidate_allocator"]
    assert m["peak_bytes"]["delta_pct"] < -10.0
    assert m["by_dtype_delta_bytes"]["float32"] < 0 < m["by_dtype_delta_bytes"]["bfloat16"]
    assert "Peak memory of" in diff["summary"] and "bfloat16 +" in diff["summary"]


def _with_roofline(r, mfu, achieved, op_tflops):
    r["roofline"] = {"device": "NVIDIA A100 40GB", "peak_precision": "bf16", "mfu_pct": mfu,
                     "achieved_tflops": achieved, "model_flops_per_step": 4e11, "step_ms": 20.0,
                     "costed_time_pct": 50.0,
                     "ops": [{"name": "gemm", "precision": "bf16", "achieved_tflops": op_tflops,
                              "roof_pct": op_tflops / 3.12, "total_ms": 4.0}]}
    return r


def test_roofline_change_mfu_and_achieved_with_thresholds():
    base = _with_roofline(report("a", 100, {"float32": 100}), 10.0, 31.2, 100.0)
    cand = _with_roofline(report("b", 100, {"float32": 100}), 20.0, 62.4, 200.0)
    diff = diff_reports(base, cand)
    r = diff["roofline"]
    assert r["mfu_pct"]["delta"] == 10.0 and r["achieved_tflops"]["delta_pct"] == 100.0
    (op,) = r["op_changes"]
    assert op["name"] == "gemm" and op["delta"] == 100.0 and op["delta_pct"] == 100.0
    assert ("Roofline: MFU 10.0 % \u2192 20.0 %; 31.20 \u2192 62.40 TFLOP/s of model FLOPs per device."
            in diff["summary"])
    points = DEEP_EXPLAIN["mfu_min_points"]
    same = _with_roofline(report("c", 100, {"float32": 100}), 10.0 + points - 0.01, 31.2, 100.0)
    assert "Roofline:" not in diff_reports(base, same)["summary"]
    text = render_text(diff)
    assert "Roofline" in text and "MFU %" in text and "TFLOP/s of gemm" in text
    assert "<h2>Roofline</h2>" in render_html(diff)
