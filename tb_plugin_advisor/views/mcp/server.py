"""The MCP server: the six tools of views/mcp/tools.py registered with the `mcp` SDK's MCPServer, their
descriptions and parameter schemas written for an agent, served over stdio.

Each tool answers compact JSON text (the report's, the diff's, the trend's or doctor's own keys), or
a tool error (isError) whose text is the line the CLI prints for the same mistake. An unexpected
crash is the SDK's: the agent reads only "Error executing tool …", the traceback stays in the
server's stderr log. Nothing here writes: the tools only read the logdir and the analysis cache.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import time
from typing import Annotated, Any, Callable, Dict, List, Literal, Optional

import anyio.from_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, WithJsonSchema

from tb_plugin_advisor import __version__
from tb_plugin_advisor.errors import AdvisorError, error_line
from tb_plugin_advisor.report.hostpool import RunProgress
from tb_plugin_advisor.views.mcp.tools import (
    DEFAULT_DIFF_SECTIONS,
    DEFAULT_REPORT_SECTIONS,
    REPORT_SECTIONS,
    AdvisorTools,
)

INSTRUCTIONS = """\
The Advisor diagnoses TensorFlow/JAX profiles (XSpace) and PyTorch profiler traces under one logdir:
what bounds the step time (input pipeline, device compute, host, kernel launches, copies,
communication), whether mixed precision and Tensor Cores are used, and what to change, each
recommendation with its expected gain in ms per step.

A typical loop: list_runs → report(run) → change the code as the top recommendation says → capture a
new profile → diff(baseline=old run, candidate=new run) to see whether the step got faster and
whether each fix delivered its predicted gain (recommendation_outcomes). For many captures of one job
(CI, nightly runs), trend finds where the series changed and why. If a run you expect is missing,
call doctor. Run names are those list_runs returns; paths are not accepted."""

PROGRESS_INTERVAL_S = 1.0  # at most one progress notification a second, and the last one
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

RunName = Annotated[str, Field(description="A run name exactly as list_runs returns it (a unique start of "
                                           "one, or its run directory's name, also works). Not a path.")]
HostName = Annotated[Optional[str], Field(description="Only this host of a multi-host run (one of the "
                                                      "run's `hosts`); leave out for all hosts pooled.")]

# A report key: the schema lists them for the agent; an unknown one is answered by tools.py with the
# keys there are (one line), not by the SDK's validation.
ReportSection = Annotated[str, WithJsonSchema({"type": "string", "enum": list(REPORT_SECTIONS)})]


def _json_text(value: Dict[str, Any]) -> CallToolResult:
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return CallToolResult(content=[TextContent(text=text)])


def progress_to(ctx: Context, interval_s: float = PROGRESS_INTERVAL_S) -> RunProgress:
    """An on_progress(done_bytes, total_bytes) that tells the client how far the profiles are read
    (MCP progress notifications, sent only when the call asked for them): a client that times out a
    silent call keeps waiting for a large profile. Called on the tool's worker thread."""
    last = [float("-inf")]

    def on_progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < interval_s:
            return
        last[0] = now
        # off the tool's worker thread anyio refuses: progress is a courtesy, the answer is what counts
        with contextlib.suppress(RuntimeError):
            anyio.from_thread.run(ctx.report_progress, float(done), float(total), "reading profiles")

    return on_progress


def answer(work: Callable[[], Dict[str, Any]]) -> CallToolResult:
    """The tool's JSON, or a tool error holding the CLI's one-line message for the same input (an
    OSError, which the CLI would show as a traceback, is one line here too)."""
    try:
        return _json_text(work())
    except (AdvisorError, OSError) as exc:  # OSError: a file that vanished or may not be read
        return CallToolResult(content=[TextContent(text=error_line(exc))], is_error=True)


def build_server(tools: AdvisorTools) -> MCPServer:
    """An MCPServer whose tools answer from `tools` (one logdir, one analysis cache)."""
    server = MCPServer(name="tb-advisor", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def tool(fn: Callable[..., CallToolResult]) -> Callable[..., CallToolResult]:
        """Register `fn` read-only, its docstring (dedented) as the description the agent reads."""
        server.add_tool(fn, description=inspect.cleandoc(fn.__doc__ or ""), annotations=READ_ONLY)
        return fn

    @tool
    def list_runs() -> CallToolResult:
        """List the profile runs under the server's logdir: {"runs": [{"run", "hosts", "format" (of
        its files), "size_bytes", "framework", "analysed" (whether the Advisor reads that format)}]}.
        Call this first; pass a `run` from it to report, diff, evidence_spans or trend. A run you
        expect is missing or not analysed? Call doctor."""
        return answer(tools.list_runs)

    @tool
    def report(
        run: RunName,
        host: HostName = None,
        sections: Annotated[Optional[List[ReportSection]], Field(
            description="Report keys to return (default: " + ", ".join(DEFAULT_REPORT_SECTIONS) + "). "
            "steps, breakdown_ms/breakdown_pct (where the step time goes), input_pipeline, precision, "
            "tensor_cores, ops and kernels (top tables), kernel_stats, memory, collectives and roofline "
            "(deeper views) are large: ask for them by name when the verdict points there.")] = None,
        with_evidence_spans: Annotated[bool, Field(
            description="Keep each recommendation's evidence_spans (large); evidence_spans for one id is "
            "cheaper.")] = False,
        ctx: Optional[Context] = None,
    ) -> CallToolResult:
        """Diagnose one run: the tb-advisor/report/1 JSON cut to the named sections. By default the
        `verdict` (the bottleneck, how input-bound the step is, a summary) and the `recommendations`
        (stable ids such as input.prefetch or precision.mixed, most severe first, each with a title,
        evidence, a code snippet and expected_gain {ms_per_step: [low, high], pct, basis}).

        Next: apply the top recommendation's snippet, capture a new profile, then call diff with this
        run as baseline. To see the trace events behind a recommendation, call evidence_spans with
        its id."""
        return answer(lambda: tools.report(run, host, sections, with_evidence_spans, _progress(ctx)))

    @tool
    def diff(
        baseline: Annotated[str, Field(description="The run before the change (a run name from list_runs).")],
        candidate: Annotated[str, Field(description="The run after the change (a run name from list_runs).")],
        baseline_host: HostName = None,
        candidate_host: HostName = None,
        sections: Annotated[Optional[List[str]], Field(
            description="Diff keys to return (default: " + ", ".join(DEFAULT_DIFF_SECTIONS) + "); also "
            "breakdown, verdict, precision_delta_pct, tensor_cores_delta_pct, ops, kernels, memory, "
            "kernel_stats, collectives, roofline, per_host. ops and kernels are large.")] = None,
        ctx: Optional[Context] = None,
    ) -> CallToolResult:
        """Compare two runs (tb-advisor/diff/1 JSON, cut to the named sections): `step_time` (baseline
        and candidate ms, delta_pct, and `significant`: a statistical test on the per-step times, so
        noise is not called a change), `breakdown_delta_ms` (which category moved),
        `recommendation_outcomes` (for each recommendation of the baseline: acted_on, the predicted
        and the realized ms per step, and a verdict within/below/above) and a `summary`.

        Use it after changing the code: capture again and call diff with the old run as baseline and
        the new one as candidate. Then call report on the candidate for what to do next."""
        return answer(lambda: tools.diff(baseline, candidate, baseline_host, candidate_host, sections,
                                         _progress(ctx)))

    @tool
    def trend(
        runs: Annotated[Optional[List[str]], Field(
            description="Runs of one series: run directories, run names, unique starts of names, or shell "
            "globs ('resnet50_*'); several join into one series. Default: every run directory is a "
            "series.")] = None,
        order: Annotated[Literal["time", "given"], Field(
            description="Captures in capture-time order, or in the order of `runs`.")] = "time",
        with_captures: Annotated[bool, Field(
            description="Also return each capture's figures (one row per capture; large).")] = False,
        ctx: Optional[Context] = None,
    ) -> CallToolResult:
        """Many captures of one job in order (tb-advisor/trend/1 JSON): per series, the
        `change_points` (where the step time shifted beyond the noise between captures, with
        p-values, and `cause`: the breakdown categories and ops that moved, or `machine` when every
        op moved alike), `noise_pct` and `newest_change`. Use it for CI and nightly series; then call
        diff on the two captures around a change point for the detail."""
        return answer(lambda: tools.trend(runs or (), order, with_captures, _progress(ctx)))

    @tool
    def doctor() -> CallToolResult:
        """Explain what TensorBoard will and will not show for the logdir and how to fix it
        (tb-advisor/doctor/1 JSON: per session its format, hosts, step markers, problems and the
        fix). Call it when list_runs misses a run you expect, or a report has no steps."""
        return answer(tools.doctor)

    @tool
    def evidence_spans(
        run: RunName,
        recommendation_id: Annotated[str, Field(
            description="The `id` of a recommendation (from report) or of a deeper view's finding, e.g. "
            "input.prefetch.")],
        host: HostName = None,
        ctx: Optional[Context] = None,
    ) -> CallToolResult:
        """The few trace events that show one recommendation or finding, most telling first: each
        {kind (input_wait, host_sync, worst_step, slowest_kernel …), host, pid, tid, ts_us, dur_us,
        name, step, thread, format}, in the trace's own coordinates, so the same event can be found
        in the trace viewer or Perfetto. Use it to point at the code that causes the problem."""
        return answer(lambda: tools.evidence_spans(run, recommendation_id, host, _progress(ctx)))

    return server


def _progress(ctx: Optional[Context]) -> Optional[RunProgress]:
    return None if ctx is None else progress_to(ctx)


def serve(tools: AdvisorTools) -> None:
    """Serve the tools over stdin/stdout until the client closes them."""
    build_server(tools).run("stdio")
