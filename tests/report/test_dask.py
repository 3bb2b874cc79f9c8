"""Dask: per-host analyses on a real LocalCluster (2 worker processes on loopback), same JSON as local."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pod_synth import SESSION, even_pod, write_pod

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.report import hostpool
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.runs import find_run
from tb_plugin_advisor.views.cli.main import main as cli_main
from tb_plugin_advisor.views.server.http_errors import PathMapper

pytestmark = pytest.mark.pod_extras
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("dask-pod")
    write_pod(logdir, "job", even_pod(3, slow=["worker1"]))
    return logdir


@pytest.fixture(scope="module")
def scheduler():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def test_dask_local_pool_and_sequential_give_the_same_json(pod, scheduler):
    session = find_run(scan_logdir(str(pod)), f"job/{SESSION}")
    sequential = hostpool.build_session_report(session, workers=1).to_json()
    pooled = hostpool.build_session_report(session, workers=2).to_json()
    on_dask = hostpool.build_session_report(session, scheduler=scheduler).to_json()
    assert json.dumps(on_dask, sort_keys=True) == json.dumps(sequential, sort_keys=True)
    assert json.dumps(pooled, sort_keys=True) == json.dumps(sequential, sort_keys=True)
    assert [s["host"] for s in on_dask["stragglers"]] == ["worker1"]


def test_each_host_ran_as_a_task_on_the_cluster(pod, scheduler):
    session = find_run(scan_logdir(str(pod)), f"job/{SESSION}")
    hostpool.build_session_report(session, scheduler=scheduler)

    def finished_keys(dask_scheduler):
        return [str(t[0]) for t in dask_scheduler.transition_log if t[2] == "memory"]

    with distributed.Client(scheduler, set_as_default=False) as client:
        keys = client.run_on_scheduler(finished_keys)
    ours = [k for k in keys if k.startswith("tb-advisor-")]
    assert {k.split("-")[3] for k in ours} >= {"worker0", "worker1", "worker2"}


def test_cli_report_with_scheduler_matches_the_local_report(pod, scheduler, tmp_path):
    local, remote = tmp_path / "local.json", tmp_path / "dask.json"
    assert cli_main(["report", str(pod), "--format", "json", "-o", str(local)]) == 0
    args = ["report", str(pod), "--format", "json", "--scheduler", scheduler, "-o", str(remote)]
    assert cli_main(args) == 0
    assert json.loads(local.read_text()) == json.loads(remote.read_text())


def test_an_unreachable_scheduler_is_a_clear_error(pod, monkeypatch):
    monkeypatch.setattr(hostpool, "DASK_CONNECT_TIMEOUT_S", 1)
    session = find_run(scan_logdir(str(pod)), f"job/{SESSION}")
    with pytest.raises(AdvisorError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        hostpool.build_session_report(session, scheduler="tcp://127.0.0.1:9")


def test_without_a_scheduler_dask_is_never_imported(pod):
    code = (
        "import sys\n"
        "from tb_plugin_advisor.views.cli.main import main\n"
        f"args = ['report', {str(pod)!r}, '--format', 'json', '--workers', '2', '-o', '/dev/null']\n"
        "assert main(args) == 0\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "print(loaded)\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_tensorboard_with_the_dask_flag_serves_the_same_report(pod, scheduler, tensorboard_factory):
    session = find_run(scan_logdir(str(pod)), f"job/{SESSION}")
    # the server answers with paths relative to the logdir (views/http_errors.PathMapper)
    expected = PathMapper(str(pod)).json(hostpool.build_session_report(session, workers=1).to_json())
    tb = tensorboard_factory(
        str(pod), "--advisor_dask_scheduler", scheduler, "--advisor_write_markers", "false"
    )

    def served():
        status, body = tb.plugin("report", run=f"job/{SESSION}")
        return body if status == 200 else None

    body = tb.wait_for(served, timeout_s=120)
    assert json.dumps(body, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert [s["host"] for s in body["stragglers"]] == ["worker1"]
