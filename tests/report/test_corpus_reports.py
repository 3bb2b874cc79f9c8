"""Every XSpace profile of the shared real-world corpus (../shared/corpus) gets a report, or a clear error.

The corpus is other people's profiles (V100 TF multi-worker, MI300/MI355 JAX, TPU v6 JAX, a corrupt
file); it is not part of the repository, so these tests skip when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import CORPUS, needs_corpus

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.views.export.render import render_html, render_markdown, render_text

XPLANES = sorted(CORPUS.rglob("*.xplane.pb")) if CORPUS.is_dir() else []
GOOD = [p for p in XPLANES if "_corrupt" not in p.parts]
CORRUPT = [p for p in XPLANES if "_corrupt" in p.parts]

pytestmark = needs_corpus


def report_for(*paths: Path):
    return build_report(
        RunProfiles(run=paths[0].parent.name, profiles=[read_xplane(p) for p in paths])
    ).to_json()


@pytest.mark.parametrize("path", GOOD, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_profile_gets_a_consistent_report(path):
    report = report_for(path)
    json.dumps(report, allow_nan=False)
    assert report["steps"]["source"] in ("root_marker", "keras3_marker", "legacy_marker", "inferred", "none")
    assert sum(report["breakdown_pct"].values()) == pytest.approx(100.0, abs=0.05)
    for step in report["steps"]["per_step"]:
        assert sum(step["breakdown_ms"].values()) == pytest.approx(step["total_ms"], abs=1e-3)
    assert report["verdict"]["summary"]
    assert report["verdict"]["bottleneck"] in (
        "input",
        "device",
        "host",
        "launch",
        "memcpy",
        "communication",
        "balanced",
        "unknown",
    )
    assert any(d["kernel_count"] for d in report["devices"]), "every corpus profile has device activity"
    for render in (render_text, render_markdown, render_html):
        assert render(report)


@pytest.mark.parametrize("path", CORRUPT, ids=lambda p: p.name)
def test_corrupt_corpus_file_is_a_profile_read_error(path):
    with pytest.raises(ProfileReadError) as caught:
        read_xplane(path)
    assert str(path) in str(caught.value)


def test_corpus_selection_is_not_empty():
    assert len(GOOD) >= 8 and CORRUPT


def test_tpu_inference_profile_is_one_step_per_jit_f_execution():
    (path,) = [p for p in GOOD if p.name == "tpu_inference_2.xplane.pb"]
    report = report_for(path)
    steps = report["steps"]
    assert (steps["source"], steps["count"]) == ("inferred", 100)
    assert "jit_f" in steps["method"]
    assert steps["median_ms"] == pytest.approx(784.0, abs=5.0)
    assert sum(1 for d in report["devices"] if d["kind"] == "tpu" and d["busy_pct"] > 99.0) == 4
    assert report["framework"] == "jax"


def test_gpu_multi_worker_run_reports_both_hosts():
    paths = sorted(p for p in GOOD if p.parent.name == "GPU-multi-worker")
    assert len(paths) == 2
    report = report_for(*paths)
    assert len(report["per_host"]) == 2
    one, two = (h["breakdown_pct"] for h in report["per_host"])
    assert one == two, "the two files hold the same bytes"
    gpus = [d for d in report["devices"] if d["kind"] == "gpu"]
    assert len(gpus) == 16 and {d["compute_capability"] for d in gpus} == {"7.0"}
    assert report["verdict"]["bottleneck"] == "device"
    assert report["framework"] == "tf"


JAX_LAUNCH_BOUND = ("jax08_attention", "jax08_elementwise", "jax08_gemm")


@pytest.mark.parametrize("name", JAX_LAUNCH_BOUND)
def test_launch_bound_jax_traces_get_the_xla_remedy_with_evidence(name):
    """TraceLens' MI300X JAX traces: a few tiny kernels per step, the GPU idle between launches."""
    (path,) = sorted((CORPUS / "tracelens" / "tests" / "traces" / "mi300" / name).glob("*.xplane.pb"))
    report = report_for(path)
    assert report["verdict"]["bottleneck"] == "launch"
    rec = next(r for r in report["recommendations"] if r["id"] == "compile.launch_bound_xla")
    assert rec["severity"] == "high"
    assert "kernels per step" in rec["evidence"] and "median" in rec["evidence"] and "idle" in rec["evidence"]
    assert "lax.scan" in rec["snippet_jax"] and "--xla_gpu_enable_command_buffer" in rec["snippet_jax"]


def test_tpu_v6e_profile_is_copy_bound_by_host_offload():
    """xprof's tpu_inference_2 (4x TPU v6 Lite): jit_f copies three f32[5,1024,1024,256] arrays (5.4 GB
    each) between host memory (memory space S(5)) and HBM every call; copy-done waits fill ~96 % of the
    device's op time, broadcast_add fusions ~3 %. Copy-bound is right; the advice must say why."""
    path = CORPUS / "xprof" / "older_01d85de" / "xprof" / "convert" / "test_xplanes"
    path = path / "tpu_inference_2.xplane.pb"
    report = report_for(path)
    assert report["verdict"]["bottleneck"] == "memcpy"
    assert report["breakdown_pct"]["memcpy"] == pytest.approx(91.2, abs=1.0)
    rec = next(r for r in report["recommendations"] if r["id"] == "device.copy_bound")
    assert rec["severity"] == "high" and "host offload" in rec["evidence"] and "S(5)" in rec["evidence"]
