"""Benchmark: precision, Tensor Core and interval analyses over a million kernels held as columns.

    python bench/bench_kernels.py [--kernels 1000000] [--repeat 3]

Builds the same 64-name GPU profile as tests/analysis/precision/test_tensor_cores.py (the
reader's output form, so no file is read) and prints the best wall time of each analysis. The
reference is a plain numpy pass
over the same columns (a grouped sum of durations by name), measured in the same run: the analyses
should stay within a small multiple of it. Not a test: CI does not run it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_tensor_cores import big_profile  # noqa: E402

from tb_plugin_advisor.analysis import intervals as iv  # noqa: E402
from tb_plugin_advisor.analysis.precision.device import analyze_precision  # noqa: E402
from tb_plugin_advisor.analysis.precision.tensor_cores import analyze_tensor_cores  # noqa: E402


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    profile = big_profile(args.kernels)
    kernels = profile.devices[0].kernels
    analyze_precision(big_profile(1000))  # warm the per-name regex caches, not this profile's
    floor = best_of(args.repeat, lambda: np.bincount(kernels.name_index, weights=kernels.duration_ns))
    rng = np.random.default_rng(1)
    starts = np.sort(rng.integers(0, 10**10, args.kernels)).astype(np.int64)
    ends = starts + rng.integers(1, 20_000, args.kernels)
    windows = np.arange(0, 10**10, 10**7, dtype=np.int64)
    rows = [
        ("numpy grouped sum (floor)", floor),
        ("interval union + 1,000 windows", best_of(
            args.repeat, lambda: iv.covered(iv.union(starts, ends), windows, windows + 10**7))),
        ("precision", best_of(args.repeat, lambda: analyze_precision(profile))),
        ("tensor cores", best_of(args.repeat, lambda: analyze_tensor_cores(profile))),
    ]
    print(f"{args.kernels:,} kernels, best of {args.repeat}")
    for name, seconds in rows:
        print(f"  {name:<28} {seconds * 1000:8.1f} ms   {seconds / floor:6.1f}x the floor")


if __name__ == "__main__":
    main()
