"""readers/profile_check.py: every real profile at hand (the committed captures, the bundled sample,
the shared corpus) passes the check the trace route makes before serving a byte, and what is not a
profile of the claimed format fails it, in its first bytes, with a message saying so."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from paths import ROOT
from synth_kineto import training_trace

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.guarded_io import ReadLimits
from tb_plugin_advisor.readers.profile_check import open_checked

SOURCES = [ROOT / "tests" / "captures", ROOT / "tb_plugin_advisor" / "sample_logdir",
           ROOT.parent / "shared" / "corpus"]


def _profiles():
    for folder in SOURCES:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if "_corrupt" in path.parts or not path.is_file():
                continue
            if path.name.endswith(".xplane.pb"):
                yield pytest.param(path, "xplane", id=str(path.relative_to(folder.parent)))
            elif path.name.endswith((".pt.trace.json", ".pt.trace.json.gz")) or (
                    path.name.endswith((".json", ".json.gz")) and _has_events(path)):
                yield pytest.param(path, "kineto", id=str(path.relative_to(folder.parent)))


def _has_events(path: Path) -> bool:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        return b'"traceEvents"' in f.read(1 << 20)


@pytest.mark.parametrize("path, fmt", list(_profiles()))
def test_every_real_profile_passes(path, fmt):
    checked = open_checked(str(path), fmt, ReadLimits())
    try:
        assert checked.size == path.stat().st_size
        assert checked.gzipped == (path.read_bytes()[:2] == b"\x1f\x8b")
    finally:
        checked.close()


def _refusal(tmp_path: Path, name: str, data: bytes, fmt: str) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ProfileReadError) as raised:
        open_checked(str(path), fmt, ReadLimits())
    return str(raised.value)


GRAPH_DEF = b"\x0a\x0c" + b"\x0a\x04node\x12\x04Const"  # a GraphDef: field 1 holds a NodeDef (name first)


@pytest.mark.parametrize("data, words", [
    (b"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n", "not an XSpace profile"),  # newlines read as planes
    (GRAPH_DEF, "which no XPlane has"),
    (b"root:x:0:0:root:/root:/bin/bash\n", "not an XSpace profile"),
    (b"\x0a\x10\x08\x01", "the bytes end inside a field"),  # a plane cut short
    (b"\x22\x01h", "no plane"),  # hostnames only
    (b"", "empty"),
])
def test_what_is_not_an_xspace_is_refused(tmp_path, data, words):
    assert words in _refusal(tmp_path, "h.xplane.pb", data, "xplane")


@pytest.mark.parametrize("data", [
    b"-----BEGIN OPENSSH PRIVATE KEY-----\n",
    json.dumps({"type": "service_account", "note": "traceEvents", "private_key": "k"}).encode(),
    b'{"displayTimeUnit": "\\"traceEvents\\": [", "x": 1}',  # the key's text inside a string
    b'{"traceEvents": 5}',
    b"[" * 100_000,
    b" " * (3 << 20) + b'{"traceEvents": []}',  # the array starts past the first megabyte
])
@pytest.mark.parametrize("gzipped", [False, True])
def test_what_is_not_a_trace_is_refused(tmp_path, data, gzipped):
    payload = gzip.compress(data) if gzipped else data
    assert "not a PyTorch profiler trace" in _refusal(tmp_path, "w.1.pt.trace.json", payload, "kineto")


def test_a_trace_is_checked_on_its_head_only_and_a_gzip_sized_by_inflating(tmp_path):
    path = training_trace(steps=2).write(tmp_path / "w.1.pt.trace.json.gz")
    checked = open_checked(str(path), "kineto", ReadLimits())
    checked.close()
    assert checked.gzipped and checked.inflated == len(gzip.decompress(path.read_bytes()))


def test_a_remote_file_is_checked_and_streamed_through_the_file_layer():
    """gs://, s3:// and other fsspec paths go through TensorBoard's file layer (here fsspec's
    in-memory file system): the same check, and the served bytes read a piece at a time."""
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    data = training_trace(steps=2).to_bytes()
    with memory.open("/check/run/w.1.pt.trace.json.gz", "wb") as f:
        f.write(gzip.compress(data))
    with memory.open("/check/key/w.1.pt.trace.json", "wb") as f:
        f.write(b"-----BEGIN OPENSSH PRIVATE KEY-----\n")
    with memory.open("/check/run/w.1.pt.trace.json.gz", "rb") as f:
        stored = f.read()
    checked = open_checked("memory:///check/run/w.1.pt.trace.json.gz", "kineto", ReadLimits())
    assert checked.gzipped and checked.inflated == len(data) and checked.size == len(stored)
    assert b"".join(checked.file.pieces(1000)) == stored
    with pytest.raises(ProfileReadError, match="not a PyTorch profiler trace"):
        open_checked("memory:///check/key/w.1.pt.trace.json", "kineto", ReadLimits())
