"""`tb-advisor diff` end to end on synthetic XSpace files: reader → engine → diff → views → exit codes.

The profiles are built so the truth is known: each step is a `train` root marker holding an
IteratorGetNext wait and then one GPU kernel, with ±0.5 ms of deterministic jitter on the wait.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from html_pages import outside_scripts
from synth import XSpaceBuilder

from tb_plugin_advisor.diff.explain import fmt_signed_ms
from tb_plugin_advisor.views.cli.main import main

MS = 1_000_000
T0 = 1_700_000_000_000_000_000
SESSION = "2024_05_01_12_00_00"
MINUS = "\u2212"
FP32_GEMM = "volta_sgemm_128x64_nn"
BF16_GEMM = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"
XSS = "<img src=x onerror=alert(1)>"


def gpu_profile(steps: int, wait_ms: float, kernel: str, kernel_ms: float, tf_op: str) -> XSpaceBuilder:
    """`steps` steps of wait_ms (±0.5) input wait, then kernel_ms of one kernel, then 1 ms of nothing."""
    b = XSpaceBuilder(hostnames=["worker"])
    python = b.plane("/host:CPU").line("python", id=1)
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    t = T0
    for s in range(steps):
        wait = int((wait_ms + (s % 3 - 1) * 0.5) * MS)
        total = wait + int(kernel_ms * MS) + MS
        python.event("train", t, total, stats={"step_num": s + 10, "_r": 1})
        python.event("IteratorGetNextOp::DoCompute", t + 100_000, wait - 200_000)
        python.event("cudaLaunchKernel", t + wait, 50_000, stats={"correlation_id": s + 1})
        stream.kernel(kernel, t + wait + 100_000, int(kernel_ms * MS), tf_op=tf_op, correlation_id=s + 1)
        t += total
    return b


def add_run(logdir: Path, run_dir: str, builder: XSpaceBuilder, host: str = "worker") -> str:
    builder.write(logdir / run_dir / "plugins" / "profile" / SESSION / f"{host}.xplane.pb")
    return f"{run_dir}/{SESSION}"


def mean_step_ms(wait_ms: float, kernel_ms: float, steps: int = 8) -> float:
    jitter = sum((s % 3 - 1) * 0.5 for s in range(steps)) / steps
    return wait_ms + jitter + kernel_ms + 1.0


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("diff_logdir")
    add_run(root, "fp32_input_bound", gpu_profile(8, 40, FP32_GEMM, 60, "model/dense/MatMul:MatMul"))
    add_run(root, "bf16_prefetch", gpu_profile(8, 2, BF16_GEMM, 30, "model_1/dense_1/MatMul:MatMul"))
    add_run(root, "fp32_slower", gpu_profile(8, 0.8, FP32_GEMM, 80, "model/dense/MatMul:MatMul"))
    add_run(root, "fp32_fast", gpu_profile(8, 0.8, FP32_GEMM, 60, "model/dense/MatMul:MatMul"))
    add_run(root, "few", gpu_profile(3, 0.8, FP32_GEMM, 75, "model/dense/MatMul:MatMul"))
    add_run(root, "few_slow", gpu_profile(3, 0.8, FP32_GEMM, 150, "model/dense/MatMul:MatMul"))
    add_run(root, "two", gpu_profile(2, 0.8, FP32_GEMM, 150, "model/dense/MatMul:MatMul"))
    add_run(root, XSS, gpu_profile(8, 0.8, FP32_GEMM, 60, "model/<b>dense</b>/MatMul:MatMul"))
    two = "two_hosts"
    add_run(root, two, gpu_profile(8, 0.8, FP32_GEMM, 60, "model/dense/MatMul:MatMul"), host="host-a")
    add_run(root, two, gpu_profile(8, 0.8, FP32_GEMM, 66, "model/dense/MatMul:MatMul"), host="host-b")
    return root


def run_cli(capsys, *argv) -> tuple:
    code = main(["diff", *[str(a) for a in argv]])
    out = capsys.readouterr()
    return code, out.out, out.err


def diff_json(capsys, logdir: Path, base: str, cand: str, *extra) -> dict:
    code, out, err = run_cli(
        capsys, logdir, f"{base}/{SESSION}", f"{cand}/{SESSION}", "--format", "json", *extra
    )
    assert code == 0, err
    return json.loads(out)


# ---------------------------------------------------------------------------------------------------
# Numbers through the whole pipeline


def test_input_fix_and_bf16_show_as_known_deltas(capsys, logdir):
    diff = diff_json(capsys, logdir, "fp32_input_bound", "bf16_prefetch")
    st = diff["step_time"]
    base_ms, cand_ms = mean_step_ms(40, 60), mean_step_ms(2, 30)
    assert diff["schema"] == "tb-advisor/diff/1"
    assert abs(st["baseline_ms"] - base_ms) <= 0.1 and abs(st["candidate_ms"] - cand_ms) <= 0.1
    assert abs(st["delta_pct"] - 100 * (cand_ms - base_ms) / base_ms) <= 0.2
    assert st["significant"] is True and (st["baseline_steps"], st["candidate_steps"]) == (8, 8)
    assert abs(diff["breakdown_delta_ms"]["input"] - (-38.0)) <= 0.3
    assert abs(diff["breakdown_delta_ms"]["device_compute"] - (-30.0)) <= 0.1
    assert diff["breakdown"]["input"]["significant"] and diff["breakdown"]["device_compute"]["significant"]
    assert abs(diff["precision_delta_pct"]["bf16"] - 100.0) <= 0.5
    assert abs(diff["precision_delta_pct"]["fp32"] + 100.0) <= 0.5
    assert abs(diff["tensor_cores_delta_pct"] - 100.0) <= 0.5
    assert diff["verdict"]["baseline"]["bottleneck"] == "input"
    assert diff["verdict"]["candidate"]["bottleneck"] == "device"
    # The op keeps its identity across Keras' renumbering; the kernels are really different.
    (op,) = diff["ops"]
    assert op["name"] == "model/dense/MatMul:MatMul" and op["match"] == "normalised"
    assert abs(op["delta_ms"] + 30.0) <= 0.01
    kernels = {k["name"]: k for k in diff["kernels"]}
    assert kernels[FP32_GEMM]["status"] == "vanished" and kernels[BF16_GEMM]["status"] == "new"


def test_input_fix_and_bf16_are_explained_from_the_numbers(capsys, logdir):
    diff = diff_json(capsys, logdir, "fp32_input_bound", "bf16_prefetch")
    summary, b = diff["summary"], diff["breakdown"]
    assert summary.startswith(f"Step time {MINUS}67 % (101 \u2192 32.9 ms, significant): ")
    assert f"input wait {fmt_signed_ms(b['input']['delta_ms'])} ms" in summary
    assert f"device compute {fmt_signed_ms(b['device_compute']['delta_ms'])} ms" in summary
    assert (
        f"Device compute {MINUS}50 %: bf16 share 0 \u2192 100 %, Tensor Core share 0 \u2192 100 %." in summary
    )
    assert "Bottleneck: input pipeline \u2192 device compute." in summary
    assert f"Largest op changes per step: model/dense/MatMul:MatMul {MINUS}30.0 ms." in summary


def test_a_run_diffed_with_itself_has_no_significant_change(capsys, logdir):
    diff = diff_json(capsys, logdir, "fp32_input_bound", "fp32_input_bound", "--fail-if-slower", "0")
    assert diff["step_time"]["significant"] is False
    assert diff["step_time"]["delta_pct"] == 0.0
    assert all(v == 0.0 for v in diff["breakdown_delta_ms"].values())
    assert all(r["delta_ms"] == 0.0 and r["status"] == "changed" for r in diff["ops"] + diff["kernels"])
    assert diff["summary"].startswith("Step time unchanged (101 \u2192 101 ms, not significant")


def test_two_hosts_of_one_run(capsys, logdir):
    diff = diff_json(
        capsys, logdir, "two_hosts", "two_hosts", "--baseline-host", "host-a", "--candidate-host", "host-b"
    )
    assert (diff["baseline_hosts"], diff["candidate_hosts"]) == (["host-a"], ["host-b"])
    assert abs(diff["breakdown_delta_ms"]["device_compute"] - 6.0) <= 0.01
    assert diff["step_time"]["significant"] is True


# ---------------------------------------------------------------------------------------------------
# The regression gate


def test_gate_fails_a_significant_slowdown_beyond_the_threshold(capsys, logdir):
    base, slow = f"fp32_fast/{SESSION}", f"fp32_slower/{SESSION}"
    expected = 100 * 20 / mean_step_ms(0.8, 60)  # +20 ms of kernel on a ~61.7 ms step: +32 %
    code, out, err = run_cli(capsys, logdir, base, slow, "--fail-if-slower", "10")
    assert code == 1
    assert "regression" in err and "+32." in err and "10 %" in err
    assert f"Step time +{expected:.0f} %" in out
    code, _, err = run_cli(capsys, logdir, base, slow, "--fail-if-slower", f"{expected + 1:.1f}")
    assert code == 0 and err == ""


def test_gate_passes_a_faster_candidate(capsys, logdir):
    code, _, _ = run_cli(
        capsys, logdir, f"fp32_slower/{SESSION}", f"fp32_fast/{SESSION}", "--fail-if-slower", "0"
    )
    assert code == 0


def test_gate_does_not_fail_on_a_change_few_steps_cannot_call_but_says_why(capsys, logdir):
    """3 steps: Welch's t, which only calls a change of 50 % or more (+23 % here, steps tight)."""
    code, out, err = run_cli(
        capsys, logdir, f"fp32_fast/{SESSION}", f"few/{SESSION}", "--fail-if-slower", "5"
    )
    assert code == 0
    assert "below the 50 % change that 8 and 3 steps can tell" in err and "the gate passes" in err
    assert "Only 8 and 3 steps were profiled: a change below 50 % cannot be told" in " ".join(out.split())
    assert "test: Welch's t on log step times" in out


def test_gate_fails_a_large_slowdown_measured_on_three_steps(capsys, logdir):
    code, out, err = run_cli(
        capsys, logdir, f"fp32_fast/{SESSION}", f"few_slow/{SESSION}", "--fail-if-slower", "5"
    )
    assert code == 1 and "regression" in err
    assert "test: Welch's t on log step times" in out and "significant)" in out


def test_gate_does_not_fail_on_too_few_steps_to_test_but_says_why(capsys, logdir):
    code, out, err = run_cli(
        capsys, logdir, f"fp32_fast/{SESSION}", f"two/{SESSION}", "--fail-if-slower", "5"
    )
    assert code == 0
    assert "too few steps to test (8 and 2" in err and "the gate passes" in err
    assert "Only 8 and 2 steps were profiled: too few to test" in " ".join(out.split())


# ---------------------------------------------------------------------------------------------------
# Errors


def test_unknown_run_is_a_clear_error_listing_the_known_runs(capsys, logdir):
    code, out, err = run_cli(capsys, logdir, f"fp32_fast/{SESSION}", "nope")
    assert code == 2 and out == ""
    assert "unknown candidate run 'nope'" in err
    assert f"'fp32_input_bound/{SESSION}'" in err and f"'bf16_prefetch/{SESSION}'" in err
    assert "Traceback" not in err


def test_unknown_host_is_a_clear_error_listing_the_hosts(capsys, logdir):
    run = f"two_hosts/{SESSION}"
    code, _, err = run_cli(capsys, logdir, run, run, "--baseline-host", "host-z")
    assert code == 2
    assert "unknown baseline host 'host-z'" in err and "host-a, host-b" in err


def test_missing_logdir_is_a_clear_error(capsys, tmp_path):
    code, _, err = run_cli(capsys, tmp_path / "absent", "a", "b")
    assert code == 2 and "is not a directory" in err


def test_corrupt_profile_is_a_clear_error(capsys, tmp_path):
    path = tmp_path / "bad" / "plugins" / "profile" / SESSION / "worker.xplane.pb"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x0a\xff\xff\xff\xff\x0f not an xspace")
    run = f"bad/{SESSION}"
    code, _, err = run_cli(capsys, tmp_path, run, run)
    assert code == 2 and "worker.xplane.pb" in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------------
# Views


def test_text_view_has_every_part(capsys, logdir):
    code, out, _ = run_cli(capsys, logdir, f"fp32_input_bound/{SESSION}", f"bf16_prefetch/{SESSION}")
    assert code == 0
    assert out.startswith(f"tb-advisor diff: fp32_input_bound/{SESSION} (host worker) \u2192 bf16_prefetch/")
    for heading in (
        "Step time",
        "Breakdown per step (ms)",
        "Verdict",
        "Precision (% of compute time)",
        "Tensor Cores: 0 \u2192 100 % of device time",
        "Ops (time per step",
        "Kernels (",
    ):
        assert heading in out  # fmt: skip
    assert "input wait" in out and "significant" in out


def test_markdown_and_html_escape_profile_strings(capsys, logdir):
    xss_run = f"{XSS}/{SESSION}"
    code, md, _ = run_cli(capsys, logdir, f"fp32_fast/{SESSION}", xss_run, "--format", "md")
    assert code == 0
    assert "<img" not in md and "<b>" not in md
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in md
    code, full, _ = run_cli(capsys, logdir, f"fp32_fast/{SESSION}", xss_run, "--format", "html")
    assert code == 0
    assert full.startswith("<!DOCTYPE html>") and full.rstrip().endswith("</html>")
    page = outside_scripts(full)
    assert "<img" not in page and "<b>dense" not in page and "<script" not in page
    assert html.escape(XSS) in page
    assert "model/&lt;b&gt;dense&lt;/b&gt;/MatMul:MatMul" in page
    assert "http://" not in page and not re.search(r"<[^>]*\s(src|href)=", page)  # nothing fetched
    assert 'data-advisor-chart="delta"' in page  # drawn by the embedded bundle


def test_output_file(capsys, logdir, tmp_path):
    target = tmp_path / "diff.html"
    code, out, _ = run_cli(
        capsys, logdir, f"fp32_fast/{SESSION}", f"fp32_slower/{SESSION}", "--format", "html", "-o", target
    )
    assert code == 0 and out == ""
    assert "Step time +32 %" in target.read_text(encoding="utf-8")
