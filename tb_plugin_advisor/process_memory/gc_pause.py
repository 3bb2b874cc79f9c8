"""Python's cyclic garbage collector paused while a profile is read or analysed.

The collector runs whenever enough container objects have been allocated, and each full run walks
every live one. Reading and analysing a profile allocate many short-lived tuples, lists and dicts
beside a large live profile, so the collector kept re-walking objects that were all still in use:
20-45 % of the report's time on a profile with 100,000 distinct names. The readers and analyses make
no reference cycles that need the collector while they run (reference counting frees their
temporaries); it runs again as usual once the outermost paused call returns.
"""

from __future__ import annotations

import functools
import gc
import threading
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

_lock = threading.Lock()
_depth = 0  # paused calls running now, in any thread
_was_enabled = False


def _pause() -> None:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1


def _resume() -> None:
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0 and _was_enabled:
            gc.enable()


def collector_paused(function: F) -> F:
    """Decorator: run `function` with the cyclic collector off (nested and threaded calls included)."""

    @functools.wraps(function)
    def paused(*args, **kwargs):
        _pause()
        try:
            return function(*args, **kwargs)
        finally:
            _resume()

    return paused  # type: ignore[return-value]
