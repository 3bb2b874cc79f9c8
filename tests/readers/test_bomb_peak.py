"""A gzip bomb is refused without the reader holding more than the cap: a gzip file is sized by
inflating it (nothing kept) before anything is decoded, and never by its trailer. Each read runs in
a fresh process under a 64 MB cap, which reports its peak RSS over what it held before the read
(ru_maxrss: the high-water mark, so a spike between two samples is not missed). Before, a bomb's
refusal peaked at twice the cap: the inflated text grew by copies, and the Kineto reader decoded
events from it until the cap stopped it."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from paths import ROOT

CAP_MB = 64
INFLATED_MB = 200  # each bomb inflates to this, about three times the cap
MB = 1 << 20

# The read, in a fresh process (bench/bench_serve_memory.py runs it too, at the default cap).
PEAK = """
import json, resource, sys, time
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.errors import ProfileReadError
path = sys.argv[1]
reader = read_kineto if path.endswith(".json.gz") else read_xplane
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
try:
    reader(path)
    error = ""
except ProfileReadError as exc:
    error = str(exc)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grew_mb": (peak - before) / 1024, "s": time.monotonic() - started, "error": error}))
"""


def _gzip(path: Path, head: bytes, unit: bytes, tail: bytes = b"", members: int = 1) -> Path:
    """`head`, then `unit` repeated to INFLATED_MB, then `tail`, gzipped (in `members` members)."""
    data = bytearray()
    per_member = INFLATED_MB * MB // members
    for index in range(members):
        deflate = zlib.compressobj(6, zlib.DEFLATED, 31)
        data += deflate.compress(head if index == 0 else b"")
        block = unit * (MB // len(unit))
        for _ in range(per_member // len(block)):
            data += deflate.compress(block)
        data += deflate.compress(tail if index == members - 1 else b"") + deflate.flush()
    path.write_bytes(bytes(data))
    return path


EVENT = b'{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 1},'


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    root = tmp_path_factory.mktemp("bombs")
    lying = bytearray(_gzip(root / "lying.pt.trace.json.gz", b'{"traceEvents": [', EVENT, b"]}").read_bytes())
    lying[-4:] = (1000).to_bytes(4, "little")  # the trailer claims 1,000 bytes
    (root / "lying.pt.trace.json.gz").write_bytes(bytes(lying))
    return {
        "events": _gzip(root / "events.pt.trace.json.gz", b'{"traceEvents": [', EVENT, b"]}"),
        "spaces": _gzip(root / "spaces.pt.trace.json.gz", b'{"traceEvents": [', b" "),
        "members": _gzip(root / "members.pt.trace.json.gz", b'{"traceEvents": [', EVENT, b"]}", members=7),
        "lying": root / "lying.pt.trace.json.gz",
        "xspace": _gzip(root / "zeros.xplane.pb", b"", b"\0"),
    }


@pytest.mark.parametrize("kind", ["events", "spaces", "members", "lying", "xspace"])
def test_a_bomb_is_refused_within_a_quarter_over_the_cap(bombs, kind):
    repo = str(ROOT)  # this checkout's package, whatever is installed
    done = subprocess.run([sys.executable, "-c", PEAK, str(bombs[kind])], capture_output=True, text=True,
                          timeout=300, cwd=repo, env={"TB_ADVISOR_MAX_PROFILE_MB": str(CAP_MB),
                                                      "PATH": "/usr/bin:/bin", "PYTHONPATH": repo})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert f"inflates to more than {CAP_MB} MB" in result["error"]
    assert result["grew_mb"] <= 1.25 * CAP_MB, result
