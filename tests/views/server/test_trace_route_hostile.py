"""The `trace` route as a hostile user of a shared logdir would try it, on a real TensorBoard: links to
files that are not profiles (a key, /etc/passwd, a JSON credential, a gzip of a key) are never
served, whatever the link is named, whenever it is swapped in, by GET or HEAD, under --path_prefix;
a profile behind a link that leaves the logdir is served (TensorBoard's symlink trees); a gzip is
sized by inflating it, whatever its trailer says; and downloads are streamed, bounded in number and
dropped when their client stalls, so sixteen clients that never read cost TensorBoard no memory."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import socket
import urllib.parse
import urllib.request
import zlib
from pathlib import Path
from typing import Dict, List

import pytest
from fixtures_server import start_tensorboard
from paths import H200
from synth_kineto import training_trace

CAPTURE = H200 / "mlp_host_sync"
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAB-not-a-profile\n"
MARKER = b"not-a-profile"  # in every secret: never in an answer
CAP_MB = 0.5


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> Dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile_trace")
    logdir, outside = root / "logs", root / "elsewhere"
    outside.mkdir()
    (outside / "id_rsa").write_bytes(SECRET)
    (outside / "passwd").write_bytes(b"root:x:0:0:root:/root:/bin/bash\n" + MARKER + b"\n")
    (outside / "sa.json").write_text(json.dumps({"type": "service_account", "private_key": MARKER.decode(),
                                                 "events": ["traceEvents"]}))
    (outside / "key.gz").write_bytes(gzip.compress(SECRET))
    training_trace(steps=3).write(outside / "real.pt.trace.json")
    training_trace(steps=3).write(logdir / "torch" / "ok" / "w.1700000001000.pt.trace.json.gz")
    _link(logdir / "torch" / "key" / "w.1700000000000.pt.trace.json", outside / "id_rsa")
    _link(logdir / "torch" / "passwd" / "w.1700000000000.pt.trace.json", outside / "passwd")
    _link(logdir / "torch" / "etc" / "w.1700000000000.pt.trace.json", Path("/etc/passwd"))
    _link(logdir / "torch" / "json" / "w.1700000000000.pt.trace.json", outside / "sa.json")
    _link(logdir / "torch" / "gz" / "w.1700000000000.pt.trace.json.gz", outside / "key.gz")
    _link(logdir / "tf" / "plugins" / "profile" / "2024_01_01_00_00_00" / "h.xplane.pb", outside / "id_rsa")
    _link(logdir / "torch" / "outside" / "w.1700000000000.pt.trace.json", outside / "real.pt.trace.json")
    training_trace(steps=3).write(logdir / "torch" / "swapped" / "w.1700000000000.pt.trace.json")
    fifo = logdir / "torch" / "fifo" / "w.1700000000000.pt.trace.json"
    training_trace(steps=3).write(fifo)
    # gzip whose trailer lies: a real head, then 2 MB of spaces (past the 0.5 MB cap), ISIZE = 100
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = deflate.compress(b'{"traceEvents": [' + b" " * (2 << 20) + b"]}") + deflate.flush()
    lying = logdir / "torch" / "lying" / "w.1700000000000.pt.trace.json.gz"
    lying.parent.mkdir(parents=True)
    lying.write_bytes(body[:-4] + (100).to_bytes(4, "little"))
    # the same 2 MB member, then one more of 1 byte: the last trailer says 1
    extra = logdir / "torch" / "extra" / "w.1700000000000.pt.trace.json.gz"
    extra.parent.mkdir(parents=True)
    extra.write_bytes(body + gzip.compress(b" "))
    return {"logdir": logdir, "outside": outside, "fifo": fifo}


@pytest.fixture(scope="module")
def servers(layout):
    """A server at the root and one under --path_prefix; after their first scan the `swapped` trace
    becomes a link to the key and the `fifo` one a FIFO."""
    flags = (f"--advisor_max_profile_mb={CAP_MB}", "--advisor_reload_interval=0",
             "--advisor_write_markers=false", "--advisor_cache_dir=off")
    with start_tensorboard(layout["logdir"], *flags) as plain, \
            start_tensorboard(layout["logdir"], *flags, path_prefix="/tb") as prefixed:
        for tb in (plain, prefixed):
            tb.wait_for(lambda tb=tb: len(tb.plugin("runs")[1]["runs"]) >= 12, timeout_s=60)
        swapped = layout["logdir"] / "torch" / "swapped" / "w.1700000000000.pt.trace.json"
        swapped.unlink()
        os.symlink(layout["outside"] / "id_rsa", swapped)
        layout["fifo"].unlink()
        os.mkfifo(layout["fifo"])
        yield {"plain": plain, "prefixed": prefixed}


def _run(tb, prefix: str) -> str:
    return next(r["run"] for r in tb.plugin("runs")[1]["runs"] if r["run"].startswith(prefix))


def _request(tb, run: str, method: str = "GET"):
    url = tb.url + "/data/plugin/advisor/trace?" + urllib.parse.urlencode({"run": run})
    request = urllib.request.Request(url, method=method, headers={"Accept-Encoding": "identity"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, dict(reply.headers.items()), reply.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()


NOT_PROFILES = ["torch/key", "torch/passwd", "torch/etc", "torch/json", "torch/gz", "tf/", "torch/swapped",
                "torch/fifo"]


@pytest.mark.parametrize("server", ["plain", "prefixed"])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("name", NOT_PROFILES)
def test_a_link_to_something_not_a_profile_is_never_served(servers, server, method, name):
    tb = servers[server]
    status, headers, body = _request(tb, _run(tb, name), method)
    assert status == 422, (status, body[:300])
    assert MARKER not in body and b"root:x:0" not in body and b"PRIVATE KEY" not in body
    if method == "GET":
        error = json.loads(body)["error"]
        assert "not served" in error and ("not a PyTorch profiler trace" in error or "not an XSpace" in error
                                          or "not a regular file" in error)


def test_the_report_of_such_a_link_is_refused_too(servers):
    tb = servers["plain"]
    status, body = tb.plugin("report", run=_run(tb, "torch/key"))
    while status == 202:
        status, body = tb.plugin("report", run=_run(tb, "torch/key"))
    assert status == 422 and MARKER.decode() not in json.dumps(body)


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_a_profile_behind_a_link_out_of_the_logdir_is_served(servers, layout, method):
    tb = servers["plain"]
    status, headers, body = _request(tb, _run(tb, "torch/outside"), method)
    real = (layout["outside"] / "real.pt.trace.json").read_bytes()
    assert status == 200 and int(headers["Content-Length"]) == len(real)
    assert body == (real if method == "GET" else b"")


def test_head_answers_the_size_without_a_body(servers, layout):
    tb = servers["prefixed"]
    status, headers, body = _request(tb, _run(tb, "torch/ok"), "HEAD")
    file = layout["logdir"] / "torch" / "ok" / "w.1700000001000.pt.trace.json.gz"
    assert status == 200 and body == b"" and int(headers["Content-Length"]) == file.stat().st_size
    assert headers["Content-Type"] == "application/gzip"
    assert _request(tb, _run(tb, "torch/ok"))[2] == file.read_bytes()


@pytest.mark.parametrize("name", ["torch/lying", "torch/extra"])
def test_a_gzip_is_sized_by_inflating_it_not_by_its_trailer(servers, name):
    tb = servers["plain"]
    status, _, body = _request(tb, _run(tb, name))
    assert status == 413, body[:300]
    assert "inflates to more than" in json.loads(body)["error"]


# ---------------------------------------------------------------------------------------------------
# Streaming, bounds, stalls


BIG_MB = 200
STALL_S = 10
CLIENTS = 16


def _rss_mb(pid: int) -> float:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024


def _stalled_client(tb, run: str) -> socket.socket:
    """A client that sends its request, reads the status line and then never reads again."""
    client = socket.create_connection(("127.0.0.1", tb.port), timeout=60)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    path = "/data/plugin/advisor/trace?" + urllib.parse.urlencode({"run": run})
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert client.recv(12).startswith(b"HTTP/1.")
    return client


def test_sixteen_stalled_clients_cost_no_memory_and_are_dropped(tmp_path):
    logdir = tmp_path / "logs"
    big = logdir / "big" / "w.1700000000000.pt.trace.json"
    big.parent.mkdir(parents=True)
    with big.open("wb") as f:  # a valid head, then 200 MB of one string
        f.write(b'{"traceEvents": [], "pad": "')
        for _ in range(BIG_MB):
            f.write(b"x" * (1 << 20))
        f.write(b'"}')
    digest = hashlib.sha256(big.read_bytes()).hexdigest()
    with start_tensorboard(logdir, "--advisor_reload_interval=0", "--advisor_write_markers=false",
                           "--advisor_cache_dir=off", f"--advisor_trace_stall={STALL_S}") as tb:
        run = tb.wait_for(lambda: tb.plugin("runs")[1]["runs"])[0]["run"]
        before = _rss_mb(tb.process.pid)
        clients: List[socket.socket] = [_stalled_client(tb, run) for _ in range(CLIENTS)]
        grown = _rss_mb(tb.process.pid) - before
        status, headers, _ = _request(tb, run)  # the four places are taken
        assert status == 503 and headers["Retry-After"] == "5"
        assert grown < 64, f"TensorBoard grew by {grown:.0f} MB with {CLIENTS} stalled clients"
        # the stalled ones are dropped after STALL_S: a download then goes through, whole
        served = tb.wait_for(lambda: (lambda r: r if r[0] == 200 else None)(_request(tb, run)), timeout_s=180)
        assert hashlib.sha256(served[2]).hexdigest() == digest
        for client in clients:
            client.close()
