"""The demo tells the profiling story through the Advisor's own outputs, and `tb-advisor demo` serves it.

Part 1 (needs TensorFlow) runs `demo/profiling_story.py --size small` once and reads every run back
through `tb-advisor report/diff --format json`: run1 input-bound, run2 not, run3's 16-bit precision
visible, and the two diffs say why. Step-time gains are not asserted: on a busy 2-core CPU a parallel
pipeline frees the critical path without always shortening the step, and bf16 is slower than fp32 on
CPUs without native bf16 (AVX512-BF16/AMX); what is asserted is what the profiles must show anyway.

Part 2 (no TensorFlow) starts `tb-advisor demo` with TensorFlow hidden from every process it starts
and checks, over HTTP, that the bundled sample tells the same story.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Dict

import pytest
import tf_profiles
from paths import ROOT

from tb_plugin_advisor.analysis.thresholds import INPUT_HIGH_PCT, INPUT_MODERATE_PCT

DEMO = ROOT / "demo" / "profiling_story.py"
SAMPLE = ROOT / "tb_plugin_advisor" / "sample_logdir"
RUNS = ("run1_naive", "run2_parallel", "run3_mixed", "run4_custom_loop")
# Keras profile_batch=(5, 10) in the small size: batches 5..10, numbered 4..9 in the profile.
KERAS_PROFILED_STEPS = list(range(4, 10))
# Mixed-precision policy -> the report's precision key and TensorFlow's DataType enum value
# (MemoryAllocation events' data_type: 1 float32, 14 bfloat16, 19 float16).
SIXTEEN_BIT = {"mixed_bfloat16": ("bf16", "14"), "mixed_float16": ("fp16", "19")}
# The PyTorch story: real H200 captures (tests/captures/h200), one directory per configuration; the
# repeats directory holds three separate `python train.py` processes, so three captures.
TORCH_SERIES = "torch_resnet50"
TORCH_RUNS = {
    "1_fp32_workers0": 1,
    "2_fp32_workers8": 1,
    "3_bf16_workers8": 1,
    "4_fp32_workers8_repeats": 3,
}
# 3.3 MB of TensorFlow profiles and 4.3 MB of gzip'd PyTorch traces: the package stays under 8 MB.
SAMPLE_BUDGET_BYTES = 8 * 1024 * 1024
# The Advisor's input share against TensorFlow's own reading of the same profile (percentage points,
# as in test_report_tf.py).
INPUT_TOLERANCE_POINTS = 1.5


def _input_class(pct: float) -> str:
    """The verdict's input_bound for a share, by the thresholds table."""
    return "high" if pct >= INPUT_HIGH_PCT else "moderate" if pct >= INPUT_MODERATE_PCT else "low"


def advisor(*argv: str) -> dict:
    """`tb-advisor ARGV --format json` in a child process, parsed."""
    proc = subprocess.run(
        [sys.executable, "-m", "tb_plugin_advisor.views.cli.main", *argv, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"tb-advisor {' '.join(argv)} failed:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def torch_traces(logdir: Path) -> Dict[str, list]:
    """PyTorch demo directory -> its trace files, checked against TORCH_RUNS."""
    out = {}
    for directory, count in TORCH_RUNS.items():
        traces = sorted((logdir / TORCH_SERIES / directory).glob("*.pt.trace.json.gz"))
        assert len(traces) == count, (directory, traces)
        out[directory] = traces
    return out


def torch_runs_served(served: set) -> Dict[str, list]:
    """PyTorch demo directory -> the run names served for it (one per capture: `dir/capture time`)."""
    grouped: Dict[str, list] = {}
    for name in sorted(served):
        if name.startswith(TORCH_SERIES + "/"):
            grouped.setdefault(name.split("/")[1], []).append(name)
    return grouped


def run_names(logdir: Path) -> Dict[str, str]:
    """Demo run -> run name as discovery names it (the session directory is a timestamp)."""
    names = {}
    for run in RUNS:
        sessions = sorted(logdir.glob(f"{run}/**/plugins/profile/*"))
        assert len(sessions) == 1, (run, sessions)
        names[run] = sessions[0].relative_to(logdir).as_posix().replace("/plugins/profile", "")
    return names


# --------------------------------------------------------------------------------------------------
# Part 1: the demo, run here


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    """Run the demo (small size) once; report every run and diff the two story steps."""
    base = tmp_path_factory.mktemp("demo")
    logdir, summary_path = base / "logs", base / "summary.json"
    command = [sys.executable, str(DEMO), "--logdir", str(logdir), "--size", "small"]
    proc = subprocess.run(
        [*command, "--summary-json", str(summary_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    names = run_names(logdir)
    reports = {run: advisor("report", str(logdir), "--run", names[run]) for run in RUNS}
    diffs = {
        "run1_to_run2": advisor("diff", str(logdir), names["run1_naive"], names["run2_parallel"]),
        "run2_to_run3": advisor("diff", str(logdir), names["run2_parallel"], names["run3_mixed"]),
    }
    summary = json.loads(summary_path.read_text())
    print(proc.stdout)  # the demo's own timings, for the log
    for key, diff in diffs.items():
        print(f"{key}: {diff['summary']}")
    return {"logdir": logdir, "names": names, "reports": reports, "diffs": diffs, "summary": summary}


def _sixteen_bit(story) -> tuple:
    return SIXTEEN_BIT[story["summary"]["runs"]["run3_mixed"]["policy"]]


@pytest.fixture(scope="module")
def xplane_facts(story) -> Dict[str, dict]:
    """Each run's profile read with TensorFlow's own xplane proto (tests/tf_profiles.py `inspect`):
    the oracle the Advisor's reading is checked against, e.g. the union of IteratorGetNext time
    inside the step markers (`input_wait_pct`) and the allocation dtypes."""
    logdir = story["logdir"]
    paths = {run: next((logdir / run).rglob("*.xplane.pb")) for run in RUNS}
    proc = subprocess.run(
        [sys.executable, tf_profiles.__file__, "inspect", *map(str, paths.values())],
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    facts = json.loads(proc.stdout)
    return {run: facts[str(path)] for run, path in paths.items()}


@pytest.mark.needs_tensorflow
def test_demo_writes_the_documented_layout(story):
    logdir, names = story["logdir"], story["names"]
    for run in ("run1_naive", "run2_parallel", "run3_mixed"):
        assert names[run].startswith(f"{run}/train/")
        assert list((logdir / run / "train").glob("events.out.tfevents.*")), run
    assert re.fullmatch(r"run4_custom_loop/\d{4}(_\d{2}){5}", names["run4_custom_loop"])
    assert not [p for p in (logdir / "run4_custom_loop").rglob("*") if "tfevents" in p.name]
    runs = story["summary"]["runs"]
    assert [runs[run]["policy"] for run in RUNS][:2] == ["float32", "float32"]
    assert runs["run3_mixed"]["policy"] in SIXTEEN_BIT
    assert all(runs[run]["profiled_steps"] == KERAS_PROFILED_STEPS for run in RUNS[:3])
    loop_steps = runs["run4_custom_loop"]["profiled_steps"]
    assert len(loop_steps) == 6 and loop_steps == list(range(loop_steps[0], loop_steps[0] + 6))
    assert all(len(runs[run]["profiled_step_ms"]) == 6 for run in RUNS)


@pytest.mark.needs_tensorflow
def test_every_run_yields_its_profiled_steps(story):
    for run in RUNS:
        steps = story["reports"][run]["steps"]
        expected_source = "root_marker" if run == "run4_custom_loop" else "keras3_marker"
        assert steps["source"] == expected_source, run
        assert steps["numbers"] == story["summary"]["runs"][run]["profiled_steps"], run
        assert steps["count"] == 6, run


@pytest.mark.needs_tensorflow
def test_run1_naive_is_input_bound_in_its_map_stage(story, xplane_facts):
    report = story["reports"]["run1_naive"]
    verdict = report["verdict"]
    assert verdict["input_bound"] == "high", verdict
    assert verdict["bottleneck"] == "input", verdict
    assert verdict["input_pct"] >= 20.0
    oracle = xplane_facts["run1_naive"]["input_wait_pct"]
    assert abs(verdict["input_pct"] - oracle) <= INPUT_TOLERANCE_POINTS, (verdict, oracle)
    pipeline = report["input_pipeline"]
    assert pipeline["dominant_stage"] == "map"
    assert pipeline["parallelism"] == 1 and pipeline["prefetch"] is False and pipeline["autotune"] is False
    ids = {rec["id"] for rec in report["recommendations"]}
    assert {"input.parallel_map", "input.prefetch"} <= ids, ids


@pytest.mark.needs_tensorflow
def test_run2_parallel_is_not_input_bound(story, xplane_facts):
    """The parallel map and prefetch cut run1's wait to a fraction. How small depends on the CPU: ~0.3 %
    here in the morning, 7.8 % ("moderate") once on a slower afternoon; never the bottleneck."""
    report = story["reports"]["run2_parallel"]
    assert report["verdict"]["input_bound"] != "high", report["verdict"]
    assert report["verdict"]["bottleneck"] != "input", report["verdict"]
    assert report["verdict"]["input_pct"] <= story["reports"]["run1_naive"]["verdict"]["input_pct"] / 3
    oracle = xplane_facts["run2_parallel"]["input_wait_pct"]
    assert abs(report["verdict"]["input_pct"] - oracle) <= INPUT_TOLERANCE_POINTS, (report["verdict"], oracle)
    assert report["input_pipeline"]["prefetch"] is True and report["input_pipeline"]["autotune"] is True
    ids = {rec["id"] for rec in report["recommendations"]}
    assert not ids & {"input.parallel_map", "input.prefetch"}, ids


@pytest.mark.needs_tensorflow
def test_run4_custom_loop_input_share_is_what_its_get_next_waits_show(story, xplane_facts):
    """Same pipeline as run2, but `next(iterator)` runs eagerly inside each short (batch 8) step.
    How long it waits depends on the CPU: a few percent on a fast one, and on a slower one the
    prefetch buffer's refill stalls a step now and then (12.6 % was seen on a CI machine). What the
    profile shows is not machine-dependent: the report's input share is the get-next waits that
    TensorFlow's own proto reading finds inside the step markers, classed by the thresholds table,
    and a pipeline that already maps in parallel and prefetches is not told to do either."""
    report = story["reports"]["run4_custom_loop"]
    verdict = report["verdict"]
    oracle = xplane_facts["run4_custom_loop"]["input_wait_pct"]
    print("run4 input wait: advisor", verdict["input_pct"], "oracle", oracle)
    assert abs(verdict["input_pct"] - oracle) <= INPUT_TOLERANCE_POINTS, (verdict, oracle)
    assert verdict["input_bound"] == _input_class(verdict["input_pct"]), verdict
    if min(abs(oracle - INPUT_HIGH_PCT), abs(oracle - INPUT_MODERATE_PCT)) > INPUT_TOLERANCE_POINTS:
        assert verdict["input_bound"] == _input_class(oracle), (verdict, oracle)
    pipeline = report["input_pipeline"]
    assert pipeline["prefetch"] is True and pipeline["autotune"] is True and pipeline["parallelism"] >= 2
    ids = {rec["id"] for rec in report["recommendations"]}
    assert not ids & {"input.parallel_map", "input.prefetch"}, ids


@pytest.mark.needs_tensorflow
def test_run3_mixed_precision_is_visible_and_run2_has_none(story):
    key, _ = _sixteen_bit(story)
    run3, run2 = story["reports"]["run3_mixed"], story["reports"]["run2_parallel"]
    assert run3["precision_pct"][key] >= 50.0, run3["precision_pct"]
    assert run3["precision"]["verdict"] == "active", run3["precision"]
    assert run2["precision_pct"][key] <= 1.0, run2["precision_pct"]
    assert run2["precision"]["verdict"] == "not_active", run2["precision"]


@pytest.mark.needs_tensorflow
def test_run3_profile_records_16bit_allocations(story, xplane_facts):
    """The evidence itself, read with TensorFlow's own xplane proto: allocation dtypes per run."""
    _, dtype = _sixteen_bit(story)
    run3_types = xplane_facts["run3_mixed"]["memory_allocation_data_types"]
    run2_types = xplane_facts["run2_parallel"]["memory_allocation_data_types"]
    print("allocation data types: run2", run2_types, "run3", run3_types)
    assert run3_types.get(dtype, 0) >= 10, run3_types
    assert run2_types.get("1", 0) >= 10 and dtype not in run2_types, run2_types


@pytest.mark.needs_tensorflow
def test_diff_run1_to_run2_says_the_input_wait_is_gone(story):
    diff = story["diffs"]["run1_to_run2"]
    before = story["reports"]["run1_naive"]["breakdown_ms"]["input"]
    assert diff["breakdown_delta_ms"]["input"] <= -0.8 * before, (diff["breakdown_delta_ms"], before)
    assert diff["breakdown"]["input"]["significant"] is True
    assert diff["verdict"]["baseline"]["bottleneck"] == "input"
    assert diff["verdict"]["candidate"]["bottleneck"] != "input"
    summary = diff["summary"].lower()
    assert "input" in summary and "critical path" in summary, diff["summary"]


@pytest.mark.needs_tensorflow
def test_diff_run2_to_run3_says_the_precision_changed(story):
    key, _ = _sixteen_bit(story)
    diff = story["diffs"]["run2_to_run3"]
    assert diff["precision_delta_pct"][key] >= 50.0, diff["precision_delta_pct"]
    assert key in diff["summary"], diff["summary"]
    if diff["step_time"]["significant"]:
        # The explanation names the category that moved most (host or device compute here).
        moved = max(diff["breakdown_delta_ms"], key=lambda cat: abs(diff["breakdown_delta_ms"][cat]))
        assert moved.replace("_", " ") in diff["summary"], (moved, diff["summary"])


# --------------------------------------------------------------------------------------------------
# Part 2: `tb-advisor demo` on the bundled sample, TensorFlow hidden


def test_bundled_sample_is_small_and_complete():
    files = [p for p in SAMPLE.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) <= SAMPLE_BUDGET_BYTES
    assert run_names(SAMPLE).keys() == set(RUNS)
    assert torch_traces(SAMPLE).keys() == TORCH_RUNS.keys()
    assert not [p for p in files if p.name.startswith(".") or "profile-empty" in p.name or "cache" in p.name]


def test_demo_logdir_only_copies_the_sample_outside_the_package():
    proc = subprocess.run(
        [sys.executable, "-m", "tb_plugin_advisor.views.cli.main", "demo", "--logdir-only"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    copy = Path(proc.stdout.strip())
    try:
        assert copy.is_dir() and SAMPLE not in copy.parents and copy != SAMPLE
        original = {p.relative_to(SAMPLE): p.read_bytes() for p in SAMPLE.rglob("*") if p.is_file()}
        copied = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
        assert copied == original
    finally:
        subprocess.run(["rm", "-rf", str(copy.parent)], check=False)


def test_demo_refuses_clearly_when_the_sample_is_missing(tmp_path, monkeypatch):
    from tb_plugin_advisor.errors import AdvisorError
    from tb_plugin_advisor.views.cli.commands import demo

    monkeypatch.setattr(demo, "SAMPLE", tmp_path / "sample_logdir")
    with pytest.raises(AdvisorError, match="sample logdir is missing or empty"):
        demo.copy_sample()


def _get_json(url: str, timeout_s: float = 120.0):
    """GET a JSON route, polling while the Advisor answers 202 (analysis running)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=60) as reply:
                status, body = reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            status, body = error.code, json.loads(error.read() or b"{}")
        if status != 202:
            return status, body
        assert time.monotonic() < deadline, f"{url} still 202 after {timeout_s} s"
        time.sleep(0.5)


@pytest.fixture
def tensorflow_hidden(tmp_path) -> Dict[str, str]:
    """An environment in which `import tensorflow` fails in every process, as on a machine without it."""
    fake = tmp_path / "no_tensorflow" / "tensorflow"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("TensorFlow is hidden for this test")\n')
    path = os.pathsep.join(filter(None, [str(fake.parent), os.environ.get("PYTHONPATH", "")]))
    return dict(os.environ, PYTHONPATH=path)


def test_tb_advisor_demo_serves_the_sample_story_without_tensorflow(tensorflow_hidden):
    server = subprocess.Popen(
        [sys.executable, "-m", "tb_plugin_advisor.views.cli.main", "demo", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=tensorflow_hidden,
    )
    seen = []
    try:
        copy, port = None, None
        deadline = time.monotonic() + 120
        while port is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            seen.append(line)
            if match := re.search(r"sample logdir: (\S+)", line):
                copy = Path(match.group(1))
            if match := re.search(r"Open http://localhost:(\d+)/#advisor", line):
                port = int(match.group(1))
        assert port and copy, "".join(seen)
        # Keep reading the server's output so that a chatty server never blocks on a full pipe.
        drain = threading.Thread(target=lambda: seen.extend(server.stdout), daemon=True)
        drain.start()
        assert copy.is_dir() and SAMPLE not in copy.parents
        base = f"http://127.0.0.1:{port}"
        status, listing = _get_json(f"{base}/data/plugins_listing")
        assert status == 200 and listing["advisor"]["enabled"] is True
        status, runs = _get_json(f"{base}/data/plugin/advisor/runs")
        assert status == 200
        served = {entry["run"] for entry in runs["runs"]}
        torch = torch_runs_served(served)
        assert served - {n for names in torch.values() for n in names} == set(run_names(SAMPLE).values())
        assert {directory: len(names) for directory, names in torch.items()} == TORCH_RUNS, served

        def report(run: str) -> dict:
            name = run_names(SAMPLE)[run]
            status, body = _get_json(f"{base}/data/plugin/advisor/report?run={urllib.parse.quote(name)}")
            assert status == 200, body
            return body

        assert report("run1_naive")["verdict"]["input_bound"] == "high"
        assert report("run2_parallel")["verdict"]["input_bound"] == "low"
        assert report("run3_mixed")["precision_pct"]["bf16"] >= 50.0
        assert report("run4_custom_loop")["steps"]["source"] == "root_marker"

        # The PyTorch story: the DataLoader fix, then bf16, then same-config repeats as one series.
        def torch_report(directory: str) -> dict:
            status, body = _get_json(
                f"{base}/data/plugin/advisor/report?run={urllib.parse.quote(torch[directory][0])}")
            assert status == 200, body
            return body

        before, after = torch_report("1_fp32_workers0"), torch_report("2_fp32_workers8")
        assert before["framework"] == "pytorch" and before["verdict"]["bottleneck"] == "input"
        assert "input.dataloader_workers" in {rec["id"] for rec in before["recommendations"]}
        assert after["verdict"]["bottleneck"] != "input"
        assert torch_report("3_bf16_workers8")["precision_pct"]["bf16"] >= 50.0
        status, trend = _get_json(f"{base}/data/plugin/advisor/trend?run={TORCH_SERIES}/*")
        assert status == 200, trend
        (series,) = trend["series"]
        assert len(series["captures"]) == sum(TORCH_RUNS.values())
        (change,) = series["change_points"]
        assert change["run"] == torch["2_fp32_workers8"][0] and "DataLoader" in json.dumps(change), change
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    time.sleep(0.2)  # let the drain thread take the last lines
    log = "".join(seen)
    assert server.returncode == 0, log
    assert "TensorFlow installation not found" in log  # TensorBoard itself ran without TensorFlow
    assert not copy.parent.exists(), "the demo must remove its copy of the sample when it stops"
