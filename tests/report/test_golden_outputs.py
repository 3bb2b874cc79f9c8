"""The report, diff and doctor outputs (JSON, text, Markdown, HTML) on the bundled sample, the shared
corpus and synthetic profiles equal the copies saved in tests/golden/: a reorganisation of the package
changes no number and no word a user or a script reads.

An intended change of output regenerates the copies (`python tests/golden_outputs.py write
tests/golden`) in the same commit, and the commit says why the outputs changed.
"""

from __future__ import annotations

import subprocess
import sys

from paths import TESTS

HERE = TESTS


def test_outputs_equal_the_saved_copies():
    done = subprocess.run(
        [sys.executable, str(HERE / "golden_outputs.py"), "check", str(HERE / "golden")],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0 and done.stdout.strip() == "identical", (
        f"outputs differ from tests/golden/ (exit {done.returncode}):\n"
        f"{done.stdout[-20000:]}\n{done.stderr[-3000:]}"
    )
