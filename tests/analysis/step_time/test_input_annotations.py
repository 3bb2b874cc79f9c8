"""The user's own input annotations (input_pipeline.kind "annotations") and the JAX advice that reads
them: the H200 JAX capture whose step spends ~99 % in a `TraceAnnotation("input")` gets the panel
and `input.background_prefetch`; runs fed by tf.data or a DataLoader do not."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import numpy as np
import pytest
from paths import H200, SAMPLE_LOGDIR
from synth_kineto import BASE_NS, training_trace

from tb_plugin_advisor.model import Profile, RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.views.export.render import render

SAMPLE = SAMPLE_LOGDIR


def xplane(run_dir: Path) -> Profile:
    (path,) = sorted(run_dir.rglob("*.xplane.pb"))
    return read_xplane(str(path))


def report_of(profile: Profile, run: str) -> Dict[str, Any]:
    return build_report(RunProfiles(run=run, profiles=[profile])).to_json()


def raw_input_ms_per_step(profile: Profile, report: Dict[str, Any]) -> float:
    """Σ of the `input` ranges on the python thread inside the steady steps, straight from the lines."""
    steps = [(m.start_ns, m.end_ns) for m in profile.step_markers
             if m.step_num in {s["step"] for s in report["steps"]["per_step"] if not s["warmup"]}]
    total = 0
    for line in profile.host_plane.lines:
        for i in np.flatnonzero(line.name_mask(lambda n: n == "input")).tolist():
            if any(a <= int(line.start_ns[i]) < b for a, b in steps):
                total += int(line.duration_ns[i])
    return total / 1e6 / len(steps)


def test_the_slow_jax_input_is_shown_and_gets_jax_advice():
    profile = xplane(H200 / "jax_mlp_slow_input")
    report = report_of(profile, "jax_mlp_slow_input")
    pipeline = report["input_pipeline"]
    assert report["framework"] == "jax" and pipeline["kind"] == "annotations"
    a = pipeline["annotations"]
    assert a["names"][0]["name"] == "input" and a["names"][0]["calls_per_step"] == 1
    assert a["wait_ms_per_step"] == pytest.approx(raw_input_ms_per_step(profile, report), rel=1e-6)
    assert a["wait_pct"] == pytest.approx(report["breakdown_pct"]["input"], abs=1.0)
    assert a["wait_pct"] > 95
    assert a["inside"][0]["name"].endswith("host_batch")  # the Python tracer's frame of the input code
    advice = {r["id"]: r for r in report["recommendations"]}
    fix = advice["input.background_prefetch"]
    assert fix["severity"] == "high" and report["recommendations"][0]["id"] == "input.background_prefetch"
    assert "'input'" in fix["evidence"] and "host_batch" in fix["evidence"]
    for words in ("prefetch_to_device", "threading", "grain", "jitted step"):
        assert words in fix["snippet_jax"], words
    assert "prefetch(tf.data.AUTOTUNE)" in fix["snippet"]
    assert "jitted step" in fix["message"]
    text = render(report, "text")
    assert "Input pipeline · your input annotations:" in text and "'input' 140 ms" in text


def test_the_fast_jax_input_waits_a_fraction_of_the_slow_one():
    slow = report_of(xplane(H200 / "jax_mlp_slow_input"), "slow")["input_pipeline"]["annotations"]
    fast = report_of(xplane(H200 / "jax_mlp"), "fast")["input_pipeline"]["annotations"]
    assert fast["wait_ms_per_step"] < slow["wait_ms_per_step"] / 5


@pytest.mark.parametrize("run", ["run1_naive", "run2_parallel"])
def test_tf_data_runs_keep_their_card_and_get_no_annotation_advice(run):
    report = report_of(xplane(SAMPLE / run), run)
    assert report["input_pipeline"]["kind"] == "tf.data"
    assert report["input_pipeline"]["annotations"] is None and report["input_pipeline"]["dataloader"] is None
    assert "input.background_prefetch" not in {r["id"] for r in report["recommendations"]}


# ---------------------------------------------------------------------------------------------------
# PyTorch loops without a DataLoader (synthetic: exact durations)

STEP = 10_000_000
FIRST = BASE_NS + 1_000_000_000


def pytorch_without_dataloader(tmp_path: Path, name: str) -> Dict[str, Any]:
    """training_trace with its DataLoader range renamed `load_batch` (a record_function)."""
    trace = training_trace(steps=4, step_ns=STEP)
    for event in trace.events:
        if str(event.get("name", "")).startswith("enumerate(DataLoader)"):
            event["name"] = name
    path = trace.write(tmp_path / "run" / "w.1.pt.trace.json")
    return build_report(RunProfiles(run="run", profiles=[read_kineto(str(path))])).to_json()


def test_a_pytorch_record_function_is_the_annotations_panel_and_the_dataloader_rule_says_so(tmp_path):
    report = pytorch_without_dataloader(tmp_path, "load_batch")
    pipeline = report["input_pipeline"]
    assert pipeline["kind"] == "annotations" and pipeline["dataloader"] is None
    assert pipeline["annotations"]["wait_ms_per_step"] == pytest.approx(2.0)
    assert pipeline["annotations"]["wait_pct"] == pytest.approx(20.0, abs=0.01)
    advice = {r["id"]: r for r in report["recommendations"]}
    assert "input.background_prefetch" not in advice  # PyTorch: the DataLoader advice instead
    assert "inside its annotation 'load_batch'" in advice["input.dataloader_workers"]["evidence"]


def test_an_annotation_around_whole_steps_is_not_the_input(tmp_path):
    trace = training_trace(steps=4, step_ns=STEP)
    trace.events = [e for e in trace.events if not str(e.get("name", "")).startswith("enumerate(DataLoader)")]
    trace.annotation("load_and_train", FIRST, 4 * STEP)  # starts inside the first step
    path = trace.write(tmp_path / "run" / "w.1.pt.trace.json")
    report = build_report(RunProfiles(run="run", profiles=[read_kineto(str(path))])).to_json()
    assert report["input_pipeline"]["kind"] == "none" and report["input_pipeline"]["annotations"] is None
