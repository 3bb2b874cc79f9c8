"""The analysis cache against what a shared or careless cache directory can hold, through a real
TensorBoard and the real CLI: a FIFO, a corrupt entry (16 zeroed bytes), entries nested too deeply,
holding NaN or of the wrong shape are ignored and rebuilt, never a hang, a 500 or a traceback; and
the cache only ever touches its own files: a directory holding others' files gets the cache in its
own subdirectory (said once), a link in place of reports/ is not followed, a directory inside the
logdir is refused and nothing is written there."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest
from paths import H200
from test_api_tf import poll

from tb_plugin_advisor.report import disk_cache
from tb_plugin_advisor.report.disk_cache import ReportCache, entry_key
from tb_plugin_advisor.sources.discovery import scan_logdir

RUNS = ("mlp_host_sync", "mlp_launch_bound")


@pytest.fixture
def logdir(tmp_path) -> Path:
    root = tmp_path / "logs"
    for run in RUNS:
        shutil.copytree(H200 / run, root / run)
    return root


def _entry_path(cache_dir: Path, logdir: Path, run: str) -> Path:
    """Where this code keeps the report of `run` (the logdir's first session under that directory)."""
    session = next(s for s in scan_logdir(str(logdir)).sessions if s.run.startswith(run + "/"))
    cache = ReportCache(str(cache_dir))
    return Path(cache._path(cache._digest(entry_key(session, None))))


def _entry_bytes(key: List[Any], report: Any) -> bytes:
    """An entry as this code writes them: its own encoder, else (before entries had a header) gzip."""
    return _raw_entry(json.dumps({"key": key, "report": report}))


def _raw_entry(text: str) -> bytes:
    """An entry whose JSON is `text` as it is (NaN, any nesting), framed as this code frames entries:
    with a valid header and checksum when it has them, else as plain gzip."""
    payload = gzip.compress(text.encode(), mtime=0)
    header = getattr(disk_cache, "HEADER", None)
    if header is None:
        return payload
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    return header.pack(disk_cache.MAGIC, disk_cache.FORMAT, len(payload), digest) + payload


def _cli(*args: str, cache: Path, env: Dict[str, str] = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "tb_plugin_advisor.views.cli.main", *args, "--cache-dir", str(cache)]
    environment = dict(os.environ, **(env or {}))
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=environment)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


def _report(logdir: Path, run: str, cache: Path, fmt: str = "json", **env: str):
    done = _cli("report", str(logdir), "--run", run, "--format", fmt, cache=cache, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _stored(path: Path) -> Dict[str, Any]:
    data = path.read_bytes()
    header = getattr(disk_cache, "HEADER", None)
    return json.loads(gzip.decompress(data[header.size:] if header else data))


# ---------------------------------------------------------------------------------------------------
# What an entry's path may hold


def test_a_fifo_at_an_entry_blocks_neither_tensorboard_nor_the_cli(tensorboard_factory, logdir, tmp_path):
    cache = tmp_path / "cache"
    fifos = [_entry_path(cache, logdir, run) for run in RUNS]
    for fifo in fifos:
        fifo.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(fifo)
    tb = tensorboard_factory(logdir, "--advisor_write_markers=false", "--advisor_cache_dir", str(cache),
                             "--advisor_workers=1")
    runs = [r["run"] for r in tb.wait_for(lambda: tb.plugin("runs")[1]["runs"])]
    for run in runs:  # both, one after the other: a blocked thread would leave the second queued
        status, body = poll(tb, "report", timeout_s=120, run=run)
        assert status == 200 and body["run"] == run
    assert all(f.is_fifo() for f in fifos)  # not the cache's to delete or replace
    assert json.loads(_report(logdir, RUNS[0], cache).stdout)["run"].startswith(RUNS[0])


@pytest.mark.parametrize("damage", ["zeroed", "deep", "nan", "shape"])
def test_a_damaged_entry_is_rebuilt_by_tensorboard_and_the_cli(tensorboard_factory, logdir, tmp_path, damage):
    cache = tmp_path / "cache"
    run = RUNS[0]
    first = json.loads(_report(logdir, run, cache).stdout)
    entry = _entry_path(cache, logdir, run)
    stored = _stored(entry)
    if damage == "zeroed":  # bit rot or a torn copy: 16 bytes of zeros where the deflate data starts
        data = bytearray(entry.read_bytes())
        at = getattr(getattr(disk_cache, "HEADER", None), "size", 0) + 10  # past the gzip header
        data[at: at + 16] = bytes(16)
        entry.write_bytes(bytes(data))
    elif damage == "deep":  # nesting that exhausts a parser's stack, where the report should be
        key = json.dumps(stored["key"])
        entry.write_bytes(_raw_entry('{"key": ' + key + ', "report": ' + "[" * 100_000 + "]" * 100_000 + "}"))
    elif damage == "nan":  # not JSON at all: NaN where the mean step time is
        text = json.dumps({"key": stored["key"], "report": stored["report"]})
        entry.write_bytes(_raw_entry(text.replace('"mean_ms": ', '"mean_ms": NaN, "was": ', 1)))
    else:  # the right key, a valid checksum, the wrong shape
        entry.write_bytes(_entry_bytes(stored["key"], dict(stored["report"], recommendations="y")))
    for fmt in ("text", "md", "html"):
        assert _report(logdir, run, cache, fmt).stdout.strip() != "y"
    again = json.loads(_report(logdir, run, cache).stdout)
    assert again["recommendations"] == first["recommendations"] and again["run"] == first["run"]
    if damage != "zeroed":  # the CLI rewrote it: damage it the same way for TensorBoard
        entry.write_bytes(_entry_bytes(stored["key"], dict(stored["report"], recommendations="y")))
    tb = tensorboard_factory(logdir, "--advisor_write_markers=false", "--advisor_cache_dir", str(cache))
    listed = tb.wait_for(lambda: tb.plugin("runs")[1]["runs"])
    name = next(r["run"] for r in listed if r["run"].startswith(run))
    status, body = poll(tb, "report", timeout_s=120, run=name)
    assert status == 200 and body["recommendations"] == first["recommendations"]


# ---------------------------------------------------------------------------------------------------
# Only its own files


def _tree(root: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_directory_of_the_users_files_is_left_alone(logdir, tmp_path):
    """`--cache-dir ~/work` with a reports/ folder of the user's: its oldest files, its `.tmp-*` older
    than an hour and its look-alike names survive any eviction; the cache goes to a subdirectory it
    names once."""
    work = tmp_path / "work"
    (work / "reports").mkdir(parents=True)
    for name in ("thesis.tex", ".tmp-draft.json.gz", ".tmp-abcdefgh.tbadv", "0" * 64 + ".json.gz",
                 "1" * 64 + ".tbadv"):
        (work / "reports" / name).write_text("the user's " + name)
    (work / "notes.txt").write_text("mine")
    old = time.time() - 3 * 86400
    for path in work.rglob("*"):
        os.utime(path, (old, old))
    before = _tree(work)
    for run in RUNS:
        done = _report(logdir, run, work, TB_ADVISOR_CACHE_MB="0.001")  # evicts on every write
        assert done.stderr.count("note:") == 1 and str(work / "tb-plugin-advisor") in done.stderr
    after = _tree(work)
    assert {k: v for k, v in after.items() if not k.startswith("tb-plugin-advisor/")} == before
    assert any(k.startswith("tb-plugin-advisor/reports/") for k in after)


def test_a_link_in_place_of_reports_is_not_followed(logdir, tmp_path):
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    _report(logdir, RUNS[0], cache)  # a cache directory of the Advisor's, then reports/ swapped
    shutil.rmtree(cache / "reports")
    elsewhere.mkdir()
    for name in (".tmp-abcdefgh.tbadv", ".tmp-abcdefgh.json.gz", "f" * 64 + ".tbadv", "e" * 64 + ".json.gz"):
        (elsewhere / name).write_text("not the cache's")
        os.utime(elsewhere / name, (time.time() - 86400,) * 2)
    os.symlink(elsewhere, cache / "reports")
    before = _tree(elsewhere)
    for run in RUNS:
        _report(logdir, run, cache, TB_ADVISOR_CACHE_MB="0.001")
    assert _tree(elsewhere) == before


@pytest.mark.parametrize("where", ["logdir", "inside"])
def test_a_cache_directory_inside_the_logdir_is_refused(logdir, where):
    cache = logdir if where == "logdir" else logdir / RUNS[0] / "cache"
    before = sorted(str(p) for p in logdir.rglob("*"))
    done = _report(logdir, RUNS[0], cache)
    assert "inside the logdir" in done.stderr and done.stderr.count("note:") == 1
    assert sorted(str(p) for p in logdir.rglob("*")) == before
