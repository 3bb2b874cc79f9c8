"""Load and memory benchmark of the Advisor's HTTP API on a real TensorBoard (127.0.0.1 only).

    python bench/load.py [--requests 1000] [--clients 50] [--runs 12] [--time-limit 300]
    python bench/load.py --memory [--steps 2000 --kernels-per-step 1700]   # a ~300 MB profile

Load mode: writes a logdir of small synthetic profiles (plus a corrupt one and a legacy one), starts
TensorBoard, and sends `--requests` GETs from `--clients` concurrent clients across every route
(runs, doctor, report, report per host, diff, the tab's script, and 4xx requests whose status is
known), in a shuffled mix so the first request for each report/diff is cold and later ones are
cached. Prints the counts, the errors (transport failures, 5xx, or a status other than expected)
and latency percentiles: all, cached (200 answers of keys already answered, and runs/doctor/static)
and cold. Passes (exit 0) with 0 errors and cached p95 < 100 ms.

Memory mode: writes one large profile (bench/out/, reused), starts TensorBoard with a one-entry
cache, warms it with a small report, then reads the server's RSS (/proc) before, during (peak) and
after the large analysis, and after its eviction (a second small report replaces it in the cache),
while two clients poll the runs and doctor routes; prints those RSS figures, the workers' peak RSS
and the p95 of runs/doctor during the analysis. Passes with RSS-after-eviction within 100 MB of
before and runs/doctor p95 < 50 ms.

Not a test: timings depend on the machine; compare figures taken in one run.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

import make_profile  # noqa: E402
from fixtures_server import start_tensorboard  # noqa: E402

CACHED_P95_LIMIT_MS = 100.0
STALL_P95_LIMIT_MS = 50.0
RSS_RETURN_LIMIT_MB = 100.0


def get(url: str, timeout: float = 60.0) -> Tuple[int, float]:
    """(status, seconds) of one GET; status 0 for a transport failure."""
    begin = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            resp.read()
            status = resp.status
    except urllib.error.HTTPError as e:
        e.read()
        status = e.code
    except OSError:
        status = 0
    return status, time.perf_counter() - begin


def pct(values: List[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))] * 1000


def write_small_logdir(root: Path, runs: int) -> List[str]:
    """`runs` runs of one small profile each, one with two hosts; returns the run names."""
    data = make_profile.build(20, 40)
    names = []
    for i in range(runs):
        session = root / f"run{i:02d}" / "plugins" / "profile" / "s1"
        session.mkdir(parents=True)
        (session / "host0.xplane.pb").write_bytes(data)
        if i == 0:
            (session / "host1.xplane.pb").write_bytes(data)
        names.append(f"run{i:02d}/s1")
    corrupt = root / "corrupt" / "plugins" / "profile" / "s1"
    corrupt.mkdir(parents=True)
    (corrupt / "host0.xplane.pb").write_bytes(b"\xff\xfe not an XSpace")
    legacy = root / "legacy" / "plugins" / "profile" / "s1"
    legacy.mkdir(parents=True)
    (legacy / "10.0.0.1.overview_page.pb").write_bytes(b"o" * 10)
    return names


def plan(runs: List[str], count: int, seed: int = 0) -> List[Tuple[str, str, Tuple[int, ...]]]:
    """(key, path, acceptable statuses) per request; 202 is acceptable for analyses (cold)."""
    rng = random.Random(seed)
    q = urllib.parse.quote
    choices = [
        lambda: ("runs", "runs", (200,)),
        lambda: ("doctor", "doctor", (200, 202)),
        lambda: ("static", "index.js", (200,)),
        lambda: ("404", "report?run=no/such", (404,)),
        lambda: ("400", "report", (400,)),
        lambda: ("422", "report?run=corrupt/s1", (422, 202)),
        lambda: ("422", "report?run=legacy/s1", (422,)),
        lambda: ("host", f"report?run={q(runs[0])}&host=host1", (200, 202)),
    ]
    requests = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.45:
            run = rng.choice(runs)
            requests.append((f"report {run}", f"report?run={q(run)}", (200, 202)))
        elif kind < 0.6:
            a, b = rng.sample(runs, 2)
            requests.append((f"diff {a} {b}", f"diff?baseline={q(a)}&candidate={q(b)}", (200, 202)))
        else:
            requests.append(rng.choice(choices)())
    return requests


def load_mode(args) -> int:
    with tempfile.TemporaryDirectory(prefix="advisor-load-") as tmp:
        logdir = Path(tmp) / "logs"
        runs = write_small_logdir(logdir, args.runs)
        with start_tensorboard(logdir, "--advisor_wait=0.5", "--advisor_reload_interval=0") as tb:
            base = f"{tb.url}/data/plugin/advisor/"
            answered: set = set()
            lock = threading.Lock()
            results: List[Tuple[str, str, int, float, bool, bool]] = []
            deadline = time.monotonic() + args.time_limit

            def one(item) -> None:
                key, path, ok = item
                if time.monotonic() > deadline:
                    return
                with lock:
                    warm = key in answered or not key.startswith(("report", "diff", "doctor", "host", "422"))
                status, seconds = get(base + path)
                with lock:
                    if status in (200, 422):
                        answered.add(key)
                    results.append((key, path, status, seconds, status in ok, warm and status != 202))

            begin = time.perf_counter()
            with ThreadPoolExecutor(args.clients) as pool:
                list(pool.map(one, plan(runs, args.requests)))
            wall = time.perf_counter() - begin
        errors = [(p, s) for _k, p, s, _t, ok, _w in results if not ok or s == 0 or s >= 500]
        every = [t for *_x, t, _ok, _w in results]
        cached = [t for _k, _p, s, t, _ok, warm in results if warm and s < 500]
        cold = [t for _k, _p, s, t, _ok, warm in results if not warm]
        by_status: Dict[int, int] = {}
        for _k, _p, s, *_r in results:
            by_status[s] = by_status.get(s, 0) + 1
    print(
        f"load: {len(results)} of {args.requests} requests from {args.clients} clients in {wall:.1f} s "
        f"({len(results) / wall:.0f} req/s); statuses {dict(sorted(by_status.items()))}"
    )
    print(f"errors: {len(errors)}" + (f" e.g. {errors[:5]}" if errors else ""))
    for name, values in (("all", every), ("cached", cached), ("cold", cold)):
        print(
            f"{name:>6}: n={len(values):4d}  p50 {pct(values, 50):7.1f} ms  "
            f"p95 {pct(values, 95):7.1f} ms  max {pct(values, 100):7.1f} ms"
        )
    kinds: Dict[str, List[float]] = {}
    for key, _p, s, t, _ok, warm in results:
        if warm and s < 500:
            kinds.setdefault(key.split(" ")[0], []).append(t)
    by_route = ", ".join(f"{k} {pct(v, 95):.1f} ms (n={len(v)})" for k, v in sorted(kinds.items()))
    print(f"cached p95 by route: {by_route}")
    ok = not errors and len(results) == args.requests and pct(cached, 95) < CACHED_P95_LIMIT_MS
    print("PASS" if ok else "FAIL", f"(0 errors, all sent, cached p95 < {CACHED_P95_LIMIT_MS:.0f} ms)")
    return 0 if ok else 1


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def children_rss_mb(pid: int) -> float:
    out = subprocess.run(["ps", "-o", "rss=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return sum(int(x) for x in out.split()) / 1024


def poll_until_done(url: str, timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, _ = get(url, timeout_s)
        if status != 202:
            return status
        time.sleep(0.2)
    return 202


def memory_mode(args) -> int:
    big = HERE / "out" / f"load-{args.steps}x{args.kernels_per_step}.xplane.pb"
    if not big.exists():
        shape = ["--steps", str(args.steps), "--kernels-per-step", str(args.kernels_per_step)]
        make_profile.main([str(big), *shape])
    with tempfile.TemporaryDirectory(prefix="advisor-mem-") as tmp:
        logdir = Path(tmp) / "logs"
        write_small_logdir(logdir, 2)
        session = logdir / "big" / "plugins" / "profile" / "s1"
        session.mkdir(parents=True)
        (session / "host0.xplane.pb").write_bytes(big.read_bytes())
        with start_tensorboard(logdir, "--advisor_cache_size=1", "--advisor_wait=0.5") as tb:
            base = f"{tb.url}/data/plugin/advisor/"
            pid = tb.process.pid
            assert poll_until_done(base + "report?run=run00/s1", 120) == 200
            get(base + "doctor")
            time.sleep(1)
            before = rss_mb(pid)
            stop = threading.Event()
            latencies: Dict[str, List[float]] = {"runs": [], "doctor": []}
            peaks = {"server": before, "workers": 0.0}

            def poller(route: str) -> None:
                while not stop.is_set():
                    status, seconds = get(base + route)
                    if status == 200:
                        latencies[route].append(seconds)
                    time.sleep(0.02)

            def sampler() -> None:
                while not stop.is_set():
                    peaks["server"] = max(peaks["server"], rss_mb(pid))
                    peaks["workers"] = max(peaks["workers"], children_rss_mb(pid))
                    time.sleep(0.1)

            # Reference: the same polling with no analysis running, in this run, on this machine.
            idle_threads = [threading.Thread(target=poller, args=(r,)) for r in latencies]
            for t in idle_threads:
                t.start()
            time.sleep(args.reference_s)
            stop.set()
            for t in idle_threads:
                t.join()
            idle = {route: values[:] for route, values in latencies.items()}
            for values in latencies.values():
                values.clear()
            stop.clear()
            threads = [threading.Thread(target=poller, args=(r,)) for r in latencies]
            threads.append(threading.Thread(target=sampler))
            for t in threads:
                t.start()
            begin = time.perf_counter()
            status = poll_until_done(base + "report?run=big/s1", args.time_limit)
            analysis_s = time.perf_counter() - begin
            stop.set()
            for t in threads:
                t.join()
            after_analysis = rss_mb(pid)
            assert poll_until_done(base + "report?run=run01/s1", 120) == 200  # evicts the big report
            time.sleep(2)
            after_eviction = rss_mb(pid)
    size_mb = big.stat().st_size / 1e6
    runs_p95, doctor_p95 = pct(latencies["runs"], 95), pct(latencies["doctor"], 95)
    print(f"memory: {size_mb:.0f} MB profile analysed in {analysis_s:.1f} s (status {status})")
    print(
        f"server RSS: before {before:.0f} MB, peak during {peaks['server']:.0f} MB, after analysis "
        f"{after_analysis:.0f} MB, after eviction {after_eviction:.0f} MB "
        f"(+{after_eviction - before:.0f} MB); worker processes peak {peaks['workers']:.0f} MB"
    )
    for label, table in (("idle (reference)", idle), ("during the analysis", latencies)):
        print(
            f"{label}: runs n={len(table['runs'])} p50 {pct(table['runs'], 50):.1f} ms "
            f"p95 {pct(table['runs'], 95):.1f} ms, doctor n={len(table['doctor'])} "
            f"p50 {pct(table['doctor'], 50):.1f} ms p95 {pct(table['doctor'], 95):.1f} ms"
        )
    ok = (
        status == 200
        and after_eviction - before < RSS_RETURN_LIMIT_MB
        and max(runs_p95, doctor_p95) < STALL_P95_LIMIT_MS
    )
    limits = f"RSS back within {RSS_RETURN_LIMIT_MB:.0f} MB, p95 < {STALL_P95_LIMIT_MS:.0f} ms"
    print("PASS" if ok else "FAIL", f"({limits})")
    return 0 if ok else 1


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds before it stops sending")
    parser.add_argument("--memory", action="store_true", help="the RSS and stall benchmark instead")
    parser.add_argument("--steps", type=int, default=2000, help="memory mode: steps of the large profile")
    parser.add_argument("--kernels-per-step", type=int, default=1700, help="memory mode: kernels per step")
    parser.add_argument("--reference-s", type=float, default=10.0, help="memory mode: idle polling first")
    args = parser.parse_args(argv)
    return memory_mode(args) if args.memory else load_mode(args)


if __name__ == "__main__":
    sys.exit(main())
