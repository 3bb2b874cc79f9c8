"""Fuzz the reader and the analyses with many generated inputs; print what broke.

    python bench/fuzz.py [--cases 100000] [--seed 0] [--timeout-s 10] [--minutes 0]

Each case is `fuzz_harness.make_case(Random(seed + i))`: a random profile (hostile stats and names)
with bit flips, truncations, inflated length fields, deep nesting, splices or random bytes, read and
fully analysed in this process (every other case reads its lines a few bytes of the file at a time,
as a long line is read: readers/line_windows.py). Prints the number of cases, how many gave a report
or a clear refusal, uncaught exceptions (with the seeds that reproduce them), hangs (a case over
--timeout-s, stopped by SIGALRM) and the maximum RSS. --minutes stops early at a time budget (and
says so).
"""

from __future__ import annotations

import argparse
import collections
import resource
import signal
import sys
import time
import traceback
from pathlib import Path
from random import Random

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fuzz_harness import make_case, run_case  # noqa: E402


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout-s", type=int, default=10)
    parser.add_argument("--minutes", type=float, default=0, help="stop after this long (0: no limit)")
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    outcomes: collections.Counter = collections.Counter()
    failures = []
    hangs = []
    started = time.monotonic()
    stop_at = started + args.minutes * 60 if args.minutes else float("inf")
    ran = 0
    for i in range(args.cases):
        if time.monotonic() > stop_at:
            break
        seed = args.seed + i
        data = make_case(Random(seed))
        signal.alarm(args.timeout_s)
        try:
            outcomes[run_case(data, windows=i % 2 == 1)] += 1  # every other case: lines read in windows
        except Hang:
            hangs.append(seed)
        except Exception as exc:  # noqa: BLE001 - counting them is the point
            failures.append((seed, f"{type(exc).__name__}: {exc}"[:200], traceback.format_exc()))
        finally:
            signal.alarm(0)
        ran += 1
        if ran % 5000 == 0:
            print(f"  {ran} cases, {len(failures)} exceptions, {len(hangs)} hangs, "
                  f"{time.monotonic() - started:.0f} s", flush=True)
    elapsed = time.monotonic() - started
    max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    budget_note = " (stopped at the time budget)" if ran < args.cases else ""
    print(f"cases: {ran} of {args.cases} in {elapsed:.0f} s{budget_note}")
    print(f"  reports: {outcomes['report']}, clear refusals (ProfileReadError): {outcomes['refused']}")
    print(f"uncaught exceptions: {len(failures)}")
    for seed, summary, _ in failures[:10]:
        print(f"  seed {seed}: {summary}")
    if failures:
        print(failures[0][2])
    print(f"hangs (> {args.timeout_s} s): {len(hangs)}" + (f" seeds {hangs[:10]}" if hangs else ""))
    print(f"max RSS: {max_rss_mb:.0f} MB")
    return 1 if failures or hangs else 0


if __name__ == "__main__":
    sys.exit(main())
