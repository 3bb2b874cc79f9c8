"""Fuzz what a TensorBoard serving a shared logdir exposes: the `trace` and `trend` routes of a real
TensorBoard, and the analysis cache's reader, with swapped files and mutated entries.

    python bench/fuzz_serve.py [--cases 100000] [--seed 0] [--timeout-s 30] [--minutes 0] [--tracebacks]

One TensorBoard (127.0.0.1, a 4 MB profile cap, a 3 s trace stall, its own cache directory) serves a
logdir of SLOTS run directories, each holding one trace. Each case is one of:

- trace: a slot's file is swapped for something (a link to a secret, to /dev/zero, to a directory
  or to a real profile outside the logdir; a FIFO; an empty, truncated, byte-flipped or random file;
  a gzip bomb, a gzip with a lying trailer or an extra member; an XSpace under a trace's name; a
  trace over the cap; a valid trace) and fetched by GET or HEAD, sometimes by a client that reads a
  few bytes and hangs up. A 5xx, or a body holding the secret's bytes, is a failure;
- trend: a random pattern (globs, classes, long, odd characters) and order. A 5xx is a failure;
- cache: an entry of the cache's own (a real report under a real key) mutated (flipped, truncated,
  zeroed or cut bytes; a valid header around deep JSON, NaN, another key or the wrong shape) or
  replaced by a FIFO, a link or a directory, then read by a ReportCache in this process: anything
  but a valid report or None is a failure.

The loop and the summary are bench/fuzz_runner.py's (cases, clear refusals, uncaught exceptions by
class with the seeds that reproduce them, hangs: a case over --timeout-s), followed by
TensorBoard's peak RSS (VmHWM) and its RSS at the end.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path
from random import Random
from typing import Any, Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))

from fixtures_server import start_tensorboard  # noqa: E402
from fuzz_runner import Hang, fuzz_main  # noqa: E402
from synth_kineto import training_trace  # noqa: E402

from tb_plugin_advisor.report.disk_cache import HEADER, MAGIC, ReportCache, encode_entry, entry_key  # noqa: E402
from tb_plugin_advisor.report.schema import shape_error  # noqa: E402
from tb_plugin_advisor.sources.session import HostFile, Session  # noqa: E402

SLOTS = 6
CAP_MB = 4
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nfuzz-secret-7b1c3e\n"
MARKER = b"fuzz-secret-7b1c3e"
XSPACE = next((ROOT / "tests" / "captures" / "h200" / "jax_mlp").rglob("*.xplane.pb"))
GOLDEN_REPORT = ROOT / "tests" / "golden" / "synthetic__report.torch_current_w0.json.gz"


CUT = 0  # the status a download cut short is counted under: a refusal, when it held no secret


class Failure(Exception):
    """A server answer that must never be: a 5xx, or a secret's bytes."""


class World:
    """The logdir, the secrets outside it, the TensorBoard and the cache directory of one run."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="fuzz-serve-"))
        self.logdir = self.root / "logs"
        self.outside = self.root / "outside"
        self.outside.mkdir()
        (self.outside / "id_rsa").write_bytes(SECRET)
        secret_json = {"private_key": MARKER.decode(), "traceEvents": 1}
        (self.outside / "secret.json").write_text(json.dumps(secret_json))
        (self.outside / "dir").mkdir()
        self.valid = training_trace(steps=3).to_bytes()
        (self.outside / "real.pt.trace.json").write_bytes(self.valid)
        for slot in range(SLOTS):
            self.write(slot, self.valid)
        self.cache_dir = self.root / "cache"
        self.server = start_tensorboard(
            self.logdir, f"--advisor_max_profile_mb={CAP_MB}", "--advisor_reload_interval=1",
            "--advisor_write_markers=false", f"--advisor_cache_dir={self.cache_dir}", "--advisor_workers=1",
            "--advisor_worker_tasks=1000", "--advisor_trace_stall=3", "--advisor_wait=0.2")
        self.runs = self.server.wait_for(lambda: self._runs(), timeout_s=60)
        self.started_mb = self._status()["VmRSS"] // 1024
        report = json.loads(gzip.decompress(GOLDEN_REPORT.read_bytes()).decode().split("\n--- exit")[0])
        self.report = report
        self.cache = ReportCache(str(self.root / "reader-cache"))
        self.session = Session("fuzz/1", "/x", "/x", "fuzz", "1", "kineto",
                               (HostFile("w", "/x/w.1.pt.trace.json", 10, 1),), ("w.1.pt.trace.json",))
        self.key = entry_key(self.session, None)
        self.entry = Path(self.cache._path(self.cache._digest(self.key)))

    def path(self, slot: int) -> Path:
        return self.logdir / f"slot{slot}" / "w.1700000000000.pt.trace.json"

    def write(self, slot: int, data: bytes) -> None:
        path = self.path(slot)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.clear(path)
        path.write_bytes(data)

    @staticmethod
    def clear(path: Path) -> None:
        if path.is_symlink() or path.exists():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()

    def _runs(self) -> Dict[int, str]:
        status, body = self.server.plugin("runs")
        if status != 200:
            return {}
        runs = {int(r["run"].split("/")[0][4:]): r["run"] for r in body.get("runs", [])}
        return runs if len(runs) == SLOTS else {}

    def _status(self) -> Dict[str, int]:
        fields = {}
        for line in Path(f"/proc/{self.server.process.pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                fields[name] = int(value.split()[0])
        return fields

    def peak_rss(self) -> List[str]:
        try:
            fields = self._status()
        except OSError:
            return ["TensorBoard: gone"]
        return [f"TensorBoard: RSS {self.started_mb} MB once started, peak RSS (VmHWM) "
                f"{fields['VmHWM'] // 1024} MB, {fields['VmRSS'] // 1024} MB at the end"]

    def close(self) -> None:
        self.server.stop()
        shutil.rmtree(self.root, ignore_errors=True)


WORLD: World


# ---------------------------------------------------------------------------------------------------
# Making cases (plans; run_case carries them out)

SWAPS = ("secret_link", "secret_json_link", "zero_link", "dir_link", "outside_link", "fifo", "empty",
         "truncated", "flipped", "random", "bomb", "lying_trailer", "extra_member", "xspace", "over_cap",
         "valid", "valid_gzip", "swap_during")
ENTRY_DAMAGE = ("flip", "truncate", "zero", "cut", "deep", "nan", "other_key", "shape", "random_json",
                "fifo", "link", "dir", "valid")
GLOB = "ab*?[]!-/\\^._0123456789 \u00e9\U0001f600%"


def make_case(rnd: Random) -> Tuple[Sequence[str], Dict[str, Any]]:
    kind = rnd.choices(("trace", "trend", "cache"), weights=(5, 2, 3))[0]
    if kind == "trace":
        plan = {"kind": kind, "slot": rnd.randrange(SLOTS), "swap": rnd.choice(SWAPS),
                "method": rnd.choice(("GET", "GET", "HEAD", "PARTIAL")), "seed": rnd.getrandbits(32)}
        return (kind, plan["swap"], plan["method"]), plan
    if kind == "trend":
        size = rnd.choice((1, 3, 10, 40, 255, 256, 257, 1000, 4000))
        pattern = "".join(rnd.choice(GLOB) for _ in range(size))
        if rnd.random() < 0.3:
            pattern = "slot" + pattern[:20]
        plan = {"kind": kind, "pattern": pattern, "order": rnd.choice(("time", "given", "x", ""))}
        return (kind, f"len {size}", plan["order"]), plan
    plan = {"kind": kind, "damage": rnd.choice(ENTRY_DAMAGE), "seed": rnd.getrandbits(32)}
    return (kind, plan["damage"]), plan


def _gzip_member(data: bytes, level: int = 6) -> bytes:
    deflate = zlib.compressobj(level, zlib.DEFLATED, 31)
    return deflate.compress(data) + deflate.flush()


def _swapped(world: World, slot: int, swap: str, rnd: Random) -> None:
    path = world.path(slot)
    valid = world.valid
    if swap.endswith("_link") or swap == "fifo":
        world.clear(path)
        target = {"secret_link": world.outside / "id_rsa", "secret_json_link": world.outside / "secret.json",
                  "zero_link": Path("/dev/zero"), "dir_link": world.outside / "dir",
                  "outside_link": world.outside / "real.pt.trace.json"}.get(swap)
        os.symlink(target, path) if target else os.mkfifo(path)
        return
    data = {
        "empty": b"",
        "truncated": valid[: rnd.randrange(len(valid))],
        "random": bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 4096))),
        "bomb": _gzip_member(b'{"traceEvents": [' + b" " * ((CAP_MB + 2) << 20) + b"]}", 9),
        "xspace": XSPACE.read_bytes(),
        "over_cap": b'{"traceEvents": [], "pad": "' + b"x" * ((CAP_MB + 1) << 20) + b'"}',
        "valid": valid,
        "valid_gzip": gzip.compress(valid),
        "swap_during": valid,
    }.get(swap)
    if swap == "flipped":
        data = bytearray(valid)
        for _ in range(rnd.randint(1, 20)):
            data[rnd.randrange(len(data))] = rnd.getrandbits(8)
        data = bytes(data)
    elif swap in ("lying_trailer", "extra_member"):
        member = _gzip_member(b'{"traceEvents": [' + b" " * ((CAP_MB + 1) << 20) + b"]}", 9)
        lying = member[:-4] + (100).to_bytes(4, "little")  # the trailer claims 100 bytes
        data = lying if swap == "lying_trailer" else member + gzip.compress(b" ")
    world.write(slot, data)


def _fetch(world: World, run: str, method: str) -> Tuple[int, bytes]:
    path = "/data/plugin/advisor/trace?" + urllib.parse.urlencode({"run": run})
    if method == "PARTIAL":  # reads the status line and a few bytes, then hangs up
        with socket.create_connection(("127.0.0.1", world.server.port), timeout=20) as client:
            client.sendall(f"GET {world.server.path_prefix}{path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            head = client.recv(4096)
        status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
        return status, head
    request = urllib.request.Request(world.server.url + path, method=method,
                                     headers={"Accept-Encoding": "identity"})
    try:
        with urllib.request.urlopen(request, timeout=20) as reply:
            try:
                return reply.status, reply.read()
            except http.client.IncompleteRead as cut:  # the file changed while served: cut short
                return CUT, cut.partial
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _run_trace(world: World, plan: Dict[str, Any]) -> str:
    rnd = Random(plan["seed"])
    slot, swap = plan["slot"], plan["swap"]
    _swapped(world, slot, swap, rnd)
    try:
        if swap == "swap_during":  # the valid trace, swapped for the key while it is served
            status, body = _fetch_while_swapping(world, slot)
        else:
            status, body = _fetch(world, world.runs[slot], plan["method"])
    except (socket.timeout, TimeoutError) as exc:
        raise Hang() from exc
    finally:
        world.write(slot, world.valid)
    if MARKER in body:
        raise Failure(f"trace served a secret ({swap})")
    if status >= 500 and status != 503:
        raise Failure(f"trace answered {status} ({swap}): {body[:200]!r}")
    return "report" if status == 200 else "refused"


def _fetch_while_swapping(world: World, slot: int) -> Tuple[int, bytes]:
    import threading

    def swap() -> None:
        link = world.path(slot).with_name("swap.tmp")
        world.clear(link)
        os.symlink(world.outside / "id_rsa", link)
        os.replace(link, world.path(slot))

    timer = threading.Timer(0.001, swap)
    timer.start()
    try:
        return _fetch(world, world.runs[slot], "GET")
    finally:
        timer.join()


def _run_trend(world: World, plan: Dict[str, Any]) -> str:
    params = {"run": plan["pattern"]}
    if plan["order"]:
        params["order"] = plan["order"]
    reply = world.server.get("/data/plugin/advisor/trend?" + urllib.parse.urlencode(params), timeout=20)
    if reply.status >= 500 and reply.status != 503:
        raise Failure(f"trend answered {reply.status}: {reply.body[:200]!r}")
    return "report" if reply.status in (200, 202) else "refused"


def _entry_with(world: World, text: bytes) -> bytes:
    """`text` as an entry with a valid header and checksum (a forged, not a damaged, entry)."""
    import hashlib

    payload = gzip.compress(text, mtime=0)
    return HEADER.pack(MAGIC, 2, len(payload), hashlib.blake2b(payload, digest_size=16).digest()) + payload


def _run_cache(world: World, plan: Dict[str, Any]) -> str:
    rnd = Random(plan["seed"])
    entry, damage = world.entry, plan["damage"]
    entry.parent.mkdir(parents=True, exist_ok=True)
    world.clear(entry)
    good = encode_entry(world.key, world.report)
    data = bytearray(good)
    if damage == "flip":
        for _ in range(rnd.randint(1, 16)):
            data[rnd.randrange(len(data))] = rnd.getrandbits(8)
    elif damage == "truncate":
        data = data[: rnd.randrange(len(data))]
    elif damage == "zero":
        at = rnd.randrange(len(data))
        data[at: at + 16] = bytes(len(data[at: at + 16]))
    elif damage == "cut":
        at = rnd.randrange(len(data))
        data = data[:at] + data[at + rnd.randint(1, 64):]
    elif damage == "deep":
        data = bytearray(_entry_with(world, b'{"key": ' + json.dumps(world.key).encode() + b', "report": '
                                     + b"[" * 200_000 + b"]" * 200_000 + b"}"))
    elif damage == "nan":
        text = json.dumps({"key": world.key, "report": world.report})
        text = text.replace('"mean_ms": ', '"mean_ms": NaN, "a": ')
        data = bytearray(_entry_with(world, text.encode()))
    elif damage == "other_key":
        data = bytearray(encode_entry(["another"], world.report))
    elif damage == "shape":
        broken = json.loads(json.dumps(world.report))
        broken[rnd.choice(list(broken))] = rnd.choice(("y", 1, [], {}, None, [1], {"a": "b"}))
        data = bytearray(encode_entry(world.key, broken))
    elif damage == "random_json":
        data = bytearray(_entry_with(world, json.dumps({"key": world.key, "report": rnd.random()}).encode()))
    if damage == "fifo":
        os.mkfifo(entry)
    elif damage == "link":
        os.symlink(rnd.choice(("/dev/zero", "/etc/passwd", str(world.outside / "id_rsa"))), entry)
    elif damage == "dir":
        entry.mkdir()
    else:
        entry.write_bytes(bytes(data))
    got = world.cache.get(world.session)
    if got is not None and shape_error(got) is not None:
        raise Failure(f"the cache answered a report without the report's shape ({damage})")
    if damage in ("fifo", "link", "dir"):
        kind = os.lstat(entry).st_mode
        if not (stat.S_ISFIFO(kind) or stat.S_ISLNK(kind) or stat.S_ISDIR(kind)):
            raise Failure(f"the cache replaced a {damage} it did not write")
    return "report" if got is not None else "refused"


def run_case(plan: Dict[str, Any], index: int) -> str:
    return {"trace": _run_trace, "trend": _run_trend, "cache": _run_cache}[plan["kind"]](WORLD, plan)


if __name__ == "__main__":
    WORLD = World()
    try:
        print(f"TensorBoard on {WORLD.server.url}, logdir {WORLD.logdir}, {SLOTS} runs", flush=True)
        code = fuzz_main(__doc__, make_case, run_case, "4xx answers, misses", WORLD.peak_rss)
    finally:
        WORLD.close()
    sys.exit(code)
