"""The analyses are imported beside the read (report/imported_meanwhile.py): nothing that reaches the
read imports them first, the import runs on another thread under a short switch interval, which is
given back, and a failing import is raised by the caller's own import, not lost."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tb_plugin_advisor.report import imported_meanwhile as im
from tb_plugin_advisor.report.hostpool import ANALYSES_MODULE

# What the CLI's report command and the server's workers import before they read a profile
BEFORE_THE_READ = ["tb_plugin_advisor.views.cli.commands.report", "tb_plugin_advisor.report.door",
                   "tb_plugin_advisor.report.hostpool", "tb_plugin_advisor.views.cli.main"]
# Modules that bring every analysis with them
ANALYSES = ["tb_plugin_advisor.report.analyze", "tb_plugin_advisor.report.sections",
            "tb_plugin_advisor.report.run", "tb_plugin_advisor.report.host", ANALYSES_MODULE]


def test_nothing_that_reaches_the_read_imports_the_analyses():
    script = (f"import importlib, json, sys\nfor m in {BEFORE_THE_READ!r}: importlib.import_module(m)\n"
              f"print(json.dumps([m for m in {ANALYSES!r} if m in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("meanwhile_probe")]:
        del sys.modules[name]


def write_probe(directory: Path, name: str, body: str) -> None:
    (directory / f"{name}.py").write_text(body, encoding="utf-8")
    importlib.invalidate_caches()


def test_the_module_is_imported_on_another_thread_under_the_short_interval(module_dir):
    write_probe(module_dir, "meanwhile_probe_a", "import sys, threading\n"
                "THREAD = threading.current_thread().name\nINTERVAL = sys.getswitchinterval()\n")
    before = sys.getswitchinterval()
    with im.imported_meanwhile("meanwhile_probe_a"):
        pass
    probe = sys.modules["meanwhile_probe_a"]
    assert probe.THREAD == "advisor-imports" != threading.current_thread().name
    assert pytest.approx(im.SWITCH_INTERVAL_S) == probe.INTERVAL
    assert sys.getswitchinterval() == before != pytest.approx(im.SWITCH_INTERVAL_S)


def test_the_interval_is_given_back_when_the_import_ends_not_the_read(module_dir):
    write_probe(module_dir, "meanwhile_probe_e", "")
    before = sys.getswitchinterval()
    with im.imported_meanwhile("meanwhile_probe_e"):
        for thread in [t for t in threading.enumerate() if t.name == "advisor-imports"]:
            thread.join()
        assert sys.getswitchinterval() == before  # the read goes on at the usual interval


def test_the_thread_is_started_on_the_one_heap(module_dir, monkeypatch):
    """The process's threads share one heap before the importing thread starts: a heap of its own
    would later go to the analyses' second thread (process_memory/heap.py)."""
    write_probe(module_dir, "meanwhile_probe_f", "")
    seen = []
    monkeypatch.setattr(im, "one_heap_for_threads", lambda: seen.append(
        [t.name for t in threading.enumerate() if t.name == "advisor-imports"]) or True)
    with im.imported_meanwhile("meanwhile_probe_f"):
        pass
    assert seen == [[]]  # once, before the thread
    with im.imported_meanwhile("meanwhile_probe_f"):
        pass
    assert seen == [[]]  # imported: nothing to start


def test_a_module_already_imported_is_left_alone():
    before = sys.getswitchinterval()
    with im.imported_meanwhile("json"):
        assert sys.getswitchinterval() == before
        assert not [t for t in threading.enumerate() if t.name == "advisor-imports"]


def test_a_second_caller_meanwhile_only_reads(module_dir):
    """The second caller comes while the first one's import has not yet reached the module (its
    package is still being imported): it starts no import of its own and leaves the interval."""
    (module_dir / "meanwhile_probe_b").mkdir()
    write_probe(module_dir / "meanwhile_probe_b", "__init__", "import time\ntime.sleep(0.3)\n")
    write_probe(module_dir / "meanwhile_probe_b", "inner", "")
    before = sys.getswitchinterval()
    seen = []
    with im.imported_meanwhile("meanwhile_probe_b.inner"):
        assert "meanwhile_probe_b.inner" not in sys.modules
        second = threading.Thread(target=lambda: seen.append(_second_caller("meanwhile_probe_b.inner")))
        second.start()
        second.join()
    assert seen == [(1, pytest.approx(im.SWITCH_INTERVAL_S))]  # only the first caller's import thread
    assert sys.getswitchinterval() == before
    assert "meanwhile_probe_b.inner" in sys.modules


def _second_caller(module: str):
    with im.imported_meanwhile(module):
        importing = [t for t in threading.enumerate() if t.name == "advisor-imports"]
        return len(importing), sys.getswitchinterval()


def test_a_failing_import_is_raised_by_the_callers_own_import(module_dir):
    write_probe(module_dir, "meanwhile_probe_c", "raise ImportError('probe: no such library')\n")
    before = sys.getswitchinterval()
    with im.imported_meanwhile("meanwhile_probe_c"):
        pass
    assert sys.getswitchinterval() == before
    assert "meanwhile_probe_c" not in sys.modules
    with pytest.raises(ImportError, match="probe: no such library"):
        importlib.import_module("meanwhile_probe_c")


def test_a_failing_read_still_waits_for_the_import(module_dir):
    write_probe(module_dir, "meanwhile_probe_d", "import time\ntime.sleep(0.2)\nDONE = True\n")
    with pytest.raises(OSError, match="the read failed"), im.imported_meanwhile("meanwhile_probe_d"):
        raise OSError("the read failed")
    assert sys.modules["meanwhile_probe_d"].DONE
    assert not [t for t in threading.enumerate() if t.name == "advisor-imports"]
