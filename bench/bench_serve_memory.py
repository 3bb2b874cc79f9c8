"""Memory of the two hostile cases the serving code bounds, measured on this machine.

    python bench/bench_serve_memory.py [--trace-mb 200] [--clients 16] [--bomb-gb 1.5]
                                       [--only-bombs] [--code OTHER_CHECKOUT]

1. Stalled downloads: a real TensorBoard serves a `--trace-mb` Kineto trace to `--clients` clients
   that read the status line and then nothing. Its RSS is sampled every 50 ms for 5 s while they
   stall; printed: RSS before, the highest sample, the growth, and how the clients were answered
   (4 served, the rest 503 with the default --advisor_trace_downloads).
2. Gzip bombs: a Kineto trace and an XSpace that inflate to `--bomb-gb` GB are read at the default
   512 MB cap, each in a fresh process; printed: the peak RSS over what the process held before the
   read (ru_maxrss, the high-water mark) and its ratio to the cap.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "readers")]

from fixtures_server import start_tensorboard  # noqa: E402
from test_bomb_peak import PEAK  # noqa: E402

MB = 1 << 20
CAP_MB = 512
CODE = ROOT  # the checkout whose readers are measured (--code: another one, to compare)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def stalled_clients(trace_mb: int, clients: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "logs" / "big" / "w.1700000000000.pt.trace.json"
        trace.parent.mkdir(parents=True)
        with trace.open("wb") as f:
            f.write(b'{"traceEvents": [], "pad": "')
            for _ in range(trace_mb):
                f.write(b"x" * MB)
            f.write(b'"}')
        flags = ("--advisor_reload_interval=0", "--advisor_write_markers=false", "--advisor_cache_dir=off")
        with start_tensorboard(trace.parents[1], *flags) as tb:
            run = tb.wait_for(lambda: tb.plugin("runs")[1]["runs"])[0]["run"]
            time.sleep(2)
            before = _rss_mb(tb.process.pid)
            path = "/data/plugin/advisor/trace?" + urllib.parse.urlencode({"run": run})
            sockets, statuses = [], {}
            for _ in range(clients):
                client = socket.create_connection(("127.0.0.1", tb.port), timeout=60)
                client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                client.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                status = client.recv(12).split(b" ")[1].decode()
                statuses[status] = statuses.get(status, 0) + 1
                sockets.append(client)
            highest = before
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                highest = max(highest, _rss_mb(tb.process.pid))
                time.sleep(0.05)
            for client in sockets:
                client.close()
    print(f"stalled downloads: {clients} clients on a {trace_mb} MB trace; answered {statuses}; "
          f"TensorBoard RSS {before:.0f} MB before, at most {highest:.0f} MB while they stalled: "
          f"+{highest - before:.1f} MB")


def _bomb(path: Path, head: bytes, unit: bytes, size: int) -> Path:
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = unit * (MB // len(unit))
    with path.open("wb") as f:
        f.write(deflate.compress(head))
        for _ in range(size // MB):
            f.write(deflate.compress(block))
        f.write(deflate.flush())
    return path


def bombs(gigabytes: float) -> None:
    size = int(gigabytes * 1024) * MB
    with tempfile.TemporaryDirectory() as tmp:
        event = b'{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 1},'
        cases = {
            "Kineto, events": _bomb(Path(tmp) / "events.pt.trace.json.gz", b'{"traceEvents": [', event, size),
            "XSpace, zeros": _bomb(Path(tmp) / "zeros.xplane.pb", b"", b"\0", size),
        }
        for name, path in cases.items():
            done = subprocess.run([sys.executable, "-c", PEAK, str(path)], capture_output=True, text=True,
                                  cwd=str(CODE), env={"PYTHONPATH": str(CODE), "PATH": "/usr/bin:/bin"})
            result = json.loads(done.stdout)
            print(f"gzip bomb ({name}): {path.stat().st_size / MB:.1f} MB inflating to {gigabytes} GB, cap "
                  f"{CAP_MB} MB: refused in {result['s']:.1f} s, peak +{result['grew_mb']:.0f} MB "
                  f"({result['grew_mb'] / CAP_MB:.2f}x the cap): {result['error'].split(': ', 1)[-1][:60]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace-mb", type=int, default=200)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--bomb-gb", type=float, default=1.5)
    parser.add_argument("--code", type=Path, default=ROOT, help="measure the readers of this checkout")
    parser.add_argument("--only-bombs", action="store_true")
    args = parser.parse_args()
    global CODE
    CODE = args.code
    if not args.only_bombs:
        stalled_clients(args.trace_mb, args.clients)
    bombs(args.bomb_gb)


if __name__ == "__main__":
    main()
