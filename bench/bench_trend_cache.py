"""Benchmark: what the persistent analysis cache saves on a long series, from the CLI and across a
TensorBoard restart.

    python bench/bench_trend_cache.py [--captures 100] [--keep] [--all-plugins]

A series of N synthetic PyTorch captures (tests/trend_series.py: same configuration with the
machine's drift, then one capture with a slower DataLoader) is written to bench/out/trend_cache/.
Then, each timed from the request to the answer:

  cli cold      `tb-advisor trend` in a fresh process, empty cache directory
  cli warm      the same command again (every report from the cache)
  cli no cache  the same command with `--no-cache` (the reference: what every call cost before)
  tb cold       a fresh TensorBoard (`--advisor_cache_dir DIR`, DIR empty): the `trend` route polled
                from the first request until it answers 200 (202 with progress meanwhile)
  tb restart    TensorBoard stopped and started again on the same DIR: the same request
  tb no cache   TensorBoard restarted with `--advisor_cache_dir off` (the reference for a restart)
  tb no cache, a worker per capture   the same with `--advisor_worker_tasks=1`: a worker process
                started for every capture, as every analysis once was

The uncached route against the uncached CLI on the same captures, `tb_no_cache_over_cli_no_cache`,
has a bound: ≤ 3 (ROUTE_BOUND); `--uncached-only` measures just those figures (and the worker per
capture beside them).

Each TensorBoard time starts once the server answers `/data/plugins_listing` (its own start-up is
reported apart). TensorBoard runs with its built-in plugins and the Advisor only (`--all-plugins`:
every installed one): torch-tb-profiler, where installed, parses every trace itself at start-up and
its CPU time would be measured as ours. The trend JSON must be the same from every path, and the
bench fails if the change point is not the one written. Results go to bench/out/trend_cache.json.
Not a test: CI does not run it; timings depend on the machine, so compare figures taken in one run
(the ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fixtures_server import TensorBoardServer, start_tensorboard  # noqa: E402
from trend_series import write_series  # noqa: E402

OUT = ROOT / "bench" / "out"
ROUTE_BOUND = 3.0  # the uncached trend route ÷ the uncached CLI on the same captures
RUN = "job"
# TensorBoard with its built-in plugins and the Advisor's loader, no other dynamic plugin
ADVISOR_ONLY = (
    "-c",
    "import sys; from tensorboard import default, main_lib, program; main_lib.global_init(); "
    "keep = lambda p: (getattr(p, '__module__', None) or type(p).__module__).startswith("
    "('tensorboard.', 'tb_plugin_advisor.')); "
    "tb = program.TensorBoard(plugins=[p for p in default.get_plugins() if keep(p)]); "
    "tb.configure(sys.argv); sys.exit(tb.main())",
)


def _series(logdir: Path, captures: int) -> None:
    drift = (1.00, 1.05, 0.96, 1.03, 0.98, 1.06, 1.01)
    write_series(logdir / RUN, drift=[drift[i % len(drift)] for i in range(captures - 1)], regressed=1)


def _cli(logdir: Path, cache: str) -> Tuple[float, Dict[str, Any]]:
    args = [sys.executable, "-m", "tb_plugin_advisor.views.cli.main", "trend", str(logdir), "--run", RUN,
            "--format", "json"]
    args += ["--no-cache"] if cache == "off" else ["--cache-dir", cache]
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"tb-advisor trend failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return took, json.loads(proc.stdout)


def _tensorboard(logdir: Path, cache: str, all_plugins: bool,
                 *flags: str) -> Tuple[float, float, Dict[str, Any]]:
    """(seconds to start, seconds from the first trend request to its 200, the trend)."""
    start = time.perf_counter()
    launch = {} if all_plugins else {"python_args": ADVISOR_ONLY}
    server: TensorBoardServer = start_tensorboard(logdir, f"--advisor_cache_dir={cache}", *flags,
                                                  timeout_s=300, **launch)
    started = time.perf_counter() - start
    try:
        asked = time.perf_counter()
        deadline = asked + 1800
        while time.perf_counter() < deadline:
            status, body = server.plugin("trend", timeout=600, run=RUN)
            if status == 200:
                return started, time.perf_counter() - asked, body
            if status not in (202, 404):  # 404: the first scan has not listed the run yet
                raise SystemExit(f"trend route answered {status}: {body}")
            time.sleep(0.1)
        raise SystemExit("the trend route did not answer within 30 minutes")
    finally:
        server.stop()


def _comparable(trend: Dict[str, Any]) -> List[Any]:
    """What must be equal however the trend was served: captures' medians and the change points."""
    series = trend["series"][0]
    return [[c["step_ms"] for c in series["captures"]],
            [(p["index"], p["significant"], p["delta_pct"]) for p in series["change_points"]]]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--captures", type=int, default=100)
    parser.add_argument("--keep", action="store_true", help="keep the written series")
    parser.add_argument("--all-plugins", action="store_true",
                        help="TensorBoard with every installed plugin (torch-tb-profiler's parsing too)")
    parser.add_argument("--uncached-only", action="store_true",
                        help="only the uncached CLI and route (and the route with a worker per capture)")
    args = parser.parse_args()
    work = OUT / "trend_cache"
    shutil.rmtree(work, ignore_errors=True)
    logdir, cli_cache, tb_cache = work / "logdir", work / "cli_cache", work / "tb_cache"
    _series(logdir, args.captures)
    size = sum(f.stat().st_size for f in (logdir / RUN).iterdir())

    times: Dict[str, float] = {}
    trends: Dict[str, Dict[str, Any]] = {}
    if not args.uncached_only:
        times["cli_cold_s"], trends["cli_cold"] = _cli(logdir, str(cli_cache))
        times["cli_warm_s"], trends["cli_warm"] = _cli(logdir, str(cli_cache))
    times["cli_no_cache_s"], trends["cli_no_cache"] = _cli(logdir, "off")
    runs = [("no_cache", "off", ()), ("no_cache_worker_per_capture", "off", ("--advisor_worker_tasks=1",))]
    if not args.uncached_only:
        runs[:0] = [("cold", str(tb_cache), ()), ("restart", str(tb_cache), ())]
    for name, cache, flags in runs:
        started, took, trends[f"tb_{name}"] = _tensorboard(logdir, cache, args.all_plugins, *flags)
        times[f"tb_start_{name}_s"], times[f"tb_{name}_s"] = started, took

    reference = _comparable(trends["cli_no_cache"])
    for name, trend in trends.items():
        if _comparable(trend) != reference:
            raise SystemExit(f"{name}: the trend differs from the uncached one")
    significant = [p["index"] for p in trend["series"][0]["change_points"] if p["significant"]]
    if significant != [args.captures - 1]:
        raise SystemExit(f"change points {significant}, expected [{args.captures - 1}]")

    result = {
        "captures": args.captures,
        "bytes": size,
        "cpu_count": os.cpu_count(),
        "all_plugins": args.all_plugins,
        **{k: round(v, 3) for k, v in times.items()},
        "tb_no_cache_over_cli_no_cache": round(times["tb_no_cache_s"] / times["cli_no_cache_s"], 3),
        "tb_worker_per_capture_over_cli_no_cache": round(
            times["tb_no_cache_worker_per_capture_s"] / times["cli_no_cache_s"], 3),
        "change_point": significant,
    }
    if not args.uncached_only:
        result["cli_warm_over_cold"] = round(times["cli_warm_s"] / times["cli_cold_s"], 3)
        result["tb_restart_over_no_cache"] = round(times["tb_restart_s"] / times["tb_no_cache_s"], 3)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "trend_cache.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if result["tb_no_cache_over_cli_no_cache"] > ROUTE_BOUND:
        raise SystemExit(f"the uncached trend route took over {ROUTE_BOUND}× the uncached CLI")


if __name__ == "__main__":
    main()
