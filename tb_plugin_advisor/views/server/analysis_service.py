"""Analyses that never block the server: worker processes, shared in-flight futures, a bounded cache.

Each analysis (one run's or host's report, one diff) runs in a worker *process* (spawn context), so
the server's GIL is never held by a parse and the server never holds a Profile: workers send back
the answer's JSON bytes. A worker serves analysis after analysis while each leaves it holding
little (a series of small captures costs one process start, not one each); one that a large
profile left holding more than `keep_bytes` once its freed pages went back is replaced at once, so
that memory goes back to the OS, and every worker is replaced after `tasks_per_worker` tasks.
Every task has a time budget: a worker stuck past it (a hung network file system, a file that
blocks a read) is killed with its pool, the request gets a clear 504, and the tasks that shared
that pool run again on a fresh one; a worker also ends itself when the server process is gone, so
no worker outlives TensorBoard. A small pool of daemon threads
waits on those processes and runs the light in-server work (doctor). Finished answers are kept
serialised (and gzipped) in an LRU bounded by entries and by bytes; concurrent requests for one key
share one future; a request that waits longer than `wait_s` gets 202 and polls again.
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import queue
import sys
import threading
import weakref
from collections import OrderedDict
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, Optional, Tuple

from tb_plugin_advisor.formatting import plain
from tb_plugin_advisor.views.server.http_errors import AnalysisTimedOut, ApiError, WorkerCrashed
from tb_plugin_advisor.views.server.worker_tasks import encode, measured, warm_up

DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
# One analysis may take this long before its worker is replaced: a 512 MB profile (the default
# size cap) reads and reports in about a minute on a slow core, so ten minutes means stuck.
DEFAULT_TASK_TIMEOUT_S = 600.0
NATIVE_RECYCLING = sys.version_info >= (3, 11)  # ProcessPoolExecutor(max_tasks_per_child=...)
# A worker is replaced once an analysis leaves it holding more than this beyond its warm start (its
# freed pages returned): a small capture's report leaves a few MB of caches; a large profile's
# leaves its heap's fragments, which only the process's end gives back.
DEFAULT_KEEP_BYTES = 64 * 1024 * 1024
# Analyses a worker runs at most before it is replaced, however little each left behind.
DEFAULT_TASKS_PER_WORKER = 100


@dataclass(frozen=True)
class Answer:
    """A finished JSON answer, serialised once: `body` plain, `gzipped` for clients that accept it."""

    body: bytes
    gzipped: bytes

    @classmethod
    def of_value(cls, value: Any) -> Answer:
        return cls(*encode(value))

    @property
    def nbytes(self) -> int:
        return len(self.body) + len(self.gzipped)

    def value(self) -> Any:
        return json.loads(self.body)


def nbytes(value: Any) -> int:
    """What a cached value costs: an Answer's bytes, a string's length, else 0 (small test values)."""
    if isinstance(value, Answer):
        return value.nbytes
    if isinstance(value, (bytes, str)):
        return len(value)
    return 0


class DaemonPool:
    """A fixed set of daemon worker threads returning futures.

    concurrent.futures' thread pool joins its threads at interpreter exit, so Ctrl+C on TensorBoard
    would wait for a long analysis; nobody needs a half-made report after the server is gone.
    """

    def __init__(self, workers: int, name: str = "advisor"):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()  # (future, fn) items; None stops a worker
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
            for i in range(max(1, workers))
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[[], Any]) -> concurrent.futures.Future:
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((fut, fn))
        return fut

    def shutdown(self) -> None:
        for _ in self._threads:
            self._queue.put(None)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fut, fn = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as e:  # noqa: BLE001 - delivered to every waiter
                fut.set_exception(e)
            else:
                fut.set_result(result)


class WorkerProcesses:
    """A spawn-context process pool that is rebuilt when a worker dies; `call` runs one task."""

    def __init__(self, processes: int, tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER,
                 timeout_s: float = DEFAULT_TASK_TIMEOUT_S, keep_bytes: int = DEFAULT_KEEP_BYTES):
        self.processes = max(1, processes)
        self.tasks_per_worker = max(1, tasks_per_worker)
        self.timeout_s = timeout_s
        self.keep_bytes = keep_bytes
        self.retired = 0  # pools replaced because an analysis left a worker holding memory
        self._abandoned: weakref.WeakSet = weakref.WeakSet()  # pools killed for a stuck task
        self._lock = threading.Lock()
        self._pool: Optional[concurrent.futures.ProcessPoolExecutor] = None
        self._in_flight = 0  # tasks submitted and not finished, over every pool
        self._done_tasks = 0  # tasks finished by the current pool
        # concurrent.futures joins its workers when the interpreter exits, so Ctrl+C on TensorBoard
        # would wait for a running analysis; end them first (threading's exit hooks run last-in
        # first-out, and concurrent.futures registered its own when it was imported).
        register = getattr(threading, "_register_atexit", None)
        if register is not None:
            register(self.terminate)

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                recycle = {"max_tasks_per_child": self.tasks_per_worker} if NATIVE_RECYCLING else {}
                self._pool = concurrent.futures.ProcessPoolExecutor(
                    max_workers=self.processes,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=warm_up,
                    initargs=(os.getpid(),),
                    **recycle,
                )
                self._done_tasks = 0
            self._in_flight += 1
            return self._pool

    def _task_done(self, pool: concurrent.futures.ProcessPoolExecutor, held: Optional[int]) -> None:
        """Replace the pool whose worker an analysis left holding `held` bytes over `keep_bytes` (or
        an unknown amount); its other tasks still finish there, new ones go to a fresh pool. Python
        < 3.11 cannot recycle single workers: replace the whole pool once it is idle."""
        with self._lock:
            self._in_flight -= 1
            self._done_tasks += 1
            if self._pool is not pool:
                return
            left_memory = held is None or held > self.keep_bytes
            spent = not NATIVE_RECYCLING and not self._in_flight and (
                self._done_tasks >= self.tasks_per_worker * self.processes)
            if not (left_memory or spent):
                return
            self.retired += left_memory
            self._pool = None
        pool.shutdown(wait=False)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` in a worker; AnalysisTimedOut past the time budget, WorkerCrashed when the
        worker died. A task whose pool was killed for another task's sake runs again, once."""
        for attempt in (1, 2):
            pool = self._executor()
            held: Optional[int] = None  # unknown until the worker says: the pool is then replaced
            try:
                value, held = pool.submit(measured, fn, *args).result(timeout=self.timeout_s)
                return value
            except ApiError as e:  # the analysis's own answer, e.g. a profile refused at the size cap
                held = getattr(e, "held_bytes", None)
                raise
            except concurrent.futures.TimeoutError:
                self._kill(pool)
                raise AnalysisTimedOut(
                    f"the analysis took longer than {plain(self.timeout_s)} s (a file on a hung file system, "
                    "or a profile far larger than usual?); its worker was stopped and replaced. Raise "
                    "the budget with --advisor_analysis_timeout"
                ) from None
            except BrokenProcessPool:
                if pool in self._abandoned and attempt == 1:
                    continue  # killed because another task was stuck: this one is innocent
                self._kill(pool)
                raise WorkerCrashed(
                    "an Advisor worker process ended without an answer (killed or out of memory); "
                    "the workers were restarted: try again, or give the TensorBoard machine more memory"
                ) from None
            finally:
                self._task_done(pool, held)
        raise AssertionError("unreachable")

    def _kill(self, pool: concurrent.futures.ProcessPoolExecutor) -> None:
        """Detach `pool` (the next task gets a fresh one) and kill its processes: a stuck worker
        cannot be interrupted, and concurrent.futures cannot tell which worker holds which task."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
            self._abandoned.add(pool)
        for process in dict(getattr(pool, "_processes", None) or {}).values():
            process.kill()
        pool.shutdown(wait=False, cancel_futures=True)

    def shutdown(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def terminate(self) -> None:
        """Stop now: kill the workers (nobody needs a half-made report after the server is gone)."""
        with self._lock:
            pool = self._pool
        processes = dict(getattr(pool, "_processes", None) or {})
        for process in processes.values():
            process.kill()
        self.shutdown()


class AnalysisService:
    """Runs analyses on worker threads (which hand heavy work to processes); caches; shares futures.

    `result(key, compute)` returns (True, value) when the value is ready within `wait_s`, else
    (False, None): the caller answers 202 and the same future keeps running for the next poll.
    Exceptions from `compute` are re-raised to every waiter; only ApiError outcomes (a corrupt
    file is corrupt until it changes, and then its key changes) are remembered. The cache keeps at
    most `cache_size` entries and `cache_bytes` bytes of answers, the newest entry always (a client
    polling for a big report must find it).
    """

    def __init__(
        self,
        workers: int = 2,
        cache_size: int = 32,
        wait_s: float = 2.0,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER,
        scheduler: Optional[str] = None,
        task_timeout_s: float = DEFAULT_TASK_TIMEOUT_S,
    ):
        self.scheduler = scheduler  # a Dask scheduler address: a run's hosts are analysed there
        self.wait_s = wait_s
        self.cache_size = max(1, cache_size)
        self.cache_bytes = max(0, cache_bytes)
        self.processes = WorkerProcesses(workers, tasks_per_worker, task_timeout_s)
        self._pool = DaemonPool(workers)
        self._lock = threading.RLock()
        self._done: OrderedDict[Hashable, concurrent.futures.Future] = OrderedDict()
        self._sizes: Dict[Hashable, int] = {}
        self._running: Dict[Hashable, concurrent.futures.Future] = {}
        self.computed = 0  # how many computations actually ran (tests check sharing with it)

    def future(self, key: Hashable, compute: Callable[[], Any]) -> concurrent.futures.Future:
        with self._lock:
            fut = self._done.get(key)
            if fut is not None:
                self._done.move_to_end(key)
                return fut
            fut = self._running.get(key)
            if fut is not None:
                return fut
            fut = self._pool.submit(lambda: self._counted(compute))
            self._running[key] = fut
            fut.add_done_callback(lambda f, k=key: self._finished(k, f))
            return fut

    def result(
        self, key: Hashable, compute: Callable[[], Any], wait_s: Optional[float] = None
    ) -> Tuple[bool, Any]:
        return wait(self.future(key, compute), self.wait_s if wait_s is None else wait_s)

    def in_process(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run picklable `fn(*args)` in a worker process (call from a compute function)."""
        return self.processes.call(fn, *args)

    def cached(self, key: Hashable) -> Optional[concurrent.futures.Future]:
        with self._lock:
            return self._done.get(key)

    @property
    def cached_bytes(self) -> int:
        with self._lock:
            return sum(self._sizes.values())

    def shutdown(self) -> None:
        self._pool.shutdown()
        self.processes.shutdown()

    def _counted(self, compute: Callable[[], Any]) -> Any:
        with self._lock:
            self.computed += 1
        return compute()

    def _finished(self, key: Hashable, fut: concurrent.futures.Future) -> None:
        with self._lock:
            if self._running.get(key) is fut:
                del self._running[key]
            error = fut.exception() if not fut.cancelled() else None
            if fut.cancelled() or (error is not None and (not isinstance(error, ApiError) or error.retry)):
                return
            self._done[key] = fut
            self._done.move_to_end(key)
            self._sizes[key] = nbytes(fut.result()) if error is None else 0
            total = sum(self._sizes.values())
            while len(self._done) > 1 and (len(self._done) > self.cache_size or total > self.cache_bytes):
                old, _ = self._done.popitem(last=False)
                total -= self._sizes.pop(old, 0)


def wait(fut: concurrent.futures.Future, timeout: float) -> Tuple[bool, Any]:
    try:
        return True, fut.result(timeout=max(0.0, timeout))
    except concurrent.futures.TimeoutError:
        return False, None
