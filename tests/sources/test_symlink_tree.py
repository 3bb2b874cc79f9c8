"""A logdir composed as a symlink tree, the way TensorBoard's help recommends: run directories linked
in from elsewhere (`logs/tf_exp -> /elsewhere/tf_exp`) are listed and reported by the tab and the
CLI under the link's name, with real TensorFlow profiles written in the test session and a real
PyTorch capture; and `fix-logdir` writes nothing outside the logdir's real path."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Dict, Tuple

import pytest
from fixtures_server import start_tensorboard
from paths import H200
from test_api_tf import poll

from tb_plugin_advisor.views.cli.main import main as cli_main

CAPTURE = H200 / "mlp_launch_bound"


def _snapshot(root: Path) -> Dict[str, Tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def tree(tf_profiles, tmp_path_factory):
    """(logdir, elsewhere): logdir holds only links; the runs live in elsewhere/."""
    root = tmp_path_factory.mktemp("symlink_tree")
    elsewhere = root / "elsewhere"
    shutil.copytree(tf_profiles.loop_fixed, elsewhere / "tf_exp")
    for path in list((elsewhere / "tf_exp").rglob("*tfevents*")):
        path.unlink()  # no events file: the run needs the marker that must not be written there
    shutil.copytree(CAPTURE, elsewhere / "torch_exp")
    logdir = root / "logs"
    logdir.mkdir()
    (logdir / "tf_exp").symlink_to(elsewhere / "tf_exp", target_is_directory=True)
    (logdir / "torch_exp").symlink_to(elsewhere / "torch_exp", target_is_directory=True)
    return logdir, elsewhere


def test_the_cli_lists_and_reports_linked_runs(tree, capsys):
    logdir, _ = tree
    assert cli_main(["report", str(logdir), "--list"]) == 0
    listed = capsys.readouterr().out
    assert "tf_exp/" in listed and "torch_exp" in listed, listed
    for run, framework in (("tf_exp", "tf"), ("torch_exp", "pytorch")):
        assert cli_main(["report", str(logdir), "--run", run, "--format", "json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["run"].startswith(run) and report["steps"]["count"] >= 4, report["steps"]
        assert report["framework"] == framework


def test_fix_logdir_writes_nothing_outside_the_logdir(tree, capsys):
    logdir, elsewhere = tree
    before = _snapshot(elsewhere)
    cli_main(["fix-logdir", str(logdir)])
    captured = capsys.readouterr()
    assert "outside the logdir" in captured.out + captured.err
    assert _snapshot(elsewhere) == before
    assert not [p for p in logdir.rglob("*") if p.is_file() and not os.path.islink(p)
                and "elsewhere" not in os.path.realpath(p)]


def test_the_tab_lists_and_reports_linked_runs(tree):
    logdir, elsewhere = tree
    before = _snapshot(elsewhere)
    with start_tensorboard(logdir) as tb:  # marker writing on, as by default
        status, body = tb.plugin("runs")
        assert status == 200
        runs = {r["run"]: r for r in body["runs"]}
        assert {r.split("/")[0] for r in runs} == {"tf_exp", "torch_exp"}, runs
        for run in runs:
            status, report = poll(tb, "report", run=run)
            assert status == 200, report
            assert report["steps"]["count"] >= 4
        status, doctor = poll(tb, "doctor")
        assert status == 200
        assert any("outside the logdir" in p for p in doctor["problems"]), doctor["problems"]
    assert _snapshot(elsewhere) == before
