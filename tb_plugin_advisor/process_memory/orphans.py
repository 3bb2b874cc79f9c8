"""Worker processes end when the process that started them is gone.

A pool worker of the spawn context waits on its pool's queue for the next task; when the process
that made the pool dies (TensorBoard stopped or killed, a notebook kernel restarted), nothing wakes
it: the queue's pipe stays open in the pool's other workers. It would then hold its memory and open
files for as long as the machine runs, a process per worker, and for a worker of a worker too (the
server's analysis workers start a pool of their own for a run of several hosts). So every pool the
Advisor starts is given `end_with_parent` as its initializer, with the pid of the process making the
pool: a thread that ends the worker at once, even if its task is blocked in a system call, once the
worker has been re-parented. The pid is taken by the maker, not read in the worker: a maker killed
while a worker was starting leaves that worker re-parented before its initializer runs, and it would
have watched its new parent (init) for good.
"""

from __future__ import annotations

import os
import threading
import time

# How often a worker checks that the process that started it is still there.
PARENT_CHECK_S = 1.0


def end_with_parent(parent: int) -> None:
    """Pool initializer: end this process when `parent` (the pool's maker, its pid given with the
    initializer) is no longer its parent, at once where that is already so."""
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_exit_with_parent, args=(parent,), name="advisor-parent", daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)
