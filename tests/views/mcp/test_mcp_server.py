"""`tb-advisor mcp` as an agent meets it: started as a subprocess and driven with the `mcp` SDK's own
stdio client. Its answers are checked against `tb-advisor … --format json` for the same runs of the
session's real TF profiles and PyTorch traces; every committed H200 capture's default report fits in
8 KB; bad names, paths and a corrupt file are tool errors with the CLI's own line, and the server keeps
answering after them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List, Optional

import pytest
from paths import H200

pytest.importorskip("mcp", reason="the MCP server is the extra tb-plugin-advisor[mcp] (Python 3.10+)")
import anyio  # noqa: E402  (the SDK's own event loop library: only there with the SDK)
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

TOOLS = {"list_runs", "report", "diff", "trend", "doctor", "evidence_spans"}
AGENT_CONTEXT_BYTES = 8 * 1024
SOME_SECTIONS = ["steps", "breakdown_pct", "ops"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tb_plugin_advisor.views.cli.main", *args],
                          capture_output=True, text=True, env=dict(os.environ), timeout=600)


def cli_json(*args: str) -> Dict[str, Any]:
    done = cli(*args)
    assert done.returncode in (0, 1), done.stderr  # doctor says 1 when something is wrong
    return json.loads(done.stdout)


def cli_error(*args: str) -> str:
    done = cli(*args)
    assert done.returncode == 2, done.stdout[:500]
    return done.stderr.strip().splitlines()[-1]


class Agent:
    """A client session with the server: `call` gives (is_error, text)."""

    def __init__(self, session: ClientSession):
        self.session = session

    async def call(self, tool: str, progress: Optional[list] = None, **arguments: Any) -> tuple:
        async def on_progress(done: float, total: Optional[float], message: Optional[str]) -> None:
            progress.append((done, total, message))

        result = await self.session.call_tool(tool, arguments,
                                              progress_callback=on_progress if progress is not None else None)
        assert len(result.content) == 1
        return bool(result.is_error), result.content[0].text

    async def json(self, tool: str, **arguments: Any) -> Dict[str, Any]:
        failed, text = await self.call(tool, **arguments)
        assert not failed, text
        return json.loads(text)


@asynccontextmanager
async def mcp_server(logdir: Path, *options: str) -> AsyncIterator[Agent]:
    """`tb-advisor mcp LOGDIR` with this checkout's package and the suite's cache setting (the stdio
    client passes only a safe default environment otherwise)."""
    env = {k: os.environ[k] for k in ("PYTHONPATH", "TB_ADVISOR_CACHE_DIR") if k in os.environ}
    command = ["-m", "tb_plugin_advisor.views.cli.main", "mcp", str(logdir), *options]
    params = StdioServerParameters(command=sys.executable, env=env, args=command)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield Agent(session)


def run_async(test):
    return anyio.run(test)


def test_the_tools_say_what_they_return_and_what_to_call_next(tmp_path):
    async def test():
        async with mcp_server(tmp_path) as agent:
            listed = {t.name: t for t in (await agent.session.list_tools()).tools}
        assert set(listed) == TOOLS
        for tool in listed.values():
            assert len(tool.description) > 150, tool.name
            assert tool.annotations.read_only_hint and not tool.annotations.destructive_hint
            for name, schema in tool.input_schema.get("properties", {}).items():
                assert len(schema.get("description", "")) > 20, f"{tool.name}.{name}"
        said = {name: " ".join(tool.description.split()) for name, tool in listed.items()}
        assert "capture again and call diff with the old run as baseline" in said["diff"]
        assert "call diff with this run as baseline" in said["report"]
        assert "call evidence_spans" in said["report"] and "Call this first" in said["list_runs"]
        sections = listed["report"].input_schema["properties"]["sections"]
        assert {"verdict", "recommendations", "kernel_stats", "roofline"} <= set(
            sections["anyOf"][0]["items"]["enum"])
        assert set(listed["report"].input_schema["required"]) == {"run"}
        assert set(listed["diff"].input_schema["required"]) == {"baseline", "candidate"}

    run_async(test)


def _check_against_cli(logdir: Path, run_dirs: List[str], trend_runs: List[str] = ()) -> Dict[str, Any]:
    """Every tool on `logdir` against the CLI's JSON for the runs in `run_dirs` (the first two diffed),
    the trend over the series `trend_runs` picks (every run directory when none)."""
    async def test():
        async with mcp_server(logdir) as agent:
            listed = await agent.json("list_runs")
            names = [r["run"] for r in listed["runs"]]
            runs[:] = [next(n for n in names if n.split("/")[0] == d) for d in run_dirs]
            return {
                "list": listed,
                "progress": await agent.call("report", progress=progress, run=runs[0]),
                "reports": {run: await agent.json("report", run=run) for run in runs},
                "sections": await agent.json("report", run=runs[0], sections=SOME_SECTIONS),
                "diff": await agent.json("diff", baseline=runs[0], candidate=runs[1]),
                "diff_ops": await agent.json("diff", baseline=runs[0], candidate=runs[1], sections=["ops"]),
                "trend": await agent.json("trend", runs=list(trend_runs)),
                "doctor": await agent.json("doctor"),
            }, await _spans(agent, runs)

    runs: List[str] = []
    progress: list = []
    answers, spans = run_async(test)
    assert not answers["progress"][0] and progress and progress[-1][0] == progress[-1][1] > 0
    assert all(r["analysed"] for r in answers["list"]["runs"] if r["run"] in runs)
    for run in runs:
        whole = cli_json("report", str(logdir), "--run", run, "--format", "json")
        got = answers["reports"][run]
        assert got["run"] == whole["run"] == run and got["hosts"] == whole["hosts"]
        assert got["verdict"] == whole["verdict"]
        assert got["recommendations"] == [{k: v for k, v in r.items() if k != "evidence_spans"}
                                          for r in whole["recommendations"]]
        if run == runs[0]:
            for key in SOME_SECTIONS:
                assert answers["sections"][key] == whole[key], key
            if spans is not None:
                rec_id, got_spans = spans
                (rec,) = [r for r in whole["recommendations"] if r["id"] == rec_id]
                assert got_spans == rec["evidence_spans"] and got_spans
    whole_diff = cli_json("diff", str(logdir), runs[0], runs[1], "--format", "json")
    assert answers["diff"]["recommendation_outcomes"] == whole_diff["recommendation_outcomes"]
    for key in answers["diff"]["sections"]:
        assert answers["diff"][key] == whole_diff[key], key
    assert answers["diff_ops"]["ops"] == whole_diff["ops"]
    picks = [arg for pattern in trend_runs for arg in ("--run", pattern)]
    whole_trend = cli_json("trend", str(logdir), *picks, "--format", "json")
    assert [s["run"] for s in answers["trend"]["series"]] == [s["run"] for s in whole_trend["series"]]
    for got, whole in zip(answers["trend"]["series"], whole_trend["series"]):
        assert got["change_points"] == whole["change_points"] and got["noise_pct"] == whole["noise_pct"]
        assert "captures" not in got
    assert answers["doctor"] == cli_json("doctor", str(logdir), "--json")
    return answers


async def _spans(agent: Agent, runs: List[str]):
    """(id, spans) of the first recommendation of runs[0] that has evidence spans, or None."""
    full = await agent.json("report", run=runs[0], with_evidence_spans=True)
    shown = [r for r in full["recommendations"] if r["evidence_spans"]]
    if not shown:
        return None
    answer = await agent.json("evidence_spans", run=runs[0], recommendation_id=shown[0]["id"])
    return shown[0]["id"], answer["evidence_spans"]


def test_tf_profiles_answer_as_the_cli_does(tf_profiles):
    runs = [s.name for s in (tf_profiles.loop_input_bound, tf_profiles.loop_fixed)]
    _check_against_cli(tf_profiles.logdir, runs)


def test_torch_traces_answer_as_the_cli_does(torch_traces):
    _check_against_cli(torch_traces.logdir, ["slow_loader", "fast_loader"])


@pytest.mark.sweep
def test_h200_captures_answer_as_the_cli_does():
    answers = _check_against_cli(H200, ["resnet50_fp32_workers0", "resnet50_fp32_workers8"],
                                 trend_runs=["resnet50_fp32_workers8*", "resnet50_fp32_workers0"])
    (series,) = answers["trend"]["series"]
    assert series["change_points"] and series["change_points"][0]["cause"]["summary"]


@pytest.mark.sweep
def test_default_report_fits_an_agents_context_on_every_h200_capture():
    async def test():
        async with mcp_server(H200) as agent:
            runs = [r["run"] for r in (await agent.json("list_runs"))["runs"]]
            return {run: await agent.call("report", run=run) for run in runs}

    answers = run_async(test)
    assert len(answers) == len([p for p in H200.iterdir() if p.is_dir()])
    for run, (failed, text) in answers.items():
        assert not failed, text
        size = len(text.encode("utf-8"))
        assert size < AGENT_CONTEXT_BYTES, f"{run}: {size} bytes"
        answer = json.loads(text)
        assert answer["run"] == run and answer["verdict"]["summary"] and answer["recommendations"]


def test_bad_input_is_a_tool_error_and_the_server_keeps_answering(tmp_path):
    logdir = tmp_path / "logdir"
    good = sorted(p for p in H200.iterdir() if p.is_dir() and p.name.startswith("mlp_"))[0]
    shutil.copytree(good, logdir / good.name)
    broken = logdir / "broken"
    broken.mkdir()
    (broken / "worker0.1795771390067853375.pt.trace.json").write_text('{"traceEvents": [{"ph": "X", "ts": ')
    outside = tmp_path / "outside"
    shutil.copytree(good, outside / good.name)

    async def test():
        async with mcp_server(logdir) as agent:
            answers = {
                "unknown": await agent.call("report", run="nope"),
                "corrupt": await agent.call("report", run="broken"),
                "dotdot": await agent.call("report", run=f"../outside/{good.name}"),
                "absolute": await agent.call("diff", baseline=str(outside / good.name), candidate=good.name),
                "host": await agent.call("report", run=good.name, host="gpu7"),
                "bad_id": await agent.call("evidence_spans", run=good.name, recommendation_id="no.such"),
                "bad_pattern": await agent.call("trend", runs=["/etc/*"]),
            }
            answers["still_up"] = await agent.call("report", run=good.name, progress=progress)
            return answers

    progress: list = []
    answers = run_async(test)
    size = sum(f.stat().st_size for f in (logdir / good.name).iterdir())
    assert progress and progress[-1] == (size, size, "reading profiles")  # bytes read, for a client's timeout
    for name, (failed, text) in answers.items():
        if name == "still_up":
            assert not failed and json.loads(text)["run"].startswith(good.name)
            continue
        assert failed, name
        assert text.startswith("tb-advisor: error: ") and "\n" not in text and "Traceback" not in text, text
    assert answers["unknown"][1] == cli_error("report", str(logdir), "--run", "nope")
    assert answers["corrupt"][1] == cli_error("report", str(logdir), "--run", "broken")
    assert "cannot read profile" in answers["corrupt"][1]
    assert answers["host"][1] == cli_error("report", str(logdir), "--run", good.name, "--host", "gpu7")
    for name in ("dotdot", "absolute", "bad_pattern"):
        assert "not a run name" in answers[name][1] and "list_runs" in answers[name][1], answers[name]
    assert "no.such" in answers["bad_id"][1]


def test_the_size_cap_is_the_clis():
    """`--max-profile-mb` caps what the tools read, with the CLI's words for a file over it."""
    run = sorted(p.name for p in H200.iterdir() if p.name.startswith("mlp_"))[0]

    async def test():
        async with mcp_server(H200, "--max-profile-mb", "0.1") as agent:
            return await agent.call("report", run=run)

    failed, text = run_async(test)
    assert failed and "--max-profile-mb" in text
    assert text == cli_error("report", str(H200), "--run", run, "--max-profile-mb", "0.1")
