"""What the C library does with the memory a read or an analysis frees.

glibc keeps what a program frees for its next allocations. After a profile is read that is the read's
temporaries (50 MB of a 111 MB profile's 213 MB), and after a report it is the analyses' temporaries:
TensorBoard would hold them for as long as it serves, beside every run it has read. `malloc_trim`
returns the free pages when the outermost read or analysis ends; it costs a few milliseconds.

glibc also adjusts two limits as it goes: blocks over the first get their own mapping (returned the
moment they are freed), and free memory over the second at the top of its heap goes back. It raises
both once it frees a large block (up to 32 MB and 64 MB), after which a read's later columns land
between freed temporaries on its heap and the analyses' temporaries stay there: 35 MB of a 300 MB
profile's read, and the difference between 1.52 and 1.39 times the file at its peak. So the limits
are set here: 16 MB for both while a profile is read, 32 MB and 16 MB otherwise (measured on the
bench profiles: no slower; freeing at 128 KB was as small but more often slower).

And glibc gives each new thread a heap of its own (up to eight per core): what the analysis's
second thread frees stays in its heap, unused by the first, 20 MB of a 100 MB profile's peak (and
30 MB more for the XSpace reader's helper thread). The read and the analysis share one heap between
their threads (`one_heap_for_threads`): they allocate few, large blocks, so sharing costs no
measurable time. It is set in the processes that read and analyse (the CLI and TensorBoard's
analysis workers), for the threads they start.

None of this changes a result. Where the C library is not glibc (musl, macOS, Windows) nothing is done.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Callable, Optional, TypeVar

F = TypeVar("F", bound=Callable)

M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, M_ARENA_MAX = -3, -1, -8  # glibc's mallopt parameters
READ_MMAP_THRESHOLD = 16 << 20  # bytes: while a profile is read, blocks this large get their own mapping
MMAP_THRESHOLD = 32 << 20  # otherwise (where glibc's own adjustment would take it)
TRIM_THRESHOLD = 16 << 20  # free memory over this at the top of the heap goes back at once

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
            libc = ctypes.CDLL(None)  # the process's own symbols: the C library it runs on
            libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
            libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
            _libc = libc
        except (OSError, AttributeError, TypeError):  # not glibc: no malloc_trim (Windows: no CDLL(None))
            _libc = None
    return _libc


def release_free_memory() -> bool:
    """Return the C library's free memory to the system; False where that cannot be done."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def set_mmap_threshold(size: int, trim: int) -> bool:
    """Blocks of `size` bytes or more get their own mapping, and free memory over `trim` bytes at the
    top of the heap goes back at once; False where that cannot be set. (Setting either stops glibc
    adjusting both, so both are set.)"""
    libc = _glibc()
    if libc is None or not libc.mallopt(M_MMAP_THRESHOLD, size):
        return False
    return bool(libc.mallopt(M_TRIM_THRESHOLD, trim))


def one_heap_for_threads() -> bool:
    """Threads started from now on allocate from the heap the process already has, not one each;
    False where that cannot be set."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(M_ARENA_MAX, 1))


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
                        set_mmap_threshold(READ_MMAP_THRESHOLD, TRIM_THRESHOLD)
            try:
                return inner(*args, **kwargs)
            finally:
                with _lock:
                    _depth -= 1
                    last = _depth == 0
                    if reads:
                        _reads -= 1
                        if _reads == 0:
                            set_mmap_threshold(MMAP_THRESHOLD, TRIM_THRESHOLD)
                if last:
                    release_free_memory()

        return wrapper  # type: ignore[return-value]

    return decorate(function) if function is not None else decorate
