"""report/schema.py, the report's shape the disk cache holds every entry to: every report the project
produces has it (the saved golden reports, which cover the corpus, the sample and the synthetic
profiles; and a report whose MFU was impossible), and what passes it renders. A report mutated at
random (a value replaced by another type, a number by one near the float maximum, near zero or past
the float range) is either refused by the shape or goes through every export, the diff and the trend
without an exception and with finite JSON numbers."""

from __future__ import annotations

import copy
import gzip
import json
import math
from random import Random
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from paths import GOLDEN
from test_hostile_shapes import IMPOSSIBLE, _write

from tb_plugin_advisor.diff.compare import diff_reports
from tb_plugin_advisor.report.schema import shape_error
from tb_plugin_advisor.trend.build import SeriesInput, build_trend
from tb_plugin_advisor.trend.series import capture_from_report
from tb_plugin_advisor.views.cli.main import main as cli_main
from tb_plugin_advisor.views.export import diff as diff_export
from tb_plugin_advisor.views.export.render import render


def _golden_reports() -> List[Tuple[str, Dict[str, Any]]]:
    out = []
    for path in sorted(GOLDEN.glob("*report*.json.gz")):
        text = gzip.decompress(path.read_bytes()).decode().split("\n--- exit")[0]
        value = json.loads(text) if text.strip() else None
        full = isinstance(value, dict) and "breakdown_ms" in value  # not a `--section` answer
        if full and value.get("schema") == "tb-advisor/report/1":
            out.append((path.name, value))
    return out


REPORTS = _golden_reports()


def test_there_are_reports_of_every_kind():
    names = " ".join(name for name, _ in REPORTS)
    assert len(REPORTS) >= 60 and "pod" in names and "xplane" in names and "torch" in names


@pytest.mark.parametrize("name, report", REPORTS, ids=[name for name, _ in REPORTS])
def test_every_golden_report_has_the_shape(name, report):
    assert shape_error(report) is None


def test_a_report_with_an_impossible_mfu_has_the_shape(tmp_path, capsys):
    path = _write(tmp_path / "w.1700000000000.pt.trace.json", IMPOSSIBLE)
    assert cli_main(["report", str(path), "--format", "json", "--no-cache"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["roofline"]["mfu_impossible"] and shape_error(report) is None


def test_a_report_of_several_hosts_that_recommend_has_the_shape():
    """A `per_host` row lists its host's recommendations by id: a report of several hosts is read back
    from the disk cache whatever its hosts recommend."""
    from test_report_deep import host, run_of

    from tb_plugin_advisor.report.run import build_report

    report = build_report(run_of((host("a"), "a"), (host("b"), "b"))).to_json()
    assert all(row["recommendations"] and all(isinstance(x, str) for x in row["recommendations"])
               for row in report["per_host"])
    assert shape_error(report) is None


def test_the_shape_names_what_is_wrong_and_where():
    report = copy.deepcopy(REPORTS[0][1])
    report["recommendations"] = "y"
    assert shape_error(report) == "Expected `array`, got `str` - at `$.recommendations`"


def _paths(value: Any, path: Tuple = ()) -> Iterator[Tuple]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            yield from _paths(item, path + (index,))


ANY = [None, "y", "", 0, -1, True, [], {}, [1], ["y"], {"a": 1}, [None], "<script>"]
NUMBERS = [1e308, -1e308, 1.7e308, 1e-300, 10**30, -(10**30), 10**400, 2**63, 0, -1]


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _mutated(rnd: Random) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    base = rnd.choice(REPORTS)[1]
    report = copy.deepcopy(base)
    paths = list(_paths(report))[1:]
    numbers = rnd.random() < 0.5
    for _ in range(rnd.randint(1, 3)):
        path = rnd.choice(paths)
        holder = report
        try:
            for key in path[:-1]:
                holder = holder[key]
            if numbers and not isinstance(holder[path[-1]], (int, float)):
                continue
            holder[path[-1]] = rnd.choice(NUMBERS if numbers else ANY)
        except (KeyError, IndexError, TypeError):
            continue
    return base, report


@pytest.mark.parametrize("seed", range(4))
def test_what_passes_the_shape_renders(seed):
    rnd = Random(seed)
    passed = 0
    for _ in range(150):
        base, report = _mutated(rnd)
        if shape_error(report) is not None:
            continue
        passed += 1
        for fmt in ("text", "md", "html"):
            assert render(report, fmt)
        for a, b in ((base, report), (report, base)):
            diff = diff_reports(copy.deepcopy(a), copy.deepcopy(b))
            assert _finite(diff)
            for fmt in ("text", "md", "html"):
                assert diff_export.render(diff, fmt)
        captures = [capture_from_report(f"x/{i}", f"2024-01-0{i + 1}T00:00:00Z", r)
                    for i, r in enumerate((base, report, base))]
        assert _finite(build_trend([SeriesInput("x", captures)]))
    assert passed > 20  # the mutations that keep the shape are exercised, not only refused


def test_an_integer_past_float_range_is_refused_with_its_path_named():
    """msgspec before 0.19 lets such an integer escape as SystemError; the shape check names it either way."""
    report = copy.deepcopy(REPORTS[0][1])
    report["steps"]["median_ms"] = 10 ** 400
    error = shape_error(report)
    assert error is not None and "$.steps.median_ms" in error, error
