"""Hostile profile strings reach text and markdown output as visible escapes, never as control codes.

The profile, run directory and host names carry what a malicious or broken writer could put there:
a screen clear (ESC[2J), an OSC 8 hyperlink, BEL, CR, backspace, a C1 CSI (U+009B) and a bidi
override (U+202E). JSON keeps the strings exactly; HTML escapes them (its own tests).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.views.cli.main import main
from tb_plugin_advisor.views.export.markup import terminal_output, terminal_safe

MS = 1_000_000
T0 = 1_700_000_000_000_000_000
SESSION = "2024_05_01_12_00_00"
CLEAR = "\x1b[2J"
LINK = "\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07"
RUN = f"run{CLEAR}\u202eevil"
HOST = "host\x9b31m\u202e"
TF_OP = f"model/{LINK}/MatMul\r\x08\x08:MatMul"
KERNEL = "volta_sgemm\x07\x1b[1A_128x64_nn"
# Anything a terminal acts on: C0 but \t and \n, DEL, C1, bidi controls, line/paragraph separators.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def hostile_profile(steps: int = 6) -> XSpaceBuilder:
    b = XSpaceBuilder(hostnames=[HOST])
    python = b.plane("/host:CPU").line("python", id=1)
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    t = T0
    for s in range(steps):
        python.event("train", t, 20 * MS, stats={"step_num": s, "_r": 1})
        python.event("IteratorGetNextOp::DoCompute", t + 100_000, 5 * MS)
        python.event("cudaLaunchKernel", t + 6 * MS, 50_000, stats={"correlation_id": s + 1})
        stream.kernel(KERNEL, t + 6 * MS + 100_000, 10 * MS, tf_op=TF_OP, correlation_id=s + 1)
        t += 20 * MS
    return b


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    for run in (RUN, "plain"):
        hostile_profile().write(root / run / "plugins" / "profile" / SESSION / f"{HOST}.xplane.pb")
    return root


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_neutral(text: str) -> None:
    assert UNSAFE.search(text) is None, repr(UNSAFE.search(text).group(0))
    assert text.endswith("\n")


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_report_text_and_markdown_show_escapes_not_controls(capsys, logdir, fmt):
    code, out, err = cli(capsys, "report", logdir, "--run", f"{RUN}/{SESSION}", "--format", fmt)
    assert code == 0, err
    assert_neutral(out)
    assert "\\x1b" in out and "\\x07" in out  # the hyperlink's ESC and BEL are visible, not acted on
    assert "\\u202e" in out or "\\x9b" in out  # the host name or run name, shown escaped


def test_report_json_keeps_the_exact_strings(capsys, logdir):
    code, out, err = cli(capsys, "report", logdir, "--run", f"{RUN}/{SESSION}", "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["run"] == f"{RUN}/{SESSION}" and report["hosts"] == [HOST]


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_diff_text_and_markdown_show_escapes_not_controls(capsys, logdir, fmt):
    code, out, err = cli(capsys, "diff", logdir, f"plain/{SESSION}", f"{RUN}/{SESSION}", "--format", fmt)
    assert code == 0, err
    assert_neutral(out)
    assert "run\\x1b" in out and "\\u202eevil" in out


def test_doctor_and_run_list_show_escapes_not_controls(capsys, logdir):
    _code, out, err = cli(capsys, "doctor", logdir)
    assert_neutral(out)
    assert "\\x1b[2J" in out
    code, out, err = cli(capsys, "report", logdir, "--list")
    assert code == 0, err
    assert_neutral(out)


def test_cli_error_naming_a_hostile_run_is_neutral(capsys, logdir):
    code, _out, err = cli(capsys, "report", logdir, "--run", f"nope{CLEAR}")
    assert code == 2
    assert_neutral(err)


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("\x1b[2J", "\\x1b[2J"),
        ("a\x07b", "a\\x07b"),
        ("over\rwrite", "over\\x0dwrite"),
        ("back\x08", "back\\x08"),
        ("\u202eevil", "\\u202eevil"),
        ("\x9b31m", "\\x9b31m"),
        ("\x7f", "\\x7f"),
        ("line\u2028sep", "line\\u2028sep"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("ünïcödé 名前 stays", "ünïcödé 名前 stays"),
    ],
)
def test_terminal_safe_table(raw, shown):
    assert terminal_safe(raw) == shown


def test_terminal_output_ends_with_exactly_the_newline_it_needs():
    assert terminal_output("a") == "a\n"
    assert terminal_output("a\n") == "a\n"
