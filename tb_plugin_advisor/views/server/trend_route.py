"""The `trend?run=PATTERN[&order=time|given]` route: the series PATTERN names (trend/select.py), each
capture's report from the same futures as the `report` route (so the persistent and the in-memory
caches serve them), and the trend computed in a worker once all are there; until then 202 with
`progress` {`stage`, `done`, `total`, `elapsed_s`}. A capture that cannot be read is listed with its
error, not fatal.

The bodies answered so far are kept per trend between polls (`api.trend_parts`): a series longer
than the in-memory report cache (`--advisor_cache_size`) would otherwise never have all its reports
at once — each poll would analyse again the captures the previous one evicted."""

from __future__ import annotations

import json
import time
from typing import Any, Dict, List, Tuple

from tb_plugin_advisor.views.server.analysis_service import Answer, wait
from tb_plugin_advisor.views.server.http_errors import ApiError
from tb_plugin_advisor.views.server.worker_tasks import Encoded, encode


def trend_answer(series: List[Tuple[str, List[Any]]], bodies: Dict[str, Any]) -> Encoded:
    """Worker task: the trend JSON from the sessions of each series and their report bodies (bytes)
    or errors (str)."""
    from tb_plugin_advisor.trend.collect import trend_of

    outcomes = {run: json.loads(b) if isinstance(b, bytes) else b for run, b in bodies.items()}
    return encode(trend_of(series, outcomes))


def trend_route(api: Any, request: Any, param: Any) -> Tuple[bool, Any, Dict[str, Any]]:
    """(ready, Answer, running info) for a trend request; `api` is the AdvisorApi."""
    from tb_plugin_advisor.errors import AdvisorError
    from tb_plugin_advisor.readers.formats.registry import is_analysed
    from tb_plugin_advisor.trend.select import select_series

    pattern = param(request, "run")
    order = param(request, "order", required=False) or "time"
    sessions = [s for s in api.discovery.scan.sessions if is_analysed(s.format) and s.hosts]
    try:
        series = select_series(sessions, [pattern], order, "the logdir")
    except AdvisorError as e:
        raise ApiError(404 if "no run matches" in str(e) else 400, str(e)) from None
    chosen = list({s.run: s for _, group in series for s in group}.values())
    key = ("trend", order, tuple((s.cache_key) for s in chosen), pattern)
    bodies: Dict[str, Any] = api.trend_parts.get(key)
    if bodies is None:
        bodies = api.trend_parts[key] = {}
    started = time.monotonic()
    deadline = started + api.service.wait_s
    futures = [(s, api._report_future(s, None)) for s in chosen if s.run not in bodies]
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
        return Answer(*api.service.in_process(trend_answer, series, bodies))

    ready, value = api.service.result(key, compute, max(0.0, deadline - time.monotonic()))
    return ready, value, running
