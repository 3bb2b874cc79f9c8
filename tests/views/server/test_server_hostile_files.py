"""The server against files that change under it: traces found by the scan, then swapped for FIFOs
or a link to /dev/zero before any request. Ordinary runs still answer 200, the swapped ones a clear
4xx, no worker is held; a stuck analysis is stopped at its time budget; and TensorBoard exits on
SIGTERM without leaving a worker process behind."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import List

import pytest
from fixtures_server import start_tensorboard
from paths import H200, ROOT
from synth_kineto import training_trace
from test_api_tf import poll

from tb_plugin_advisor.views.server.analysis_service import WorkerProcesses
from tb_plugin_advisor.views.server.http_errors import AnalysisTimedOut

CAPTURE = H200 / "mlp_host_sync"


def _children(pid: int) -> List[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pids: List[int], timeout_s: float = 20) -> List[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    return [p for p in pids if _alive(p)]


def test_swapped_traces_answer_4xx_while_an_ordinary_run_answers_200(tmp_path):
    logdir = tmp_path / "logs"
    for run in ("ok", "fifo_a", "fifo_b", "zero"):
        shutil.copytree(CAPTURE, logdir / run)
    # and two hostile documents: nesting that would exhaust the parser's stack, numbers past int64
    hostile = training_trace(steps=3).document()
    kernel = next(e for e in hostile["traceEvents"] if e.get("cat") == "kernel")
    kernel["args"].update({"correlation": 10**30, "est. achieved occupancy %": 1e308})
    (logdir / "huge").mkdir(parents=True)
    (logdir / "huge" / "w.1.pt.trace.json").write_text(json.dumps(hostile))
    (logdir / "deep").mkdir()
    (logdir / "deep" / "w.1.pt.trace.json").write_text(
        '{"traceEvents": [' + "[" * 100_000 + "]" * 100_000 + "]}")
    with start_tensorboard(logdir, "--advisor_reload_interval=0", "--advisor_write_markers=false",
                           "--advisor_workers=2") as tb:
        status, body = tb.plugin("runs")
        assert status == 200 and len(body["runs"]) == 6, body
        names = {r["run"].split("/")[0]: r["run"] for r in body["runs"]}
        if importlib.util.find_spec("torch_tb_profiler") is not None:
            # torch-tb-profiler, when installed beside us, reads every trace on a non-daemon thread
            # with a plain open(): a FIFO swapped in before it is done would hang TensorBoard itself.
            tb.wait_for(lambda: all(f"Run {run} loaded" in tb.log_text() for run in names), timeout_s=180)
        for run in ("fifo_a", "fifo_b"):
            (trace,) = (logdir / run).glob("*.pt.trace.json.gz")
            trace.unlink()
            os.mkfifo(trace)
        (trace,) = (logdir / "zero").glob("*.pt.trace.json.gz")
        trace.unlink()
        trace.symlink_to("/dev/zero")
        began = time.monotonic()
        answers = {}
        for run in ("fifo_a", "fifo_b", "zero"):
            status, body = poll(tb, "report", timeout_s=60, run=names[run])
            answers[run] = (status, body.get("error", ""))
        status, body = poll(tb, "report", timeout_s=120, run=names["ok"])
        assert status == 200 and body["steps"]["count"] >= 4, body
        status, body = poll(tb, "report", timeout_s=60, run=names["deep"])
        assert status == 422 and "nested too deeply" in body["error"], body
        reply = tb.get("/data/plugin/advisor/report?run=" + urllib.parse.quote(names["huge"]))
        while reply.status == 202:
            time.sleep(0.5)
            reply = tb.get("/data/plugin/advisor/report?run=" + urllib.parse.quote(names["huge"]))
        assert reply.status == 200
        report = json.loads(reply.body, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
        assert any("out of range" in w for w in report["warnings"]), report["warnings"]
        for run, (status, error) in answers.items():
            assert 400 <= status < 500, (run, status, error)
            assert "Traceback" not in error and str(tmp_path) not in error
        assert time.monotonic() - began < 120
        worker_pids = [p for p in _children(tb.process.pid)]
        tb.process.send_signal(signal.SIGTERM)
        try:
            tb.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError("TensorBoard ignored SIGTERM:\n" + tb.log_text()[-3000:]) from None
        assert _wait_gone(worker_pids) == [], "a worker outlived TensorBoard"


def test_a_stuck_analysis_is_stopped_at_its_budget_and_its_worker_replaced():
    workers = WorkerProcesses(2, timeout_s=8)
    innocent: dict = {}

    def bystander() -> None:  # runs from 1 s before the kill to 2 s after it; 3 s fit the budget
        time.sleep(7)
        try:
            innocent["result"] = workers.call(time.sleep, 3)
        except Exception as error:  # noqa: BLE001 - recorded for the assertion below
            innocent["error"] = error

    try:
        other = threading.Thread(target=bystander)
        other.start()
        with pytest.raises(AnalysisTimedOut, match="longer than 8 s"):
            workers.call(time.sleep, 600)
        assert isinstance(workers.call(os.getpid), int)  # a fresh worker answers
        other.join(timeout=60)
        assert innocent == {"result": None}, "a task sharing the killed pool runs again"
    finally:
        workers.terminate()


def _descendants(pid: int) -> List[int]:
    found = []
    for child in _children(pid):
        found += [child, *_descendants(child)]
    return found


def _killed_while_busy(tmp_path: Path, script_text: str, processes: int) -> List[int]:
    """Run `script_text` as a server process, SIGKILL it once it has `processes` descendants busy
    with their tasks, and return those descendants' pids."""
    script = tmp_path / "killed_while_busy.py"
    script.write_text(script_text)
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    server = subprocess.Popen([sys.executable, str(script)], env=env)
    try:
        deadline = time.monotonic() + 120
        while len(_descendants(server.pid)) < processes and time.monotonic() < deadline:
            time.sleep(0.2)
        descendants = _descendants(server.pid)
        assert len(descendants) >= processes, descendants
        time.sleep(3)  # they have started their tasks
    finally:
        server.kill()
        server.wait()
    return descendants


def test_workers_end_when_the_server_is_killed(tmp_path):
    """SIGKILL runs no exit hook: the workers notice their parent is gone and end themselves."""
    workers = _killed_while_busy(tmp_path, (
        "import os, threading, time\n"
        "from tb_plugin_advisor.views.server.analysis_service import WorkerProcesses\n"
        "if __name__ == '__main__':\n"
        "    w = WorkerProcesses(2)\n"
        "    for _ in range(2):\n"
        "        threading.Thread(target=w.call, args=(time.sleep, 600), daemon=True).start()\n"
        "    time.sleep(600)\n"
    ), processes=3)  # 2 workers + resource tracker
    assert _wait_gone(workers) == [], "orphaned workers"


def test_the_workers_of_a_run_of_several_hosts_end_with_the_server(tmp_path):
    """A server worker reading a run of several hosts starts a pool of its own (report/hostpool.py):
    when the server is killed, its worker ends and so do the hosts' workers (they waited on their
    queue for good, found after a notebook test's TensorBoard was stopped)."""
    descendants = _killed_while_busy(tmp_path, (
        "import time\n"
        "from tb_plugin_advisor.report.hostpool import host_pool\n"
        "from tb_plugin_advisor.views.server.analysis_service import WorkerProcesses\n"
        "def hosts():\n"
        "    with host_pool(2) as pool:\n"
        "        for _ in range(2):\n"
        "            pool.submit(time.sleep, 600)\n"
        "        time.sleep(600)\n"
        "if __name__ == '__main__':\n"
        "    WorkerProcesses(1).call(hosts)\n"
    ), processes=4)  # the server's worker and resource tracker, and the hosts' two workers
    assert _wait_gone(descendants) == [], "orphaned workers"
