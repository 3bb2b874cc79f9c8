"""Fuzz the PyTorch profiler (Kineto) reader and the analyses with mutated windows of real traces.

    python bench/fuzz_kineto.py [--cases 100000] [--seed 0] [--timeout-s 10] [--minutes 0]

Each case is `kineto_fuzz_harness.make_case(Random(seed + i))`: a window of a real trace (the
committed H200 captures, plus ../shared/corpus when present) with hostile numbers, wrong types,
missing fields, reordered events, deep nesting, hostile text, other encodings, truncation, gzip
damage or byte flips, read and fully analysed in this process. Prints the number of cases, how many
gave a report or a clear refusal, the uncaught exceptions grouped by (type, last frame inside
tb_plugin_advisor) with the seeds that reproduce each and the mutations of the first, hangs (a case
over --timeout-s, stopped by SIGALRM) and the maximum RSS. --minutes stops early at a time budget.
Reproduce one case with `run_case(make_case(random.Random(seed)))` from tests/.
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
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from kineto_fuzz_harness import make_named_case, run_case, seeds  # noqa: E402

PACKAGE_DIR = str(ROOT / "tb_plugin_advisor")


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _last_package_frame(exc: BaseException) -> str:
    """Where inside the package the exception escaped from: what tells one bug from another."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(PACKAGE_DIR)]
    if not frames:
        return "(outside tb_plugin_advisor)"
    frame = frames[-1]
    return f"{Path(frame.filename).relative_to(ROOT)}:{frame.lineno} in {frame.name}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout-s", type=int, default=10)
    parser.add_argument("--minutes", type=float, default=0, help="stop after this long (0: no limit)")
    parser.add_argument("--tracebacks", action="store_true", help="one full traceback per failure class")
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    print(f"seed files: {len(seeds())} (each loaded when first picked)", flush=True)
    outcomes: collections.Counter = collections.Counter()
    failures: Dict[Tuple[str, str], List[int]] = collections.defaultdict(list)
    first: Dict[Tuple[str, str], Tuple[str, List[str], str]] = {}
    hangs: List[int] = []
    started = time.monotonic()
    stop_at = started + args.minutes * 60 if args.minutes else float("inf")
    ran = 0
    for i in range(args.cases):
        if time.monotonic() > stop_at:
            break
        seed = args.seed + i
        names, data = make_named_case(Random(seed))
        signal.alarm(args.timeout_s)
        try:
            outcomes[run_case(data)] += 1
        except Hang:
            hangs.append(seed)
        except Exception as exc:  # noqa: BLE001 - counting them is the point
            key = (type(exc).__name__, _last_package_frame(exc))
            failures[key].append(seed)
            if key not in first:
                first[key] = (f"{exc}"[:160], names, traceback.format_exc())
        finally:
            signal.alarm(0)
        ran += 1
        if ran % 5000 == 0:
            print(f"  {ran} cases, {sum(map(len, failures.values()))} exceptions, {len(hangs)} hangs, "
                  f"{time.monotonic() - started:.0f} s", flush=True)
    elapsed = time.monotonic() - started
    max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    budget_note = " (stopped at the time budget)" if ran < args.cases else ""
    print(f"cases: {ran} of {args.cases} in {elapsed:.0f} s{budget_note}")
    print(f"  reports: {outcomes['report']}, clear refusals (AdvisorError): {outcomes['refused']}")
    total = sum(map(len, failures.values()))
    print(f"uncaught exceptions: {total} in {len(failures)} classes")
    for key, found in sorted(failures.items(), key=lambda item: -len(item[1])):
        message, names, text = first[key]
        print(f"  {len(found):6d} x {key[0]} at {key[1]}")
        print(f"         seeds {found[:5]}; first: mutations {names}: {message}")
        if args.tracebacks:
            print("         " + text.rstrip().replace("\n", "\n         "))
    print(f"hangs (> {args.timeout_s} s): {len(hangs)}" + (f" seeds {hangs[:10]}" if hangs else ""))
    print(f"max RSS: {max_rss_mb:.0f} MB")
    return 1 if failures or hangs else 0


if __name__ == "__main__":
    sys.exit(main())
