"""PyTorch runs in a logdir: discovery, captures, markers, the runs listing and the CLI paths."""

from __future__ import annotations

import json
import os
import threading
import uuid
from pathlib import Path
from typing import List

import pytest
from synth import XSpaceBuilder
from synth_kineto import training_trace

from tb_plugin_advisor.readers.kineto.captures import capture_label, group_captures
from tb_plugin_advisor.readers.kineto.head import looks_like_trace
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.markers import missing_markers
from tb_plugin_advisor.sources.runs import find_run, load_run
from tb_plugin_advisor.views.cli.main import main

STAMP_1 = "1700000001000"  # ms: 2023-11-14 22:13:21 UTC
STAMP_2 = "1700000061000"
LABEL_1 = "2023_11_14_22_13_21.000"
LABEL_2 = "2023_11_14_22_14_21.000"


def _handler_run(directory: Path, workers=("hostA_11", "hostB_22"), stamps=(STAMP_1,), gz=False) -> None:
    trace = training_trace(steps=2)
    for stamp in stamps:
        for worker in workers:
            trace.write(directory / f"{worker}.{stamp}.pt.trace.json{'.gz' if gz else ''}")


def test_capture_labels_for_ms_and_ns_stamps():
    assert capture_label(STAMP_1) == LABEL_1
    assert capture_label("1700000001000123456") == LABEL_1  # ns since the epoch (current torch)
    assert capture_label("") == "trace"


def test_captures_group_one_file_per_worker():
    names = ["a.1700000001000.pt.trace.json", "b.1700000001020.pt.trace.json",
             "a.1700000061000.pt.trace.json.gz", "b.1700000061005.pt.trace.json.gz",
             "notes.txt", "w0.pt.trace.json"]
    captures = group_captures(names)
    assert [label for label, _ in captures] == [LABEL_1, LABEL_2, "trace"]
    assert captures[0][1] == [("a", names[0]), ("b", names[1])]
    assert captures[1][1] == [("a", names[2]), ("b", names[3])]
    assert captures[2][1] == [("w0", "w0.pt.trace.json")]


def test_nested_mixed_logdir(tmp_path):
    _handler_run(tmp_path / "torch" / "resnet", stamps=(STAMP_1, STAMP_2), gz=True)
    builder = XSpaceBuilder(hostnames=["tfhost"])
    builder.plane("/host:CPU").line("python", id=1).event("train", 1_700_000_000_000_000_000, 1000)
    builder.write(tmp_path / "tf" / "plugins" / "profile" / "2024_01_01_00_00_00" / "tfhost.xplane.pb")
    scan = scan_logdir(str(tmp_path))
    runs = {s.run: s for s in scan.sessions}
    assert set(runs) == {"tf/2024_01_01_00_00_00", f"torch/resnet/{LABEL_1}", f"torch/resnet/{LABEL_2}"}
    torch_run = runs[f"torch/resnet/{LABEL_2}"]
    assert torch_run.format == "kineto" and torch_run.host_names == ["hostA_11", "hostB_22"]
    assert torch_run.to_json()["framework"] == "pytorch"
    assert runs["tf/2024_01_01_00_00_00"].to_json()["framework"] is None  # XSpace: TF or JAX
    # TensorBoard's run list needs a marker in the PyTorch run directory too
    assert {r.rel for r in missing_markers(scan)} == {"tf", "torch/resnet"}
    profiles = load_run(find_run(scan, f"torch/resnet/{LABEL_1}"))
    assert [p.host for p in profiles.profiles] == ["hostA_11", "hostB_22"]
    assert all(len(p.step_markers) == 2 for p in profiles.profiles)


def test_pytorch_trace_is_not_called_a_legacy_tensorflow_file(tmp_path):
    _handler_run(tmp_path / "plugins" / "profile" / "s1", workers=("w",))
    scan = scan_logdir(str(tmp_path))
    assert [s.format for s in scan.sessions] == ["unknown"]


def test_cli_report_on_a_trace_file(tmp_path, capsys):
    path = training_trace(steps=3).write(tmp_path / "host_1.1700000001000.pt.trace.json.gz")
    assert main(["report", str(path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["hosts"] == ["host_1"]
    assert report["steps"]["source"] == "profiler_step" and report["steps"]["count"] == 3


def test_cli_report_on_a_logdir_with_a_pytorch_run(tmp_path, capsys):
    _handler_run(tmp_path / "run1")
    assert main(["report", str(tmp_path), "--list"]) == 0
    assert f"run1/{LABEL_1}\thostA_11, hostB_22" in capsys.readouterr().out
    assert main(["report", str(tmp_path), "--run", f"run1/{LABEL_1}", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["hosts"] == ["hostA_11", "hostB_22"]


def test_cli_diff_two_trace_files_and_a_run_against_a_file(tmp_path, capsys):
    a = training_trace(steps=5, step_ns=10_000_000).write(tmp_path / "a.pt.trace.json")
    b = training_trace(steps=5, step_ns=20_000_000).write(tmp_path / "b.pt.trace.json")
    assert main(["diff", str(a), str(b), "--format", "json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    assert diff["step_time"]["baseline_ms"] == pytest.approx(10.0, abs=0.01)
    assert diff["step_time"]["candidate_ms"] == pytest.approx(20.0, abs=0.01)
    _handler_run(tmp_path / "logs" / "r")
    assert main(["diff", str(tmp_path / "logs"), f"r/{LABEL_1}", str(b), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["step_time"]["candidate_ms"] == pytest.approx(20.0, abs=0.01)


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"a": 1}'])
def test_cli_bad_trace_file_exits_2_with_one_line(tmp_path, capsys, content):
    path = tmp_path / "bad.pt.trace.json"
    path.write_bytes(content)
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tb-advisor: error: cannot read profile ") and str(path) in err
    assert "Traceback" not in err


def test_remote_logdir_with_a_pytorch_run_is_found_and_read():
    """memory:// goes through TensorBoard's file layer, the way gs:// or s3:// would."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    base = f"/advisor-kineto-{uuid.uuid4().hex}"
    data = training_trace(steps=3).to_bytes(gzipped=True)
    fs.pipe(f"{base}/torch/w_7.{STAMP_1}.pt.trace.json.gz", data)
    try:
        scan = scan_logdir(f"memory://{base}")
        session = scan.run(f"torch/{LABEL_1}")
        assert session is not None and session.format == "kineto"
        assert session.hosts[0].size_bytes == len(data)
        profiles = load_run(session)
        assert len(profiles.profiles[0].step_markers) == 3
    finally:
        fs.rm(base, recursive=True)


# -- the sniff of traces under other names ---------------------------------------------------------------


def test_sniffing_a_trace_under_another_name_goes_through_the_guarded_reads(tmp_path):
    """`prof.export_chrome_trace` output is recognised from its first 4 KiB, plain or gzip; a FIFO
    put where the listing saw a file is refused at once, not waited on (a plain open blocks)."""
    plain = training_trace(steps=2).write(tmp_path / "trace.json")
    packed = training_trace(steps=2).write(tmp_path / "trace.json.gz")
    (tmp_path / "other.json").write_text('{"a": 1}')
    assert looks_like_trace(str(plain)) and looks_like_trace(str(packed))
    assert not looks_like_trace(str(tmp_path / "other.json"))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    answers: List[bool] = []
    sniff = threading.Thread(target=lambda: answers.append(looks_like_trace(str(fifo))), daemon=True)
    sniff.start()
    sniff.join(timeout=30)
    assert answers == [False]
