"""Shared pytest set-up: fixture modules live beside this file, one job each."""

import os
import sys
from pathlib import Path

# tests/ helpers (synth.py, tf_profiles.py) are imported as plain modules.
sys.path.insert(0, str(Path(__file__).parent))

# Subprocesses (TensorBoard, the CLI, workers) import the package of this checkout, not whichever
# copy an editable install elsewhere points at: a git worktree tests its own code.
_REPO = str(Path(__file__).resolve().parents[1])
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_REPO, os.environ.get("PYTHONPATH", "")]))

# The persistent analysis cache (report/disk_cache.py) is off for the suite: tests must never write
# the real home, and a test that expects a profile to be read must not get an earlier answer. Tests
# of the cache point it at their own tmp directories.
os.environ.setdefault("TB_ADVISOR_CACHE_DIR", "off")

pytest_plugins = ["fixtures_tf", "fixtures_torch", "fixtures_server"]


def pytest_collection_modifyitems(config, items):
    """Mark `real_tf` every test that reads profiles written by real TensorFlow (the `tf_profiles`
    fixture) or runs TensorFlow: CI runs these once more with TensorFlow's oneDNN rewrite switched the
    other way (TF_ENABLE_ONEDNN_OPTS), since op names and allocation dtypes depend on it."""
    import pytest

    for item in items:
        if "tf_profiles" in getattr(item, "fixturenames", ()) or item.get_closest_marker("needs_tensorflow"):
            item.add_marker(pytest.mark.real_tf)
