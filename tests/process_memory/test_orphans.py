"""A pool worker ends with the process that made its pool, including one whose maker died while the
worker was still starting: by then the worker has been re-parented, so its watch compares its parent
with the maker's pid given to it, not with the parent it finds."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

WORKER = textwrap.dedent("""
    import os, sys, time
    from tb_plugin_advisor.process_memory.orphans import end_with_parent
    end_with_parent(int(sys.argv[1]) if sys.argv[1] != "mine" else os.getppid())
    print("watching", flush=True)
    time.sleep(float(sys.argv[2]))
    print("done", flush=True)
""")


def _worker(maker: str, sleep_s: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WORKER, maker, str(sleep_s)], capture_output=True, text=True,
                          timeout=60)


def test_a_worker_whose_maker_is_already_gone_ends_at_once():
    gone = _worker(str(os.getppid()), 30)  # this test's parent: not the worker's (this test is)
    assert gone.returncode == 1 and gone.stdout == "", gone.stderr


def test_a_worker_whose_maker_is_there_runs_its_tasks():
    kept = _worker("mine", 1.5)  # past one check of its parent
    assert kept.returncode == 0 and kept.stdout.split() == ["watching", "done"], kept.stderr
