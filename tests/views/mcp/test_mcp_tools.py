"""The MCP tools' answers as plain data (views/mcp/tools.py, no MCP SDK needed): cut to named sections
of the report's, the diff's and the trend's own JSON, every value as the whole document has it; run
names that are paths refused; and `tb-advisor mcp` without the SDK says how to install it."""

from __future__ import annotations

import json
import re
import sys

import pytest
from paths import H200, SAMPLE_LOGDIR

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.report.disk_cache import ReportCache
from tb_plugin_advisor.views.cli.main import main
from tb_plugin_advisor.views.mcp.tools import (
    DEFAULT_DIFF_SECTIONS,
    DEFAULT_REPORT_SECTIONS,
    DEFAULT_TREND_SERIES_KEYS,
    REPORT_IDENTITY,
    AdvisorTools,
    check_run_name,
    diff_sections,
    evidence_of,
    report_sections,
    trend_change_points,
)


@pytest.fixture(scope="module")
def sample_tools() -> AdvisorTools:
    return AdvisorTools(str(SAMPLE_LOGDIR), ReportCache(None))


@pytest.fixture(scope="module")
def sample_report(sample_tools: AdvisorTools) -> dict:
    """The whole report of the bundled input-bound run, built the way the CLI builds it."""
    from tb_plugin_advisor.report.door import ReportDoor
    from tb_plugin_advisor.sources.discovery import scan_logdir
    from tb_plugin_advisor.sources.runs import find_run

    session = find_run(scan_logdir(sample_tools.logdir), "run1_naive")
    return ReportDoor(ReportCache(None)).report(session)[0]


@pytest.mark.parametrize("name", ["run1_naive", "train/2024_01_01_00_00_00", "a b/c.d", "run-x/"])
def test_run_names_pass_as_they_are(name):
    assert check_run_name(name) == name.strip()


@pytest.mark.parametrize("path", ["../outside", "run/../../etc", "/etc/passwd", "\\\\server\\share", "~/runs",
                                  "C:\\logs\\run", "gs://bucket/run", "s3://b/r", "", "  "])
def test_paths_are_refused_naming_what_is_accepted(path):
    with pytest.raises(AdvisorError) as err:
        check_run_name(path)
    message = str(err.value)
    assert "not a run name" in message and "list_runs" in message and "\n" not in message


def test_a_path_to_a_real_run_outside_the_logdir_is_refused_before_any_lookup(tmp_path):
    tools = AdvisorTools(str(tmp_path), ReportCache(None))  # an empty logdir; the captures lie elsewhere
    outside = next(p for p in H200.iterdir() if p.is_dir())
    for name in (str(outside), f"../{outside.name}", str(outside.relative_to(H200.parent.parent))):
        with pytest.raises(AdvisorError, match="is not a run name|unknown run"):
            tools.report(name)


def test_default_report_is_the_verdict_and_recommendations_as_the_report_has_them(sample_report):
    answer = report_sections(sample_report)
    assert answer["sections"] == list(DEFAULT_REPORT_SECTIONS)
    assert set(answer) == {*REPORT_IDENTITY, "sections", *DEFAULT_REPORT_SECTIONS, "evidence_spans_left_out"}
    assert answer["verdict"] == sample_report["verdict"]
    whole = sample_report["recommendations"]
    assert whole and any(r["evidence_spans"] for r in whole)  # the sample shows its input waits
    assert [r["id"] for r in answer["recommendations"]] == [r["id"] for r in whole]
    for cut, full in zip(answer["recommendations"], whole):
        assert "evidence_spans" not in cut
        assert cut == {k: v for k, v in full.items() if k != "evidence_spans"}


def test_named_sections_and_spans_on_request(sample_report):
    answer = report_sections(sample_report, ["steps", "recommendations", "steps"], with_evidence_spans=True)
    assert answer["sections"] == ["steps", "recommendations"]
    assert answer["steps"] == sample_report["steps"]
    assert answer["recommendations"] == sample_report["recommendations"]
    assert "evidence_spans_left_out" not in answer and "verdict" not in answer


def test_an_unknown_section_names_the_sections_there_are(sample_report):
    with pytest.raises(AdvisorError, match="unknown report section 'bogus'.*verdict.*recommendations"):
        report_sections(sample_report, ["verdict", "bogus"])


def test_evidence_spans_of_one_recommendation(sample_report):
    shown = next(r for r in sample_report["recommendations"] if r["evidence_spans"])
    answer = evidence_of(sample_report, shown["id"])
    assert answer["evidence_spans"] == shown["evidence_spans"]
    assert (answer["id"], answer["title"]) == (shown["id"], shown["title"])
    assert answer["run"] == sample_report["run"]
    with pytest.raises(AdvisorError) as err:
        evidence_of(sample_report, "no.such_id")
    assert shown["id"] in str(err.value)  # the ids there are, so the agent can correct itself


def test_diff_and_trend_are_cut_to_their_own_keys(sample_tools, sample_report):
    from tb_plugin_advisor.diff.compare import diff_reports

    whole = diff_reports(sample_report, sample_report)
    answer = diff_sections(whole)
    assert answer["sections"] == list(DEFAULT_DIFF_SECTIONS)
    for key in DEFAULT_DIFF_SECTIONS:
        assert answer[key] == whole[key]
    assert "kernels" not in answer and "ops" not in answer
    assert diff_sections(whole, ["ops"])["ops"] == whole["ops"]
    with pytest.raises(AdvisorError, match="unknown diff section 'verdicts'.*recommendation_outcomes"):
        diff_sections(whole, ["verdicts"])

    trend = {"schema": "tb-advisor/trend/1", "rules": {"alpha": 0.05},
             "series": [{"run": "a", "captures": [{"index": 0}], "change_points": [], "noise_pct": 1.0,
                         "newest_change": None, "notes": []}]}
    cut = trend_change_points(trend)
    assert list(cut["series"][0]) == list(DEFAULT_TREND_SERIES_KEYS) and cut["rules"] == trend["rules"]
    assert trend_change_points(trend, with_captures=True)["series"][0]["captures"] == [{"index": 0}]


def test_list_runs_is_the_runs_route_with_what_is_read(sample_tools):
    runs = sample_tools.list_runs()["runs"]
    assert {r["run"].split("/")[0] for r in runs} >= {"run1_naive", "run2_parallel"}
    assert all(set(r) == {"run", "hosts", "format", "size_bytes", "framework", "analysed"} for r in runs)


def test_mcp_without_the_sdk_is_one_line_saying_how_to_install(monkeypatch, capsys, tmp_path):
    # `import mcp…` (and anyio, which the extra brings) fails as if the extra were not installed
    extra = ("mcp", "mcp_types", "anyio")
    for name in [n for n in sys.modules if n.split(".")[0] in extra] + list(extra):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "tb_plugin_advisor.views.mcp.server", raising=False)
    assert main(["mcp", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tb-advisor: error: the MCP server needs the mcp package")
    assert "pip install 'tb-plugin-advisor[mcp]'" in err and "\n" not in err


def test_the_readmes_client_configuration_and_exchange_are_what_the_server_does(sample_tools):
    from paths import ROOT

    from tb_plugin_advisor.views.cli.main import SUBCOMMANDS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Coding agents: `tb-advisor mcp`", 1)[1].split("\n### ", 1)[0]
    config = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))
    (server,) = config["mcpServers"].values()
    assert server["command"] == "tb-advisor" and server["args"][0] == "mcp" and "mcp" in SUBCOMMANDS

    asked = json.loads(re.search(r"→ report (\{.*?\})\n", section).group(1))
    answer = sample_tools.report(**asked)
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    assert f'"run": "{answer["run"]}"' in shown and f'"summary": "{answer["verdict"]["summary"]}"' in shown
    first = answer["recommendations"][0]
    assert f'"id": "{first["id"]}"' in shown and f'"title": "{first["title"]}"' in shown
    assert f'"snippet": {json.dumps(first["snippet"])}' in shown
    assert f'"ms_per_step": {json.dumps(first["expected_gain"]["ms_per_step"])}' in shown
    assert f'"input_pct": {answer["verdict"]["input_pct"]}' in shown
