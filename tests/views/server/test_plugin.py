"""The plugin object in-process: flags through TensorBoard's own parser, metadata, cheap is_active, routes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tensorboard import program
from tensorboard.plugins import base_plugin
from tensorboard.plugins.core import core_plugin

from tb_plugin_advisor.plugin import AdvisorLoader, AdvisorPlugin


def parse(*argv: str):
    tb = program.TensorBoard(plugins=[core_plugin.CorePluginLoader, AdvisorLoader])
    tb.configure(argv=["tensorboard", *argv])
    return tb.flags


def test_flags_defaults_and_values():
    flags = parse("--logdir", "/tmp/x")
    assert flags.advisor_write_markers is True
    assert flags.advisor_reload_interval == 30.0
    assert flags.advisor_wait == 2.0
    flags = parse("--logdir", "/tmp/x", "--advisor_write_markers=false", "--advisor_reload_interval", "1.5")
    assert flags.advisor_write_markers is False and flags.advisor_reload_interval == 1.5
    assert parse("--logdir", "/tmp/x", "--advisor_write_markers").advisor_write_markers is True
    assert parse("--logdir", "/tmp/x", "--advisor_write_markers=0").advisor_write_markers is False


def test_bad_flag_value_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse("--logdir", "/tmp/x", "--advisor_write_markers=maybe")
    assert "expected true or false" in capsys.readouterr().err


def make_plugin(logdir: Path, **flag_overrides) -> AdvisorPlugin:
    flags = parse("--logdir", str(logdir), "--advisor_reload_interval=0")
    for name, value in flag_overrides.items():
        setattr(flags, name, value)
    context = base_plugin.TBContext(logdir=str(logdir), flags=flags)
    return AdvisorLoader().load(context)


def test_metadata_and_routes(tmp_path: Path):
    (tmp_path / "plugins/profile/s1").mkdir(parents=True)
    (tmp_path / "plugins/profile/s1/h.xplane.pb").write_bytes(b"x")
    plugin = make_plugin(tmp_path, advisor_write_markers=False)
    assert plugin.plugin_name == "advisor"
    meta = plugin.frontend_metadata()
    assert meta.es_module_path == "/index.js" and meta.tab_name == "Advisor"
    routes = plugin.get_plugin_apps()
    assert {"/runs", "/report", "/diff", "/doctor", "/index.js", "/*"} <= set(routes)
    assert meta.es_module_path in routes
    assert all(route.startswith("/") and ("*" not in route or route.endswith("/*")) for route in routes)


def test_is_active_answers_from_memory_without_walking(tmp_path: Path):
    (tmp_path / "a/plugins/profile/s1").mkdir(parents=True)
    (tmp_path / "a/plugins/profile/s1/h.xplane.pb").write_bytes(b"x")
    plugin = make_plugin(tmp_path, advisor_write_markers=False)
    assert plugin.discovery.wait_ready(30)
    walks = []
    real_scan = plugin.discovery._scan_fn
    plugin.discovery._scan_fn = lambda logdir: walks.append(logdir) or real_scan(logdir)
    for _ in range(1000):
        assert plugin.is_active() is True
    assert walks == []  # answered from the scan in memory: no walk of the logdir, however often asked


def test_inactive_on_empty_or_missing_logdir(tmp_path: Path):
    for logdir in (tmp_path, tmp_path / "missing"):
        plugin = make_plugin(logdir, advisor_write_markers=False)
        assert plugin.discovery.wait_ready(30)
        assert plugin.is_active() is False


def test_plugin_writes_markers_on_its_scanning_thread(tmp_path: Path):
    (tmp_path / "loop/plugins/profile/s1").mkdir(parents=True)
    (tmp_path / "loop/plugins/profile/s1/h.xplane.pb").write_bytes(b"x")
    plugin = make_plugin(tmp_path)
    assert plugin.discovery.wait_ready(30)  # load() waits at most 2 s; a loaded machine may need more
    markers = list((tmp_path / "loop").glob("events.out.tfevents.*.profile-empty"))
    assert len(markers) == 1
    # The scan taken right after writing already knows (doctor must not report it missing).
    assert [(r.rel, r.has_marker) for r in plugin.discovery.scan.run_dirs] == [("loop", True)]


def test_plugin_modules_never_import_tensorflow():
    code = (
        "import sys, tb_plugin_advisor.plugin, tb_plugin_advisor.sources.doctor.diagnose, "
        "tb_plugin_advisor.sources.markers, tb_plugin_advisor.sources.discovery, "
        "tb_plugin_advisor.views.server.api, tb_plugin_advisor.views.cli.main; "
        "assert 'tensorflow' not in sys.modules, 'tensorflow was imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_pool_and_cache_flags_reach_the_analysis_service(tmp_path: Path):
    flags = parse("--logdir", "/tmp/x")
    assert (flags.advisor_workers, flags.advisor_worker_tasks, flags.advisor_cache_mb) == (2, 100, 256)
    plugin = make_plugin(
        tmp_path, advisor_write_markers=False, advisor_workers=3, advisor_worker_tasks=5, advisor_cache_mb=1.5
    )
    service = plugin.service
    assert service.processes.processes == 3 and service.processes.tasks_per_worker == 5
    assert service.cache_bytes == int(1.5 * 1024 * 1024)
    service.shutdown()
