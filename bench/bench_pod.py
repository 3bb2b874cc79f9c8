"""Benchmark: one many-host session analysed sequentially, with the local pool, on Dask, from S3.

    python bench/bench_pod.py [--hosts 64] [--steps 150] [--kernels-per-step 1500] [--modes ...]

Writes one synthetic host file with make_profile.py (150 steps × 1500 kernels ≈ 20 MB) and copies it
to `--hosts` host files of one session under bench/out/pod/, then measures each mode in a fresh
Python process:

- sequential: hosts one after another in the process (`--workers 1`);
- pool: hostpool's local process pool (cores and memory decide its size);
- dask: a LocalCluster of 2 worker processes on 127.0.0.1 (started before the clock starts);
- s3: the same session uploaded to a moto_server on 127.0.0.1, read through TensorBoard's S3 file
  layer with the local pool.

For each: wall time of building the run report, and the peak RSS of the whole process tree (the
process plus its pool / cluster workers, sampled every 20 ms with psutil; the S3 server itself is
not counted) above the tree's RSS just before the work. It also measures the peak of one host in a
fresh process (RSS growth / file size: hostpool.PEAK_BYTES_PER_FILE_BYTE comes from this) and checks
that every mode produced the same report JSON. Not a test: CI does not run it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out" / "pod"
SESSION = "2024_01_01_00_00_00"
RUN = f"job/{SESSION}"
MODES = ("one_host", "sequential", "pool", "dask", "s3")


def make_session(hosts: int, steps: int, kernels: int, regen: bool) -> Path:
    session = OUT / "job" / "plugins" / "profile" / SESSION
    template = HERE / "out" / f"pod-host-{steps}x{kernels}.xplane.pb"
    if regen or not template.exists():
        template.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, str(HERE / "make_profile.py"), str(template), "--steps", str(steps)]
        subprocess.run(cmd + ["--kernels-per-step", str(kernels)], check=True)
    if session.exists() and (regen or len(list(session.glob("*.xplane.pb"))) != hosts):
        shutil.rmtree(OUT)
    session.mkdir(parents=True, exist_ok=True)
    for i in range(hosts):
        target = session / f"host{i:03d}.xplane.pb"
        if not target.exists():
            shutil.copyfile(template, target)
    return session


# ---------------------------------------------------------------------------------------------------
# The child: one mode, measured


class TreeSampler:
    """Peak summed RSS of this process and its descendants (minus `exclude` pids) while running."""

    def __init__(self, exclude=()):
        import psutil

        self.me = psutil.Process()
        self.exclude = set(exclude)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def rss(self) -> int:
        total = 0
        for proc in [self.me] + self.me.children(recursive=True):
            if proc.pid in self.exclude:
                continue
            with contextlib.suppress(Exception):  # a worker that just exited
                total += proc.memory_info().rss
        return total

    def _loop(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            self._stop.wait(0.02)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.rss())


def child(mode: str, logdir: str, endpoint: str, moto_pid: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from tb_plugin_advisor.report import hostpool
    from tb_plugin_advisor.sources.discovery import scan_logdir
    from tb_plugin_advisor.sources.runs import find_run

    cluster = None
    kwargs = {}
    if mode == "one_host":
        session = find_run(scan_logdir(logdir), RUN)
        first = session.hosts[0]
        sampler = TreeSampler()
        base = sampler.rss()
        start = time.perf_counter()
        with sampler:
            hostpool.analyze_host_file(first.path, first.host, session.format)
        wall = time.perf_counter() - start
        return {"wall_s": wall, "base_rss": base, "peak_rss": sampler.peak, "file_bytes": first.size_bytes}
    if mode == "sequential":
        kwargs["workers"] = 1
    elif mode == "dask":
        from distributed import LocalCluster

        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        )
        kwargs["scheduler"] = cluster.scheduler_address
    session = find_run(scan_logdir(logdir), RUN)
    sampler = TreeSampler(exclude=[moto_pid] if moto_pid else [])
    base = sampler.rss()
    start = time.perf_counter()
    with sampler:
        report = hostpool.build_session_report(session, **kwargs).to_json()
    wall = time.perf_counter() - start
    if cluster is not None:
        cluster.close()
    report.pop("profile")  # where the files were read from: the only part that differs on S3
    digest = hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()
    return {
        "wall_s": wall,
        "base_rss": base,
        "peak_rss": sampler.peak,
        "hosts": len(session.hosts),
        "bytes": session.size_bytes,
        "json_sha256": digest,
        "pool_size": hostpool.pool_size(
            [h.size_bytes for h in session.hosts], hostpool.usable_cores(), hostpool.available_memory_bytes()
        ),
    }


# ---------------------------------------------------------------------------------------------------
# The parent


def run_child(mode: str, logdir: str, env: dict, moto_pid: int = 0) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--logdir", logdir, "--moto-pid", str(moto_pid)]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if result.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def upload(endpoint: str, session: Path) -> None:
    import boto3

    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
        region_name="us-east-1",
    )
    s3.create_bucket(Bucket="bench-pod")
    for path in sorted(session.glob("*.xplane.pb")):
        s3.upload_file(
            str(path), "bench-pod", f"logs/{RUN.split('/')[0]}/plugins/profile/{SESSION}/{path.name}"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=64)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--kernels-per-step", type=int, default=1500)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--regen", action="store_true")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--logdir", help=argparse.SUPPRESS)
    parser.add_argument("--moto-pid", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.logdir, os.environ.get("S3_ENDPOINT", ""), args.moto_pid)))
        return 0

    session = make_session(args.hosts, args.steps, args.kernels_per_step, args.regen)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    results = {}
    for mode in args.modes:
        if mode != "s3":
            results[mode] = run_child(mode, str(OUT), env)
            print(mode, json.dumps(results[mode]), flush=True)
            continue
        sys.path.insert(0, str(ROOT / "tests"))
        from s3_server import moto_server

        with moto_server() as endpoint:
            upload(endpoint, session)
            s3_env = dict(
                env,
                S3_ENDPOINT=endpoint,
                AWS_ACCESS_KEY_ID="bench",
                AWS_SECRET_ACCESS_KEY="bench",
                AWS_DEFAULT_REGION="us-east-1",
            )
            moto_pid = _pid_listening(endpoint)
            results[mode] = run_child(mode, "s3://bench-pod/logs", s3_env, moto_pid)
        print(mode, json.dumps(results[mode]), flush=True)

    print()
    if "one_host" in results:
        one = results["one_host"]
        ratio = (one["peak_rss"] - one["base_rss"]) / one["file_bytes"]
        print(
            f"one host: {one['file_bytes'] / 1e6:.1f} MB file, {one['wall_s']:.2f} s, "
            f"RSS growth {(one['peak_rss'] - one['base_rss']) / 1e6:.0f} MB = {ratio:.2f} × file size "
            "(hostpool: WORKER_BASE_BYTES + PEAK_BYTES_PER_FILE_BYTE × size)"
        )
    runs = {m: r for m, r in results.items() if m != "one_host"}
    if not runs:
        return 0
    reference = runs.get("sequential")
    any_run = next(iter(runs.values()))
    print(
        f"{any_run['hosts']} hosts, {any_run['bytes'] / 1e6:.0f} MB; cores {os.cpu_count()}; "
        f"local pool size {any_run['pool_size']}"
    )
    print(
        f"{'mode':12} {'wall s':>8} {'vs seq':>7} {'peak tree RSS MB':>17} {'above base MB':>14}  same JSON"
    )
    for mode, r in runs.items():
        speed = f"{reference['wall_s'] / r['wall_s']:6.2f}×" if reference else "     -"
        same = "yes" if reference is None or r["json_sha256"] == reference["json_sha256"] else "NO"
        print(
            f"{mode:12} {r['wall_s']:8.1f} {speed:>7} {r['peak_rss'] / 1e6:17.0f} "
            f"{(r['peak_rss'] - r['base_rss']) / 1e6:14.0f}  {same}"
        )
    return 0


def _pid_listening(endpoint: str) -> int:
    import psutil

    port = int(endpoint.rsplit(":", 1)[1])
    for conn in psutil.net_connections(kind="tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN:
            return conn.pid or 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
