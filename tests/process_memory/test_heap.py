"""Free memory goes back to the system when the outermost read or analysis returns
(process_memory/heap.py)."""

from __future__ import annotations

import platform
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from synth import XSpaceBuilder

from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.process_memory import heap
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.report.run import build_report

T0 = 1_700_000_000_000_000_000


def test_the_c_library_is_asked_only_where_it_can_answer():
    released = heap.release_free_memory()
    assert released is (platform.libc_ver()[0] == "glibc")


def test_memory_goes_back_once_when_the_outermost_call_returns(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "release_free_memory", lambda: calls.append(threading.get_ident()) or True)

    @heap.hands_back_memory
    def inner():
        assert calls == []  # not while an outer call runs
        return 1

    @heap.hands_back_memory
    def outer():
        return inner() + inner()

    assert outer() == 2 and len(calls) == 1
    with pytest.raises(ZeroDivisionError):
        heap.hands_back_memory(lambda: 1 / 0)()
    assert len(calls) == 2  # an error still ends the call
    assert heap._depth == 0


def test_reading_and_analysing_a_profile_hand_memory_back(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "release_free_memory", lambda: calls.append(1) or True)
    b = XSpaceBuilder()
    b.plane("/host:CPU").line("python", id=1).event("train", T0, 10_000, stats={"step_num": 1, "_r": 1})
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    assert len(calls) == 1
    build_report(RunProfiles("r", [profile]))
    assert len(calls) == 2


def test_large_blocks_get_their_own_mapping_while_any_read_runs(monkeypatch):
    """Reads (decorated with reads=True) set the read's mmap threshold when the first starts and the
    usual one when the last ends, in any thread; other calls leave it alone."""
    thresholds = []
    monkeypatch.setattr(heap, "set_mmap_threshold", lambda size, trim: thresholds.append(size) or True)
    monkeypatch.setattr(heap, "release_free_memory", lambda: True)

    @heap.hands_back_memory(reads=True)
    def read(inner=None):
        assert thresholds[-1] == heap.READ_MMAP_THRESHOLD
        return inner() if inner else 1

    @heap.hands_back_memory
    def analyse():
        return 2

    assert read(lambda: read()) == 1 and thresholds == [heap.READ_MMAP_THRESHOLD, heap.MMAP_THRESHOLD]
    assert analyse() == 2 and len(thresholds) == 2
    assert heap._reads == 0 and heap._depth == 0


def test_the_threshold_is_set_only_where_the_c_library_allows():
    glibc = platform.libc_ver()[0] == "glibc"
    assert heap.set_mmap_threshold(heap.MMAP_THRESHOLD, heap.TRIM_THRESHOLD) is glibc


_HEAPS_AFTER_A_THREAD = """
import ctypes, os, sys, tempfile, threading
sys.path.insert(0, {root!r})
from tb_plugin_advisor.process_memory import heap
if {share!r}:
    assert heap.one_heap_for_threads()
def allocate():
    blocks = [ctypes.create_string_buffer(200_000) for _ in range(50)]  # malloc'd by this thread
    del blocks
worker = threading.Thread(target=allocate)
worker.start()
worker.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
path = os.path.join(tempfile.mkdtemp(), "heaps.xml")
stream = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, stream)
libc.fclose(stream)
print(open(path).read().count("<heap nr="))
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's per-thread heaps and malloc_info")
@pytest.mark.parametrize("share", [True, False])
def test_the_analysis_threads_share_one_heap(share):
    """With one_heap_for_threads, a thread's allocations come from the process's heap: glibc lists one
    heap (malloc_info), where without it the thread got a second."""
    root = str(Path(heap.__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", _HEAPS_AFTER_A_THREAD.format(root=root, share=share)],
                         capture_output=True, text=True, timeout=60, check=True)
    assert int(out.stdout.strip()) == (1 if share else 2), out.stdout
