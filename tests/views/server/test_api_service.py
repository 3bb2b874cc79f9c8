"""AnalysisService: shared in-flight analyses, bounded LRU, 202-style timeouts, errors."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from paths import ROOT

from tb_plugin_advisor.views.server.analysis_service import AnalysisService, Answer
from tb_plugin_advisor.views.server.http_errors import ApiError


def test_concurrent_requests_share_one_computation():
    service = AnalysisService(workers=2, wait_s=5)
    gate = threading.Event()
    runs = []

    def compute():
        runs.append(1)
        gate.wait(5)
        return {"answer": 42}

    results = []
    def request():
        results.append(service.result("k", compute))

    threads = [threading.Thread(target=request) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join(10)
    assert results == [(True, {"answer": 42})] * 8
    assert len(runs) == 1 and service.computed == 1
    # Finished: answered from the cache, no new computation.
    assert service.result("k", compute) == (True, {"answer": 42})
    assert service.computed == 1


def test_slow_analysis_answers_not_ready_then_ready_and_does_not_block_others():
    service = AnalysisService(workers=2, wait_s=0.2)
    gate = threading.Event()

    def slow():
        gate.wait(10)
        return "slow done"

    started = time.monotonic()
    assert service.result("slow", slow) == (False, None)
    assert time.monotonic() - started < 1.0
    # Another analysis runs on the second worker meanwhile.
    assert service.result("fast", lambda: "fast done") == (True, "fast done")
    assert service.result("slow", slow) == (False, None)  # still the same in-flight future
    gate.set()
    assert service.result("slow", slow, wait_s=5) == (True, "slow done")
    assert service.computed == 2


def test_lru_is_bounded_and_evicts_oldest():
    service = AnalysisService(workers=1, cache_size=3, wait_s=5)
    for key in "abcd":
        assert service.result(key, lambda key=key: key.upper()) == (True, key.upper())
    deadline = time.monotonic() + 5
    while service.cached("d") is None:  # the done-callback runs right after the result is set
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert service.cached("a") is None
    assert [k for k in "bcd" if service.cached(k) is not None] == ["b", "c", "d"]
    service.result("b", lambda: "B")  # touch b: c becomes the oldest
    service.result("e", lambda: "E")
    deadline = time.monotonic() + 5
    while service.cached("e") is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert service.cached("c") is None and service.cached("b") is not None


def test_client_errors_are_remembered_other_failures_retried():
    service = AnalysisService(workers=1, wait_s=5)
    calls = {"bad": 0, "flaky": 0}

    def bad():
        calls["bad"] += 1
        raise ApiError(422, "corrupt")

    def flaky():
        calls["flaky"] += 1
        raise RuntimeError("transient")

    for _ in range(3):
        with pytest.raises(ApiError):
            service.result("bad", bad)
        with pytest.raises(RuntimeError):
            service.result("flaky", flaky)
        time.sleep(0.05)
    assert calls == {"bad": 1, "flaky": 3}


def test_cache_is_bounded_by_bytes_and_keeps_the_newest_entry():
    service = AnalysisService(workers=1, cache_size=100, cache_bytes=2500, wait_s=5)

    def answer(n: int) -> Answer:
        return Answer(b"x" * n, b"")

    for key in ("a", "b"):
        service.result(key, lambda: answer(1000))
    settle(service, "b")
    assert service.cached("a") is not None and service.cached_bytes == 2000
    service.result("c", lambda: answer(1000))  # 3000 > 2500: the oldest goes
    settle(service, "c")
    assert service.cached("a") is None and service.cached_bytes == 2000
    service.result("huge", lambda: answer(10_000))  # over the whole budget: kept alone
    settle(service, "huge")
    assert [k for k in ("b", "c", "huge") if service.cached(k)] == ["huge"]
    assert service.cached_bytes == 10_000


def test_answers_count_their_plain_and_gzipped_bytes():
    value = {"ops": ["MatMul"] * 1000}
    stored = Answer.of_value(value)
    assert stored.value() == value
    assert stored.nbytes == len(stored.body) + len(stored.gzipped)
    assert len(stored.gzipped) < len(stored.body) / 10


def test_work_sent_to_a_process_runs_in_another_process():
    service = AnalysisService(workers=1, wait_s=60)
    try:
        ready, pid = service.result("pid", lambda: service.in_process(os.getpid))
        assert ready and pid != os.getpid()
    finally:
        service.shutdown()


def settle(service: AnalysisService, key: str) -> None:
    deadline = time.monotonic() + 5
    while service.cached(key) is None:  # the done-callback runs right after the result is set
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_interpreter_exit_does_not_wait_for_a_running_worker(tmp_path):
    """Ctrl+C on TensorBoard must not wait for a long analysis (concurrent.futures would join it)."""
    script = tmp_path / "exit_while_busy.py"
    script.write_text(
        "import threading, time\n"
        "from tb_plugin_advisor.views.server.analysis_service import WorkerProcesses\n"
        "if __name__ == '__main__':\n"
        "    w = WorkerProcesses(1)\n"
        "    threading.Thread(target=w.call, args=(time.sleep, 600), daemon=True).start()\n"
        "    time.sleep(2)\n"
        "    raise KeyboardInterrupt\n"
    )
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    # The worker sleeps 600 s; the process must end long before that (the bound is not a timing).
    subprocess.run([sys.executable, str(script)], env=env, capture_output=True, timeout=300)


@pytest.mark.parametrize("native", [True, False])
def test_workers_are_replaced_after_their_tasks(monkeypatch, native):
    """A recycled worker gives its memory back; Python < 3.11 replaces the whole idle pool instead."""
    from tb_plugin_advisor.views.server import analysis_service

    if native and not analysis_service.NATIVE_RECYCLING:
        pytest.skip("max_tasks_per_child needs Python 3.11")
    monkeypatch.setattr(analysis_service, "NATIVE_RECYCLING", native)
    workers = analysis_service.WorkerProcesses(1, tasks_per_worker=1)
    try:
        pids = [workers.call(os.getpid) for _ in range(3)]
    finally:
        workers.shutdown()
    assert len(set(pids)) == 3 and os.getpid() not in pids


# Run in a worker: keeps 200 MB (touched pages, not a lazily zeroed mapping) alive in that process,
# as a large profile's heap fragments would; the temporary `b"x" * n` itself is freed.
HOLD_200_MB = "import sys; sys.advisor_test_held = bytearray(b'x' * (200 << 20))"
# Run in a worker: takes 200 MB and frees it before it returns, as a report of a profile does.
TAKE_AND_FREE_200_MB = "bytearray(b'x' * (200 << 20))"


def test_a_worker_serves_many_analyses_that_leave_it_holding_little():
    """Small captures must not cost a process start each (the trend route over a long series): a
    worker whose analyses gave their memory back keeps serving, even after one that took 200 MB."""
    from tb_plugin_advisor.views.server import analysis_service

    workers = analysis_service.WorkerProcesses(1)
    try:
        pids = [workers.call(os.getpid)]
        workers.call(exec, TAKE_AND_FREE_200_MB)
        pids += [workers.call(os.getpid) for _ in range(3)]
    finally:
        workers.shutdown()
    assert len(set(pids)) == 1 and os.getpid() not in pids and workers.retired == 0


def test_a_worker_left_holding_memory_is_replaced_at_once():
    """Memory a large analysis leaves behind goes back to the OS before the next analysis: the
    worker that holds it is replaced, however many tasks it may still run."""
    from tb_plugin_advisor.views.server import analysis_service

    workers = analysis_service.WorkerProcesses(1, tasks_per_worker=100)
    try:
        before = workers.call(os.getpid)
        assert workers.call(os.getpid) == before  # kept while it holds nothing
        workers.call(exec, HOLD_200_MB)
        after = workers.call(os.getpid)
        held = workers.call(exec, "import sys; assert not hasattr(sys, 'advisor_test_held')")
    finally:
        workers.shutdown()
    assert after != before and held is None and workers.retired == 1


def test_an_error_answer_still_says_what_its_worker_holds():
    """A profile refused at the size cap may have been read up to the cap: the worker that answered
    the error is replaced when it holds memory, and kept when it does not."""
    from tb_plugin_advisor.views.server import analysis_service

    workers = analysis_service.WorkerProcesses(1, tasks_per_worker=100)
    try:
        first = workers.call(os.getpid)
        with pytest.raises(ApiError):
            workers.call(_refuse, "")
        assert workers.call(os.getpid) == first and workers.retired == 0
        with pytest.raises(ApiError):
            workers.call(_refuse, HOLD_200_MB)
        assert workers.call(os.getpid) != first and workers.retired == 1
    finally:
        workers.shutdown()


def _refuse(code: str) -> None:
    exec(code)
    raise ApiError(422, "refused")
