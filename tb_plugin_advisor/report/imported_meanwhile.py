"""Importing a module on a second thread while this one reads a profile.

A report's analyses are many modules: importing them is a quarter of a 100 MB XSpace report's time in
one process. Reading a profile needs none of them and is mostly C that lets go of the GIL (the XSpace
walker, the pool that fills its blocks), so the imports run in the read's gaps. Measured on the bench
profiles at 100 MB (fastest of 12 fresh processes, taken in turns): the TF loop's report 1.22 -> 1.07 s,
a million metadata names 1.81 -> 1.68 s, the read no slower, the peak memory the same; a Kineto
trace, whose read holds the GIL, neither faster nor slower.

Two settings make that so, both set before the thread starts:
- The GIL's switch interval is short while the import runs: at the default 5 ms, each time the
  reading thread comes back from C it could wait that long behind the importing one, which made the
  read 40% slower and took the whole gain. The importing thread gives the interval back as soon as it
  is done: a short one to the end of a read made a Kineto read 10% slower.
- The thread allocates from the process's one heap (process_memory/heap.py): with a heap of its own,
  which the analyses' second thread later took over, the analyses ran 0.2 s slower.

Only the first caller of a process imports; a caller that finds the module imported, or being imported
by another caller, only reads.
"""
from __future__ import annotations

import importlib
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

from tb_plugin_advisor.process_memory.heap import one_heap_for_threads

# The GIL's switch interval while the import runs beside the read, in seconds (Python's default: 0.005)
SWITCH_INTERVAL_S = 0.0002

_first_caller = threading.Lock()


@contextmanager
def imported_meanwhile(module: str) -> Iterator[None]:
    """Run the block while `module` is imported on a second thread; return once both are done. A
    failure of the import is left to the caller's own import after the block, which raises it with
    its traceback."""
    if module in sys.modules or not _first_caller.acquire(blocking=False):
        yield
        return
    try:
        one_heap_for_threads()  # its allocations stay in the heap the read and the analyses use
        interval = sys.getswitchinterval()
        thread = threading.Thread(target=_import_quietly, args=(module, interval), name="advisor-imports",
                                  daemon=True)
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        thread.start()
        try:
            yield
        finally:
            thread.join()
    finally:
        _first_caller.release()


def _import_quietly(module: str, interval: float) -> None:
    """Import `module`, then give the switch interval back (see the module's docstring)."""
    try:
        importlib.import_module(module)
    except Exception:  # raised again by the caller's own import (see imported_meanwhile)
        pass
    finally:
        sys.setswitchinterval(interval)
