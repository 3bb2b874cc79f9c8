"""Shared pytest set-up: fixture modules live beside this file, one job each."""

import os
import sys
from pathlib import Path

# Tests live in folders by the concept they test (readers/, analysis/precision/, views/server/…). The
# helpers beside this file (synth.py, paths.py, tf_profiles.py) and test modules that share builders
# (test_browser's fixture, test_diff_reports' reports) are imported by module name from any folder, so
# every folder is on the path; pytest refuses two test modules of the same name, which keeps that safe.
_TESTS = Path(__file__).resolve().parent
for _folder in sorted({path.parent for path in _TESTS.rglob("test_*.py")}, reverse=True):
    sys.path.insert(0, str(_folder))
sys.path.insert(0, str(_TESTS))

# Subprocesses (TensorBoard, the CLI, workers) import the package of this checkout, not whichever
# copy an editable install elsewhere points at: a git worktree tests its own code.
_REPO = str(Path(__file__).resolve().parents[1])
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_REPO, os.environ.get("PYTHONPATH", "")]))

# The persistent analysis cache (report/disk_cache.py) is off for the suite: tests must never write
# the real home, and a test that expects a profile to be read must not get an earlier answer. Tests
# of the cache point it at their own tmp directories.
os.environ.setdefault("TB_ADVISOR_CACHE_DIR", "off")

pytest_plugins = ["fixtures_tf", "fixtures_torch", "fixtures_server"]


# What makes a test cost more than its own arithmetic: a fixture that runs TensorFlow or PyTorch or
# starts a TensorBoard, a marker saying so (`sweep`: over every real profile at hand), or a module
# that starts TensorBoard, the CLI or fuzzing rounds itself. Everything else is `quick`
# (`pytest -m quick`: the inner loop, under two minutes).
COSTLY_FIXTURES = frozenset({"tf_profiles", "torch_traces", "torch_processes", "tensorboard_factory",
                             "browser_tools"})
COSTLY_MARKERS = ("browser", "needs_tensorflow", "needs_torch", "pod_extras", "real_tf", "sweep")
COSTLY_MODULES = frozenset({
    # start a real TensorBoard (or several) of their own
    "test_api", "test_api_http", "test_api_kineto", "test_api_tf", "test_cache_flag", "test_plugin",
    "test_trace_route", "test_trace_route_hostile", "test_server_hostile_files", "test_rewrite_under_server",
    "test_symlink_tree", "test_disk_cache_hostile", "test_hostile_shapes", "test_s3", "test_dask",
    # run the CLI, the golden outputs or the demo as processes, or fuzz for thousands of rounds
    "test_golden_outputs", "test_fuzz", "test_fuzz_kineto", "test_bomb_peak", "test_demo", "test_progress",
    "test_cli_cache", "test_api_service", "test_hostpool",
    # start `tb-advisor mcp` and drive it with the MCP SDK's client
    "test_mcp_server",
})


def pytest_collection_modifyitems(config, items):
    """Mark `real_tf` every test that reads profiles written by real TensorFlow (the `tf_profiles`
    fixture) or runs TensorFlow: CI runs these once more with TensorFlow's oneDNN rewrite switched the
    other way (TF_ENABLE_ONEDNN_OPTS), since op names and allocation dtypes depend on it. Then mark
    `quick` every test that costs nothing but its own work (COSTLY_* above)."""
    import pytest

    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "tf_profiles" in fixtures or item.get_closest_marker("needs_tensorflow"):
            item.add_marker(pytest.mark.real_tf)
        costly = (fixtures & COSTLY_FIXTURES or any(item.get_closest_marker(m) for m in COSTLY_MARKERS)
                  or item.module.__name__ in COSTLY_MODULES)
        if not costly:
            item.add_marker(pytest.mark.quick)
