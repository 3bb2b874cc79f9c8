"""TensorBoard's `--advisor_cache_dir`: where the persistent analysis cache lives for the plugin, and
"off". The reports are analysed in worker processes, so only a real TensorBoard shows that the flag
reaches them; the test suite's own default (conftest: `TB_ADVISOR_CACHE_DIR=off`) is what the flag
must override, and an environment directory is what "off" must leave untouched."""

from __future__ import annotations

import os
import shutil

from paths import H200
from tensorboard import program
from tensorboard.plugins.core import core_plugin

from tb_plugin_advisor.plugin import AdvisorLoader
from tb_plugin_advisor.report.disk_cache import ENV_DIR, configure_dir

CAPTURE = H200 / "mlp_host_sync"


def parse(*argv: str):
    tb = program.TensorBoard(plugins=[core_plugin.CorePluginLoader, AdvisorLoader])
    tb.configure(argv=["tensorboard", "--logdir", "/tmp/x", *argv])
    return tb.flags


def test_flag_default_keeps_the_environment_and_a_value_replaces_it(monkeypatch, tmp_path):
    assert parse().advisor_cache_dir == ""
    assert parse("--advisor_cache_dir", str(tmp_path)).advisor_cache_dir == str(tmp_path)
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "env"))
    assert configure_dir("") == str(tmp_path / "env")
    assert configure_dir(str(tmp_path / "flag")) == str(tmp_path / "flag")
    assert os.environ[ENV_DIR] == str(tmp_path / "flag")  # what the workers started later inherit
    assert configure_dir(" off ") is None


def _report(server) -> dict:
    status, listing = server.plugin("runs")
    assert status == 200 and len(listing["runs"]) == 1
    run = listing["runs"][0]["run"]

    def answered():
        status, body = server.plugin("report", run=run)
        return body if status == 200 else None

    return server.wait_for(answered, timeout_s=120)


def test_tensorboard_keeps_reports_in_the_flag_directory_or_nowhere(tensorboard_factory, tmp_path):
    logdir = tmp_path / "logs"
    shutil.copytree(CAPTURE, logdir / "mlp")
    flagged = tmp_path / "flag-cache"
    server = tensorboard_factory(logdir, "--advisor_write_markers=false", "--advisor_cache_dir", str(flagged),
                                 env={ENV_DIR: "off"})
    first = _report(server)
    assert first["steps"]["count"] > 0
    assert [p.name for p in (flagged / "reports").iterdir()]  # kept across restarts
    server.stop()

    # A restart on the same directory answers from it without reading the profile: the trace is now
    # garbage of the same size and mtime (the cache key), which any read would refuse.
    (trace,) = list((logdir / "mlp").glob("*.pt.trace.json*"))
    stat = trace.stat()
    trace.write_bytes(b"x" * stat.st_size)
    os.utime(trace, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    server = tensorboard_factory(logdir, "--advisor_write_markers=false", "--advisor_cache_dir", str(flagged),
                                 env={ENV_DIR: "off"})
    assert _report(server) == first
    server.stop()
    shutil.copy2(next(CAPTURE.glob("*.pt.trace.json*")), trace)

    from_env = tmp_path / "env-cache"
    server = tensorboard_factory(logdir, "--advisor_write_markers=false", "--advisor_cache_dir", "off",
                                 env={ENV_DIR: str(from_env)})
    assert _report(server)["steps"]["count"] > 0
    assert not from_env.exists()
    # and nothing in the logdir, ever
    assert sorted(p.name for p in (logdir / "mlp").iterdir()) == sorted(p.name for p in CAPTURE.iterdir())
