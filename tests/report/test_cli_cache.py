"""`tb-advisor report` and `diff` share the persistent analysis cache with `trend` and TensorBoard: a
second call is served from it and prints the same output, an entry is what is served (not a fresh
read), `--no-cache` writes nothing, and a diff's two reports serve a later trend over the same runs."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from paths import H200

from tb_plugin_advisor.report.disk_cache import HEADER, encode_entry

SMALL = "mlp_host_sync"


def cli(*args: str, env_cache: str = "off") -> subprocess.CompletedProcess:
    env = dict(os.environ, TB_ADVISOR_CACHE_DIR=env_cache)
    result = subprocess.run([sys.executable, "-m", "tb_plugin_advisor.views.cli.main", *args],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


def entries(cache: Path) -> list:
    folder = cache / "reports"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_report_is_served_from_the_cache_with_the_same_output(tmp_path):
    cache = tmp_path / "cache"
    fresh = cli("report", str(H200), "--run", SMALL, "--cache-dir", str(cache)).stdout
    [entry] = entries(cache)
    assert cli("report", str(H200), "--run", SMALL, "--cache-dir", str(cache)).stdout == fresh
    # what the second call prints comes from the entry: mark it (with a valid header) and ask again
    data = entry.read_bytes()
    stored = json.loads(gzip.decompress(data[HEADER.size:]))
    stored["report"]["served_from"] = "cache"
    entry.write_bytes(encode_entry(stored["key"], stored["report"]))
    again = cli("report", str(H200), "--run", SMALL, "--format", "json", "--cache-dir", str(cache)).stdout
    assert json.loads(again)["served_from"] == "cache"


def test_a_report_of_several_hosts_is_served_from_the_cache(tmp_path):
    """Two hosts that recommend and run collectives: their pooled report has the shape the cache holds
    every entry to, so the second call prints the stored entry."""
    from deep_profiles import write_gpu_run

    logs, cache = tmp_path / "logs", tmp_path / "cache"
    for host in ("gpu-a", "gpu-b"):
        run = write_gpu_run(logs, "pair", host=host)
    args = ("report", str(logs), "--run", run, "--format", "json", "--cache-dir", str(cache))
    fresh = json.loads(cli(*args).stdout)
    assert fresh["hosts"] == ["gpu-a", "gpu-b"] and fresh["per_host"][0]["recommendations"]
    assert fresh["collectives"]["types"]
    [entry] = entries(cache)
    stored = json.loads(gzip.decompress(entry.read_bytes()[HEADER.size:]))
    stored["report"]["served_from"] = "cache"
    entry.write_bytes(encode_entry(stored["key"], stored["report"]))
    assert json.loads(cli(*args).stdout)["served_from"] == "cache"


def test_no_cache_reads_the_profile_and_keeps_nothing(tmp_path):
    env_dir = tmp_path / "env-cache"
    cli("report", str(H200), "--run", SMALL, "--no-cache", env_cache=str(env_dir))
    assert not env_dir.exists()
    cli("report", str(H200), "--run", SMALL, env_cache=str(env_dir))  # the environment's directory
    assert len(entries(env_dir)) == 1


def test_diff_uses_the_cache_and_a_later_trend_reuses_its_reports(tmp_path):
    cache = tmp_path / "cache"
    runs = ("resnet50_fp32_workers8", "resnet50_fp32_workers0")
    first = cli("diff", str(H200), *runs, "--format", "json", "--cache-dir", str(cache)).stdout
    assert len(entries(cache)) == 2
    assert cli("diff", str(H200), *runs, "--format", "json", "--cache-dir", str(cache)).stdout == first
    trend = json.loads(cli("trend", str(H200), "--run", runs[0], "--run", runs[1], "--order", "given",
                           "--format", "json", "--cache-dir", str(cache)).stdout)
    assert trend["cache"]["served"] == 2 and trend["cache"]["writes"] == 0


def test_an_unwritable_cache_directory_is_noted_once_and_the_diff_still_made(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    result = cli("diff", str(H200), SMALL, "mlp_launch_bound", "--cache-dir", str(blocker / "cache"))
    assert result.stdout.strip() and result.stderr.count("tb-advisor diff: note:") == 1
