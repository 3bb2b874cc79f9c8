"""The `tb-advisor` executable (views/cli/main.py `console_main`): a finished batch command ends its
process without the interpreter's teardown, and nothing it wrote is lost on the way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from paths import ROOT

from tb_plugin_advisor.views.cli.main import ENDS_WITHOUT_TEARDOWN, SUBCOMMANDS, main

DEMO = ROOT / "tb_plugin_advisor" / "sample_logdir"
RUN = ["--run", "run1_naive"]


# stdout buffered, as it is for a user (PYTHONUNBUFFERED would hide a missing flush)
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def executable(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tb_plugin_advisor.views.cli.main", *argv],
                          capture_output=True, text=True, timeout=300, env=BUFFERED)


def test_the_executable_writes_all_that_main_writes(capsys):
    assert main(["report", str(DEMO), *RUN, "--format", "json", "--no-cache"]) == 0
    in_process = capsys.readouterr().out
    proc = executable("report", str(DEMO), *RUN, "--format", "json", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) > 20_000  # a whole report: the buffered output was flushed before the end
    assert json.loads(proc.stdout) == json.loads(in_process)


def test_short_output_left_in_the_buffer_is_flushed():
    """`--list` prints a few lines, which stay in stdout's buffer (a pipe) until the process ends."""
    proc = executable("report", str(DEMO), "--list")
    assert proc.returncode == 0, proc.stderr
    runs = [line.split("\t")[0] for line in proc.stdout.splitlines()]
    assert len(runs) == 10 and any(r.startswith("run1_naive/") for r in runs), proc.stdout


def test_the_file_written_with_output_is_whole(tmp_path: Path):
    out = tmp_path / "report.json"
    proc = executable("report", str(DEMO), *RUN, "--format", "json", "--no-cache", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["steps"]


def test_a_reader_that_stops_early_gets_no_traceback():
    """`tb-advisor report … | head -c 100`: exit 0 and a quiet stderr, the flush at the end included."""
    command = [sys.executable, "-m", "tb_plugin_advisor.views.cli.main", "report", str(DEMO), *RUN,
               "--format", "json", "--no-cache"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=BUFFERED)
    assert proc.stdout is not None and proc.stderr is not None
    head = proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0, err
    assert head.startswith(b"{") and "Traceback" not in err and "Exception" not in err, err


def test_an_error_keeps_its_status_and_message():
    proc = executable("report", str(DEMO / "no-such-run"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("tb-advisor") and "no-such-run" in proc.stderr


def test_only_batch_commands_skip_the_teardown():
    """The servers (demo, mcp) end normally: TensorBoard's exit handlers remove its instance files."""
    assert set(SUBCOMMANDS) >= ENDS_WITHOUT_TEARDOWN
    assert not {"demo", "mcp"} & ENDS_WITHOUT_TEARDOWN
