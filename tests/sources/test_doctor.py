"""doctor and fix-logdir: every finding in FINDINGS is produced by a profile made for it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

import pytest
from paths import CORPUS, needs_corpus
from synth import XSpaceBuilder
from synth_kineto import BASE_NS, KinetoTrace, training_trace

from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.doctor import diagnose as doctor
from tb_plugin_advisor.sources.doctor.findings import FINDINGS
from tb_plugin_advisor.sources.doctor.results import DoctorReport
from tb_plugin_advisor.views.cli import main as cli

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000


def host_profile(markers: str = "root", steps: int = 4, hostname: str = "h") -> XSpaceBuilder:
    """A host plane whose steps are marked the way `markers` says (root | keras3 | legacy | iter | none)."""
    b = XSpaceBuilder(hostnames=[hostname])
    line = b.plane("/host:CPU").line("python", id=1)
    for i in range(steps):
        start = T0 + i * 100 * MS
        if markers == "root":
            line.event("train", start, 90 * MS, stats={"step_num": i, "_r": 1})
        elif markers == "keras3":  # as TF 2.21 writes it: TF's FunctionRun roots carry _r=1 too
            line.event("Profiled batch", start, 90 * MS, stats={"step_num": i})
            line.event("FunctionRun", start + MS, 80 * MS, stats={"id": 1000 + i, "_r": 1})
        elif markers == "legacy":
            line.event("TraceContext", start, 90 * MS, stats={"step_num": i, "graph_type": "train"})
        elif markers == "iter":
            line.event("ExecutorState::Process", start, 90 * MS, stats={"iter_num": i})
        else:
            line.event("some_function", start, 90 * MS)
    return b


def add_gpus(b: XSpaceBuilder, with_kernels: int, without: int, vendor: str = "Nvidia") -> XSpaceBuilder:
    for ordinal in range(with_kernels + without):
        plane = b.gpu_plane(ordinal, vendor=vendor)
        if ordinal < with_kernels:
            stream = plane.line("Stream #7(Kernel)", id=7)
            stream.kernel("ampere_sgemm_128x64_tn", T0 + 5 * MS, 2 * MS, tf_op="model/dense/MatMul:MatMul")
    return b


def session(root: Path, run_dir: str, name: str, events: bool = True) -> Path:
    base = root / run_dir if run_dir else root
    path = base / "plugins" / "profile" / name
    path.mkdir(parents=True)
    if events:
        (base / "events.out.tfevents.1.h.v2").write_bytes(b"")
    return path


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    host_profile("root").write(session(root, "good", "s") / "h.xplane.pb")
    host_profile("keras3").write(session(root, "keras", "s") / "h.xplane.pb")
    host_profile("legacy").write(session(root, "tfkeras", "s") / "h.xplane.pb")
    host_profile("none").write(session(root, "nomarkers", "s") / "h.xplane.pb")
    host_profile("iter").write(session(root, "tf1", "s") / "h.xplane.pb")
    mixed = session(root, "multihost", "s")
    host_profile("root", hostname="a").write(mixed / "a.xplane.pb")
    host_profile("keras3", hostname="b").write(mixed / "b.xplane.pb")
    add_gpus(host_profile("root"), 0, 2).write(session(root, "nocupti", "s") / "h.xplane.pb")
    add_gpus(host_profile("root"), 0, 1, vendor="AMD").write(session(root, "rocm", "s") / "h.xplane.pb")
    add_gpus(host_profile("root"), 1, 3).write(session(root, "idle", "s") / "h.xplane.pb")
    privileges = add_gpus(host_profile("root"), 0, 1)
    privileges.error("cuptiActivityEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")
    privileges.write(session(root, "privileges", "s") / "h.xplane.pb")
    cupti = add_gpus(host_profile("root"), 0, 1)
    cupti.error("cuptiSubscribe: error 15: CUPTI_ERROR_NOT_INITIALIZED")
    cupti.write(session(root, "cuptierr", "s") / "h.xplane.pb")
    other = host_profile("root").error("profiler session was stopped early")
    other.write(session(root, "profilererr", "s") / "h.xplane.pb")
    (session(root, "corrupt", "s") / "h.xplane.pb").write_bytes(b"\xff\xfe this is not an XSpace \x00\x01")
    host_profile("root").write(session(root, "", "rootsession", events=False) / "h.xplane.pb")
    legacy = session(root, "old", "s")
    (legacy / "10.0.0.1.overview_page.pb").write_bytes(b"o" * 10)
    session(root, "empty", "s")
    host_profile("root").write(root / "stray" / "w 1.xplane.pb")
    add_torch_runs(root)
    return root


def add_torch_runs(root: Path) -> None:
    """PyTorch runs, each in a directory TensorBoard lists (an events file), made for one finding."""

    def run_dir(name: str) -> Path:
        path = root / "torch" / name
        path.mkdir(parents=True)
        (path / "events.out.tfevents.1.h.v2").write_bytes(b"")
        return path

    training_trace(steps=3).write(run_dir("good") / "w_1.1700000001000.pt.trace.json.gz")
    cpu_only = KinetoTrace(devices=[])
    for n in range(3):
        cpu_only.step(n + 1, BASE_NS + n * 10 * MS, 9 * MS)
        cpu_only.op("aten::mm", BASE_NS + n * 10 * MS + MS, 5 * MS)
    cpu_only.write(run_dir("cpu") / "w_1.1700000001000.pt.trace.json")
    empty = KinetoTrace()  # only the process/thread names: nothing was recorded
    empty.write(run_dir("empty") / "w_1.1700000001000.pt.trace.json")
    no_cuda = KinetoTrace()  # the GPU is listed and launches happen, but CUDA activity was not asked for
    no_cuda.step(1, BASE_NS, 9 * MS)
    no_cuda.complete("cuda_runtime", "cudaLaunchKernel", BASE_NS + MS, 10_000, args={"correlation": 1})
    no_cuda.write(run_dir("nocuda") / "w_1.1700000001000.pt.trace.json")
    no_steps = KinetoTrace()
    no_steps.op("aten::mm", BASE_NS, MS)
    no_steps.launch("gemm", BASE_NS + 10_000, 5_000, BASE_NS + 20_000, 500_000)
    no_steps.write(run_dir("nosteps") / "w_1.1700000001000.pt.trace.json")
    training_trace(steps=2).write(root / "torchexport" / "trace.json")  # prof.export_chrome_trace


def by_run(report: DoctorReport) -> Dict[str, dict]:
    return {s["run"]: s for s in report.to_json()["sessions"]}


EXPECTED: Dict[str, List[str]] = {
    "good/s": [],
    "keras/s": ["keras3_markers_only"],
    "tfkeras/s": [],
    "nomarkers/s": ["no_step_markers"],
    "tf1/s": ["loop_steps"],
    "multihost/s": ["keras3_markers_only"],
    "nocupti/s": ["no_kernels"],
    "rocm/s": ["no_kernels_amd"],
    "idle/s": ["idle_gpus"],
    "privileges/s": ["cupti_privileges"],
    "cuptierr/s": ["cupti_error", "no_kernels"],
    "profilererr/s": ["profiler_errors"],
    "corrupt/s": ["corrupt"],
    "rootsession": ["not_visible"],
    "old/s": ["legacy_format"],
    "empty/s": ["empty_session"],
    "stray": ["loose_file"],
    "torch/good/2023_11_14_22_13_21.000": [],
    "torch/cpu/2023_11_14_22_13_21.000": [],
    "torch/empty/2023_11_14_22_13_21.000": ["torch_empty_trace"],
    "torch/nocuda/2023_11_14_22_13_21.000": ["torch_no_gpu_events"],
    "torch/nosteps/2023_11_14_22_13_21.000": ["torch_no_profiler_steps"],
    "torchexport": ["torch_outside_handler"],
}


def test_each_session_gets_exactly_its_findings(logdir: Path):
    sessions = by_run(doctor.diagnose(str(logdir)))
    assert {run: s["findings"] for run, s in sessions.items()} == EXPECTED


def test_every_finding_in_the_table_is_exercised():
    assert {f for findings in EXPECTED.values() for f in findings} == set(FINDINGS)


# Findings that leave the Advisor's view whole (only TensorBoard's run list or Profile tab suffers).
PROFILE_TAB_ONLY = {"not_visible", "keras3_markers_only", "no_step_markers", "torch_no_profiler_steps"}


def test_session_severity_is_calm_when_only_the_profile_tab_is_affected(logdir: Path):
    assert {k for k, f in FINDINGS.items() if f.profile_tab_only} == PROFILE_TAB_ONLY
    for run, session in by_run(doctor.diagnose(str(logdir))).items():
        problems = [f for f in session["findings"] if FINDINGS[f].is_problem]
        expected = "ok" if not problems else "tip" if set(problems) <= PROFILE_TAB_ONLY else "problem"
        assert session["severity"] == expected, run
    sessions = by_run(doctor.diagnose(str(logdir)))
    assert sessions["keras/s"]["severity"] == "tip" and sessions["corrupt/s"]["severity"] == "problem"
    assert sessions["idle/s"]["severity"] == "ok"  # a note, not a problem


def test_session_fields(logdir: Path):
    sessions = by_run(doctor.diagnose(str(logdir)))
    good = sessions["good/s"]
    assert good["format"] == "xplane" and good["hosts"] == ["h"]
    assert good["problems"] == [] and good["fix"] == ""
    assert good["visible_in_tensorboard_runs"] is True and good["has_marker"] is False
    assert good["step_markers"] == "root_marker" and good["step_count"] == 4
    assert sessions["keras/s"]["step_markers"] == "keras3_marker"
    assert sessions["tfkeras/s"]["step_markers"] == "legacy_marker"
    assert sessions["nomarkers/s"]["step_markers"] == "none"
    assert sessions["corrupt/s"]["step_markers"] == "unknown"
    assert sessions["old/s"]["step_markers"] == "unknown" and sessions["old/s"]["format"] == "legacy"
    assert sessions["nocupti/s"]["devices"] == "2x GPU (NVIDIA A100-SXM4-40GB)"
    assert sessions["good/s"]["devices"] == "CPU only"
    assert sessions["stray"]["layout"] == "loose"
    assert sessions["stray"]["visible_in_tensorboard_runs"] is False
    root = sessions["rootsession"]
    assert root["visible_in_tensorboard_runs"] is False and root["has_marker"] is False


def test_messages_and_fixes_say_what_to_do(logdir: Path):
    sessions = by_run(doctor.diagnose(str(logdir)))
    assert "zero steps" in sessions["keras/s"]["problems"][0]
    assert "_r=1" in sessions["keras/s"]["fix"]
    # Only host b of the multi-host run is Keras-only; the message names it.
    assert "(hosts: b)" in sessions["multihost/s"]["problems"][0]
    assert sessions["multihost/s"]["step_markers"] == "root_marker"
    assert 'Trace("train", step_num=step, _r=1)' in sessions["nomarkers/s"]["fix"]
    assert "CUPTI" in sessions["nocupti/s"]["problems"][0]
    assert "LD_LIBRARY_PATH" in sessions["nocupti/s"]["fix"]
    assert "NVreg_RestrictProfilingToAdminUsers=0" in sessions["privileges/s"]["fix"]
    assert "CUPTI_ERROR_NOT_INITIALIZED" in sessions["cuptierr/s"]["problems"][0]
    assert "ROCm" in sessions["rocm/s"]["fix"]
    assert sessions["idle/s"]["problems"] == []
    assert sessions["idle/s"]["notes"] == ["3 of 4 GPUs recorded no activity"]
    assert sessions["corrupt/s"]["problems"][0].startswith("h.xplane.pb cannot be read: ")
    assert sessions["rootsession"]["fix"] == f"tb-advisor fix-logdir {logdir}"
    assert "xplane.pb" in sessions["old/s"]["problems"][0]
    stray_fix = sessions["stray"]["fix"]
    assert re.fullmatch(
        rf"\(cd {re.escape(str(logdir / 'stray'))} && mkdir -p plugins/profile/\d{{4}}(_\d\d){{5}} && mv "
        r"'w 1\.xplane\.pb' plugins/profile/\S+/\)",
        stray_fix,
    ), stray_fix


def test_doctor_json_schema_and_exit_code(logdir: Path, capsys):
    assert cli.main(["doctor", str(logdir), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "tb-advisor/doctor/1" and data["ok"] is False
    required = {"run", "path", "hosts", "format", "visible_in_tensorboard_runs", "has_marker", "step_markers",
                "problems", "fix"}  # fmt: skip
    for entry in data["sessions"]:
        assert required <= set(entry)
        assert entry["framework"] == ("pytorch" if entry["format"] == "kineto" else
                                      "tensorflow" if entry["format"] == "legacy" else None)
        assert entry["format"] in ("xplane", "legacy", "kineto", "unknown")
        assert entry["step_markers"] in (
            "root_marker", "keras3_marker", "legacy_marker", "profiler_step", "none", "unknown")
    assert data["summary"] == {
        "sessions": 21,
        "loose": 2,
        "with_problems": 17,
        "by_format": {"xplane": 15, "legacy": 1, "unknown": 1, "kineto": 6},
    }


def test_doctor_text_has_a_line_per_session_and_prints_code_once(logdir: Path, capsys):
    assert cli.main(["doctor", str(logdir)]) == 1
    out = capsys.readouterr().out
    for run in EXPECTED:
        assert re.search(rf"^(ok|!!) {re.escape(run)}  \[", out, re.M), run
    assert out.count('with tf.profiler.experimental.Trace("train", step_num=step, _r=1):') == 1
    assert "21 session(s), 2 loose profile director(ies)" in out


def test_healthy_logdir_exits_zero(tmp_path: Path, capsys):
    host_profile("root").write(session(tmp_path, "run", "s") / "h.xplane.pb")
    assert cli.main(["doctor", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ok run/s  [xplane, 1 host" in out and "All good." in out


def test_empty_and_missing_logdirs(tmp_path: Path, capsys):
    assert cli.main(["doctor", str(tmp_path)]) == 1
    assert "no profile sessions under" in capsys.readouterr().out
    assert cli.main(["doctor", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    profile = tmp_path / "host.xplane.pb"  # a profile given where a folder is read
    profile.write_bytes(b"")
    assert cli.main(["doctor", str(profile)]) == 2
    assert "is a profile file, and this command reads a folder: give the folder it lies in" in \
        capsys.readouterr().err


def test_fix_logdir_dry_run_then_write(logdir: Path, capsys):
    before = sorted(p for p in logdir.rglob("*"))
    assert cli.main(["fix-logdir", str(logdir), "--dry-run"]) == 0
    out = capsys.readouterr().out
    marker = r"events\.out\.tfevents\.\d+\.\S+\.profile-empty"
    assert re.search(rf"would write {re.escape(str(logdir))}/{marker}", out)
    assert "1 directory holds .xplane.pb files outside plugins/profile" in out
    assert sorted(p for p in logdir.rglob("*")) == before

    assert cli.main(["fix-logdir", str(logdir)]) == 0
    out = capsys.readouterr().out
    written = re.findall(r"^wrote (\S+)", out, re.M)
    assert len(written) == 1 and Path(written[0]).parent == logdir
    assert sorted(p for p in logdir.rglob("*")) == sorted(before + [Path(written[0])])
    sessions = by_run(doctor.diagnose(str(logdir)))
    assert sessions["rootsession"]["findings"] == []
    assert sessions["rootsession"]["visible_in_tensorboard_runs"] and sessions["rootsession"]["has_marker"]

    assert cli.main(["fix-logdir", str(logdir)]) == 0
    assert "Nothing to do" in capsys.readouterr().out


def test_memo_reads_each_unchanged_file_once(logdir: Path):
    from tb_plugin_advisor.readers.xplane.reader import read_xplane

    reads = []

    def counting_read(path):
        reads.append(path)
        return read_xplane(path)

    memo: dict = {}
    first = doctor.diagnose_scan(scan_logdir(str(logdir)), readers={"xplane": counting_read}, memo=memo)
    count = len(reads)
    assert count == 16  # every xplane host file once (the stray one included)
    host_profile("keras3").write(logdir / "good/plugins/profile/s/h.xplane.pb")  # rewritten: new key
    second = doctor.diagnose_scan(scan_logdir(str(logdir)), readers={"xplane": counting_read}, memo=memo)
    assert reads[count:] == [str(logdir / "good/plugins/profile/s/h.xplane.pb")]
    assert by_run(first)["good/s"]["findings"] == []
    assert by_run(second)["good/s"]["findings"] == ["keras3_markers_only"]


def test_diagnose_scan_uses_the_given_scan(logdir: Path):
    scan = scan_logdir(str(logdir))
    report = doctor.diagnose_scan(scan)
    expected = [s.run for s in scan.sessions] + ["stray", "torchexport"]
    assert [r.session.run for r in report.sessions] == expected


@pytest.mark.sweep
@needs_corpus
def test_corpus_every_location_gets_a_sensible_line(capsys):
    """Real files from other people's machines: legacy-only, multi-host GPU, AMD JAX, TPU, corrupt."""
    assert cli.main(["doctor", str(CORPUS), "--json", "--no-validity"]) == 1  # (the files only)
    data = json.loads(capsys.readouterr().out)
    sessions = {s["run"]: s for s in data["sessions"]}
    multi = sessions["xprof/demo/GPU-multi-worker"]
    assert multi["format"] == "xplane" and len(multi["hosts"]) == 2 and multi["visible_in_tensorboard_runs"]
    assert multi["devices"].startswith("8x GPU")
    assert sessions["xprof/demo/Cloud-TPU"]["findings"] == ["legacy_format"]
    assert sessions["_corrupt/xprof"]["findings"] == ["corrupt"]
    tpu = sessions["xprof/older_01d85de/xprof/convert/test_xplanes"]
    assert tpu["devices"] == "4x TPU v6 Lite" and "no_step_markers" in tpu["findings"]
    amd = sessions["tracelens/tests/traces/mi300/jax08_gemm"]
    assert amd["step_markers"] == "none" and "GPU" in amd["devices"] and "loose_file" in amd["findings"]
    for run, s in sessions.items():
        assert s["problems"] or s["notes"] or s["findings"] == [], run


def test_doctor_prints_what_each_run_supports_unless_told_not_to(tmp_path: Path, capsys):
    """The matrix comes from the run's report (a real H200 capture without its memory records)."""
    from degraded_traces import load_trace, without_memory, write_trace
    from paths import H200

    capture = H200 / "transformer_fp32" / "gpu0.1795771384025155384.pt.trace.json.gz"
    write_trace(without_memory(load_trace(capture)), tmp_path / "no_memory", capture.name)
    cli.main(["doctor", str(tmp_path)])
    out = capsys.readouterr().out
    assert "      unsupported: memory — The trace holds no allocator records" in out
    assert "        fix: torch.profiler.profile(profile_memory=True)" in out
    cli.main(["doctor", str(tmp_path), "--json"])
    rows = json.loads(capsys.readouterr().out)["sessions"][0]["validity"]["rows"]
    assert {r["analysis"]: r["status"] for r in rows}["memory"] == "unsupported"
    cli.main(["doctor", str(tmp_path), "--no-validity", "--json"])
    assert "validity" not in json.loads(capsys.readouterr().out)["sessions"][0]
    cli.main(["doctor", str(tmp_path), "--no-validity"])
    assert "unsupported:" not in capsys.readouterr().out
