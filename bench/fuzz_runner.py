"""The loop both fuzzers share (bench/fuzz.py for XSpace, bench/fuzz_kineto.py for Kineto): cases made
from seeds, each read and analysed under a SIGALRM time limit, uncaught exceptions grouped by
(type, last frame inside tb_plugin_advisor) with the seeds that reproduce each, hangs, and the
maximum RSS. A fuzzer supplies how a case is made and run; the command line is the same for both:

    [--cases 100000] [--seed 0] [--timeout-s 10] [--minutes 0] [--tracebacks]
"""

from __future__ import annotations

import argparse
import collections
import resource
import signal
import time
import traceback
from pathlib import Path
from random import Random
from typing import Any, Callable, Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = str(ROOT / "tb_plugin_advisor")

# (Random(seed)) -> (the mutations' names, the case's bytes)
MakeCase = Callable[[Random], Tuple[Sequence[str], Any]]
# (the case's bytes, its position) -> "report" | "refused"
RunCase = Callable[[Any, int], str]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def last_package_frame(exc: BaseException) -> str:
    """Where inside the package the exception escaped from: what tells one bug from another."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(PACKAGE_DIR)]
    if not frames:
        return "(outside tb_plugin_advisor)"
    frame = frames[-1]
    return f"{Path(frame.filename).relative_to(ROOT)}:{frame.lineno} in {frame.name}"


def fuzz_main(description: str, make_case: MakeCase, run_case: RunCase, refusals: str,
              more_figures: Callable[[], Sequence[str]] = tuple) -> int:
    """Parse the command line, run the cases, print the summary; 1 when anything broke.
    `more_figures()` gives lines the summary ends with (a server's peak RSS, when the cases talk to
    one: this process's RSS is then not the figure that matters)."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout-s", type=int, default=10)
    parser.add_argument("--minutes", type=float, default=0, help="stop after this long (0: no limit)")
    parser.add_argument("--tracebacks", action="store_true", help="one full traceback per failure class")
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    outcomes: collections.Counter = collections.Counter()
    failures: Dict[Tuple[str, str], List[int]] = collections.defaultdict(list)
    first: Dict[Tuple[str, str], Tuple[str, Sequence[str], str]] = {}
    hangs: List[int] = []
    started = time.monotonic()
    stop_at = started + args.minutes * 60 if args.minutes else float("inf")
    ran = 0
    for i in range(args.cases):
        if time.monotonic() > stop_at:
            break
        seed = args.seed + i
        names, data = make_case(Random(seed))
        signal.alarm(args.timeout_s)
        try:
            outcomes[run_case(data, i)] += 1
        except Hang:
            hangs.append(seed)
        except Exception as exc:  # noqa: BLE001 - counting them is the point
            key = (type(exc).__name__, last_package_frame(exc))
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
    print(f"  reports: {outcomes['report']}, clear refusals ({refusals}): {outcomes['refused']}")
    total = sum(map(len, failures.values()))
    print(f"uncaught exceptions: {total} in {len(failures)} classes")
    for key, found in sorted(failures.items(), key=lambda item: -len(item[1])):
        message, names, text = first[key]
        print(f"  {len(found):6d} x {key[0]} at {key[1]}")
        print(f"         seeds {found[:5]}; first: mutations {list(names)}: {message}")
        if args.tracebacks:
            print("         " + text.rstrip().replace("\n", "\n         "))
    print(f"hangs (> {args.timeout_s} s): {len(hangs)}" + (f" seeds {hangs[:10]}" if hangs else ""))
    print(f"max RSS: {max_rss_mb:.0f} MB")
    for line in more_figures():
        print(line)
    return 1 if failures or hangs else 0
