"""The README's facts, read from the code and the demo rather than trusted."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import ROOT

from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.markers import marker_bytes
from tb_plugin_advisor.sources.runs import find_run, load_run

REPO = ROOT
README = (REPO / "README.md").read_text(encoding="utf-8")
DEMO = REPO / "tb_plugin_advisor" / "sample_logdir"
PACKAGE = REPO / "tb_plugin_advisor"


def test_marker_size_is_what_the_code_writes():
    sizes = {int(n) for n in re.findall(r"an? (\d+)-byte events file", README)}
    assert sizes, "the README no longer states the marker's size"
    written = {len(marker_bytes(t)) for t in (1.5, 1_700_000_000.25, time.time(), 4e9)}
    assert len(written) == 1  # a fixed-size double: the size does not depend on the time
    assert sizes == written


def test_screenshots_show_runs_the_demo_has_and_say_what_they_say():
    caption = r"!\[The Advisor tab on the demo's ([\w/]+): ([\w-]+),[^\]]*\]\((docs/[\w.-]+\.png)\)"
    captions = re.findall(caption, README)
    # The TensorFlow story and the PyTorch one each show their first run.
    assert {run_dir.split("/")[0] for run_dir, _, _ in captions} == {"run1_naive", "torch_resnet50"}, captions
    scan = scan_logdir(str(DEMO))
    for run_dir, verdict_word, image in captions:
        png = (REPO / image).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
        runs = [s.run for s in scan.sessions if s.run == run_dir or s.run.startswith(run_dir + "/")]
        assert len(runs) == 1, f"the demo has no run {run_dir!r}: {[s.run for s in scan.sessions]}"
        report = build_report(load_run(find_run(scan, runs[0]))).to_json()
        summary = report["verdict"]["summary"]
        assert summary.lower().startswith(verdict_word.lower()), summary


def _cli_text(*argv: str) -> str:
    """`tb-advisor ARGV` as a person reads it, its line wrapping undone."""
    proc = subprocess.run([sys.executable, "-m", "tb_plugin_advisor.views.cli.main", *argv, "--no-cache"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return " ".join(proc.stdout.split())


def test_the_pytorch_story_quotes_what_the_advisor_says():
    """Every quote in the README's PyTorch table is in the run's report, its diff from the row above, or
    (the repeats' row) the trend of the series."""
    rows = re.findall(r"^\| (\d_\w+) \|[^|]*\| (.*) \|$", README, re.M)
    assert [run for run, _ in rows] == ["1_fp32_workers0", "2_fp32_workers8", "3_bf16_workers8",
                                        "4_fp32_workers8_repeats"], rows
    trend = _cli_text("trend", str(DEMO), "--run", "torch_resnet50/*")
    previous = None
    for run, cell in rows:
        if run.endswith("_repeats"):  # three captures: what the row quotes is the series' trend
            said = trend
        else:
            said = _cli_text("report", str(DEMO), "--run", f"torch_resnet50/{run}") + trend
        if previous and not run.endswith("_repeats"):
            said += _cli_text("diff", str(DEMO), f"torch_resnet50/{previous}", f"torch_resnet50/{run}")
        quotes = re.findall(r'"([^"]+)"', cell)
        assert quotes, (run, cell)
        for quote in quotes:
            assert quote in said, (run, quote)
        previous = run


def test_quoted_verdicts_are_what_the_demo_says():
    """The demo table quotes the Advisor's verdict word for word: each quote is the run's summary."""
    quotes = dict(re.findall(r'^\| (run\w+) \|[^|]*\| "([^"]+)" \|$', README, re.M))
    assert {"run1_naive", "run2_parallel"} <= set(quotes), quotes
    scan = scan_logdir(str(DEMO))
    for run_dir, quote in quotes.items():
        (session,) = [s for s in scan.sessions if s.run.split("/")[0] == run_dir]
        assert build_report(load_run(session)).to_json()["verdict"]["summary"] == quote, run_dir


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_documents_named_in_the_code_are_in_the_repository(path: Path):
    """Docstrings and comments may point at README.md or docs/*.md, never at notes outside the repo."""
    for name in set(re.findall(r"\b([\w/.-]+\.md)\b", path.read_text(encoding="utf-8"))):
        assert (REPO / name).is_file() or (REPO / "docs" / name).is_file(), f"{path.name} cites {name}"
