"""The `trend?run=PATTERN[&order=time|given]` route: the series PATTERN names (trend/select.py), each
capture's report from the same futures as the `report` route (so the persistent and the in-memory
caches serve them), and the trend computed in a worker once all are there; until then 202 with
`progress` {`stage`, `done`, `total`, `elapsed_s`}. A capture that cannot be read is listed with its
error, not fatal.

The bodies answered so far are kept per trend between polls (`api.trend_parts`): a series longer
than the in-memory report cache (`--advisor_cache_size`) would otherwise never have all its reports
at once — each poll would analyse again the captures the previous one evicted."""

from __future__ import annotations

import concurrent.futures
import json
import time
from typing import Any, Callable, Dict, Hashable, List, MutableMapping, Optional, Sequence, Tuple

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.sources.session import Session
from tb_plugin_advisor.views.server.analysis_service import AnalysisService, Answer, wait
from tb_plugin_advisor.views.server.http_errors import ApiError
from tb_plugin_advisor.views.server.worker_tasks import Encoded, encode

# The report route's future for a session (all hosts): the API's in-memory cache, else the
# persistent cache, else a worker (api.AdvisorApi._report_future).
ReportFuture = Callable[[Session, Optional[str]], concurrent.futures.Future]
# The bodies answered so far per trend being gathered, by run name: bytes, or the error's words.
TrendParts = MutableMapping[Hashable, Dict[str, Any]]


def trend_answer(series: List[Tuple[str, List[Session]]], bodies: Dict[str, Any]) -> Encoded:
    """Worker task: the trend JSON from the sessions of each series and their report bodies (bytes)
    or errors (str)."""
    from tb_plugin_advisor.trend.build import trend_of

    outcomes = {run: json.loads(b) if isinstance(b, bytes) else b for run, b in bodies.items()}
    return encode(trend_of(series, outcomes))


def trend_route(pattern: str, order: str, sessions: Sequence[Session], report_future: ReportFuture,
                service: AnalysisService, parts: TrendParts) -> Tuple[bool, Optional[Answer], Dict[str, Any]]:
    """(ready, Answer, running info) for the trend of `pattern` over the readable `sessions`."""
    from tb_plugin_advisor.trend.select import select_series

    try:
        series = select_series(sessions, [pattern], order, "the logdir")
    except AdvisorError as e:
        raise ApiError(404 if "no run matches" in str(e) else 400, str(e)) from None
    chosen = list({s.run: s for _, group in series for s in group}.values())
    key = ("trend", order, tuple((s.cache_key) for s in chosen), pattern)
    bodies = parts.get(key)
    if bodies is None:
        bodies = parts[key] = {}
    started = time.monotonic()
    deadline = started + service.wait_s
    futures = [(s, report_future(s, None)) for s in chosen if s.run not in bodies]
    for session, future in futures:
        try:
            ready, value = wait(future, deadline - time.monotonic())
        except ApiError as e:
            bodies[session.run] = e.message
            continue
        if ready:
            bodies[session.run] = value.body
    elapsed = round(time.monotonic() - started, 3)
    progress = {"stage": "analysing captures", "done": len(bodies), "total": len(chosen),
                "elapsed_s": elapsed}
    running = {"run": pattern, "progress": progress}
    if len(bodies) < len(chosen):
        return False, None, running

    def compute() -> Answer:
        return Answer(*service.in_process(trend_answer, series, bodies))

    ready, answer = service.result(key, compute, max(0.0, deadline - time.monotonic()))
    return ready, answer, running
