"""The README's facts, read from the code and the demo rather than trusted."""

from __future__ import annotations

import re
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


def test_screenshot_shows_a_run_the_demo_has_and_says_what_it_says():
    caption = r"!\[The Advisor tab on the demo's (\w+): ([\w-]+),[^\]]*\]\((docs/[\w.-]+\.png)\)"
    match = re.search(caption, README)
    assert match, "the README's screenshot caption must name the demo run it shows"
    run_dir, verdict_word, image = match.groups()
    png = (REPO / image).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    scan = scan_logdir(str(DEMO))
    runs = [s.run for s in scan.sessions if s.run.split("/")[0] == run_dir]
    assert len(runs) == 1, f"the demo has no run {run_dir!r}: {[s.run for s in scan.sessions]}"
    report = build_report(load_run(find_run(scan, runs[0]))).to_json()
    assert report["verdict"]["summary"].lower().startswith(verdict_word.lower()), report["verdict"]["summary"]


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
