"""A TensorBoard whose Advisor has known faults, for tests of the 500/503 answers and of isolation.

Run as `python -c "import advisor_faults; advisor_faults.main()" --logdir ...` (tests/ on PYTHONPATH).
Runs whose name starts with:
  bug/    raise a RuntimeError in the worker process (a bug of ours: 500 with an id)
  crash/  kill the worker process (SIGKILL, as the OOM killer would: 503, then the pool recovers)
  pid/    answer {"pid": <the worker's pid>} (the analysis runs outside the server's process)
Every other run is analysed normally. Doctor answers gain "worker_pid" (the process that read the
profiles). The patched function lives in this module, so worker
processes import it by name when they unpickle the task.
"""

from __future__ import annotations

import json
import os
import signal
import sys

from tb_plugin_advisor.views.server import worker_tasks

real_report_answer = worker_tasks.report_answer
real_doctor_answer = worker_tasks.doctor_answer


def faulty_report_answer(session, host, logdir, scheduler=None, progress_path=None):
    if session.run.startswith("bug/"):
        raise RuntimeError("forced bug for the 500 test")
    if session.run.startswith("crash/"):
        os.kill(os.getpid(), signal.SIGKILL)
    if session.run.startswith("pid/"):
        return worker_tasks.encode({"pid": os.getpid()})
    return real_report_answer(session, host, logdir, scheduler, progress_path)


def doctor_answer_with_pid(scan, memo, logdir):
    body, _gzipped, checks = real_doctor_answer(scan, memo, logdir)
    return (*worker_tasks.encode(dict(json.loads(body), worker_pid=os.getpid())), checks)


def main() -> None:
    from tensorboard.main import run_main

    worker_tasks.report_answer = faulty_report_answer
    worker_tasks.doctor_answer = doctor_answer_with_pid
    sys.argv[0] = "tensorboard"
    run_main()
