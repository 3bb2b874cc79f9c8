"""What the C library does with the memory a read or an analysis frees (issue 12).

glibc keeps what a program frees for its next allocations. After a profile is read that is the read's
temporaries (50 MB of a 111 MB profile's 213 MB), and after a report it is the analyses' temporaries:
TensorBoard would hold them for as long as it serves, beside every run it has read. `malloc_trim`
returns the free pages when the outermost read or analysis ends; it costs a few milliseconds.

During a read, blocks of 16 MB or more (a long line's columns and their temporaries) get their own
mappings, which go back to the system the moment they are freed. glibc otherwise raises that limit as
soon as it frees one large block, up to 32 MB, and the read's later columns then land between freed
temporaries on its heap, where they pin pages no trim can return: 35 MB of a 300 MB profile's read.
Outside reads the limit is 32 MB, where glibc's own adjustment would take it anyway.

Neither changes a result. Where the C library is not glibc (musl, macOS, Windows) nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import threading
from typing import Callable, Optional, TypeVar

F = TypeVar("F", bound=Callable)

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
READ_MMAP_THRESHOLD = 16 << 20  # bytes: while a profile is read, blocks this large get their own mapping
MMAP_THRESHOLD = 32 << 20  # otherwise (glibc's ceiling for its own adjustment)

_lock = threading.Lock()
_depth = 0  # decorated calls running now, in any thread
_reads = 0  # of which reads
_libc: Optional[ctypes.CDLL] = None
_looked_up = False


def _glibc() -> Optional[ctypes.CDLL]:
    global _libc, _looked_up
    if not _looked_up:
        _looked_up = True
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
            libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
            _libc = libc
        except (OSError, AttributeError):  # not glibc: no malloc_trim
            _libc = None
    return _libc


def release_free_memory() -> bool:
    """Return the C library's free memory to the system; False where that cannot be done."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def set_mmap_threshold(size: int) -> bool:
    """Blocks of `size` bytes or more get their own mapping; False where that cannot be set."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(M_MMAP_THRESHOLD, size))


def hands_back_memory(function: F = None, *, reads: bool = False):
    """Decorator: when the outermost decorated call (in any thread) returns, free memory goes back.
    `reads=True`: a profile read, with large blocks in their own mappings while any read runs."""

    def decorate(inner: F) -> F:
        @functools.wraps(inner)
        def wrapper(*args, **kwargs):
            global _depth, _reads
            with _lock:
                _depth += 1
                if reads:
                    _reads += 1
                    if _reads == 1:
                        set_mmap_threshold(READ_MMAP_THRESHOLD)
            try:
                return inner(*args, **kwargs)
            finally:
                with _lock:
                    _depth -= 1
                    last = _depth == 0
                    if reads:
                        _reads -= 1
                        if _reads == 0:
                            set_mmap_threshold(MMAP_THRESHOLD)
                if last:
                    release_free_memory()

        return wrapper  # type: ignore[return-value]

    return decorate(function) if function is not None else decorate
