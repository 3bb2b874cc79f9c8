"""process_memory/gc_pause.py: the collector is off inside paused calls (nested, threaded) and back
as it was after."""

from __future__ import annotations

import gc
import threading

import pytest

from tb_plugin_advisor.process_memory.gc_pause import collector_paused


@collector_paused
def state() -> bool:
    return gc.isenabled()


@collector_paused
def nested() -> tuple:
    return gc.isenabled(), state(), gc.isenabled()


def test_paused_calls_run_without_the_collector_and_restore_it():
    assert gc.isenabled()
    assert nested() == (False, False, False)
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    try:
        assert state() is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_returns_when_the_last_of_overlapping_threads_ends():
    inside, release = threading.Event(), threading.Event()

    @collector_paused
    def waits() -> None:
        inside.set()
        release.wait(5)

    worker = threading.Thread(target=waits)
    worker.start()
    inside.wait(5)
    assert state() is False  # this thread's call ends while the other still runs
    assert not gc.isenabled()
    release.set()
    worker.join(5)
    assert gc.isenabled()


def test_an_exception_still_restores_the_collector():
    @collector_paused
    def fails() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError):
        fails()
    assert gc.isenabled()
