"""The tab on a multi-host run: the per-host table marks the stragglers and says by how much."""

from __future__ import annotations

import pytest
import test_browser
from fixtures_server import start_tensorboard
from pod_synth import SESSION, even_pod, write_pod

pytestmark = pytest.mark.browser
browser_tools = test_browser.browser_tools  # the same checked fixture (node, chromium, playwright)


def test_per_host_table_marks_stragglers(browser_tools, tmp_path):
    logdir = tmp_path / "pod"
    write_pod(logdir, "job", even_pod(4, slow=["worker2"], input_heavy=["worker3"]))
    run = f"job/{SESSION}"
    with start_tensorboard(logdir) as server:
        status, report = server.plugin("report", run=run, timeout=120)
        while status == 202:
            status, report = server.plugin("report", run=run, timeout=120)
        assert status == 200 and len(report["stragglers"]) == 2
        steps = [
            {"do": "openAdvisor"},
            {"do": "selectRun", "run": run},
            {"do": "expectCount", "selector": '[data-testid="per-host-table"] tbody tr', "min": 4, "max": 4},
            {"do": "expectCount", "selector": '[data-testid="straggler-badge"]', "min": 2, "max": 2},
            {
                "do": "expectText",
                "testid": "stragglers",
                "match": r"worker2: step time \+30\.0% vs the median host",
            },
            {"do": "screenshot", "name": "advisor-per-host"},
        ]
        test_browser.drive(browser_tools, tmp_path, "per-host", server.url + "/#advisor", steps)
