"""The tab's "What this trace supports" card: collapsed on a trace that supports every analysis, open
on a real H200 capture whose shapes were removed, where the MFU reads "—" with the reason on hover
and the verdict card carries no reader housekeeping."""

from __future__ import annotations

import shutil

import pytest
import test_browser
from degraded_traces import load_trace, without_input_dims, write_trace
from fixtures_server import start_tensorboard
from paths import H200, SAMPLE_LOGDIR

pytestmark = pytest.mark.browser
browser_tools = test_browser.browser_tools  # the same checked fixture (node, chromium, playwright)

TRANSFORMER = H200 / "transformer_fp32" / "gpu0.1795771384025155384.pt.trace.json.gz"


def _ready(server, run: str) -> dict:
    status, report = server.plugin("report", run=run, timeout=120)
    while status == 202:
        status, report = server.plugin("report", run=run, timeout=120)
    assert status == 200
    return report


def test_validity_card_collapses_or_opens_and_withholds_the_mfu(browser_tools, tmp_path):
    logdir = tmp_path / "logs"
    shutil.copytree(SAMPLE_LOGDIR / "run1_naive", logdir / "run1_naive")
    write_trace(without_input_dims(load_trace(TRANSFORMER)), logdir / "no_shapes", TRANSFORMER.name)
    with start_tensorboard(logdir) as server:
        runs = [r["run"] for r in server.wait_for(lambda: server.plugin("runs")[1]["runs"])]
        sample_run = next(r for r in runs if r.startswith("run1"))
        degraded_run = next(r for r in runs if r.startswith("no_shapes"))
        sample = _ready(server, sample_run)
        assert all(row["status"] == "supported" for row in sample["validity"]["rows"])
        degraded = _ready(server, degraded_run)
        roofline = next(r for r in degraded["validity"]["rows"] if r["analysis"] == "roofline")
        assert roofline["status"] == "unsupported"
        card = '[data-testid="validity-card"]'
        withheld = '[data-testid="withheld-roofline-value"]'
        steps = [
            {"do": "openAdvisor"},
            {"do": "selectRun", "run": sample_run},
            {"do": "expectCount", "selector": f"{card}:not([open])", "min": 1, "max": 1},
            {"do": "expectText", "testid": "validity-summary", "match": "Every one of the 11 analyses"},
            {"do": "selectRun", "run": degraded_run},
            {"do": "expectCount", "selector": f"{card}[open]", "min": 1, "max": 1},
            # not first: the verdict stands (steps and breakdown are supported); right after it
            {"do": "expectCount", "selector": f'[data-testid="verdict-card"] + {card}', "min": 1, "max": 1},
            {"do": "expectText", "testid": "validity-table",
             "match": "FLOPs, roofline and MFU\\s*unsupported"},
            {"do": "expectText", "testid": "validity-table", "match": "record_shapes=True"},
            {"do": "expectExactText", "testid": "withheld-roofline-value", "text": "—"},
            {"do": "collect", "selector": withheld, "attr": "title", "min": 1},
            {"do": "collect", "selector": '[data-testid="warnings"] li', "min": 0},
            {"do": "screenshot", "name": "advisor-validity"},
        ]
        result = test_browser.drive(browser_tools, tmp_path, "validity", server.url + "/#advisor", steps)
    collected = [r for r in result["steps"] if isinstance(r, dict) and "items" in r]
    assert collected[0]["items"][0]["attr"] == roofline["reason"]
    assert not any("overlapped" in item["text"] for item in collected[1]["items"])
