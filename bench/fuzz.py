"""Fuzz the XSpace reader and the analyses with many generated inputs; print what broke.

    python bench/fuzz.py [--cases 100000] [--seed 0] [--timeout-s 10] [--minutes 0] [--tracebacks]

Each case is `fuzz_harness.make_case(Random(seed + i))`: a random profile (hostile stats and names)
with bit flips, truncations, inflated length fields, deep nesting, splices or random bytes, read and
fully analysed in this process (every other case reads its lines a few bytes of the file at a time,
as a long line is read: readers/line_windows.py). The loop and the summary are bench/fuzz_runner.py's:
cases, reports and clear refusals, uncaught exceptions by class with the seeds that reproduce them,
hangs (a case over --timeout-s), the maximum RSS. --minutes stops early at a time budget.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]

from fuzz_harness import make_case, run_case  # noqa: E402
from fuzz_runner import fuzz_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(fuzz_main(
        __doc__,
        lambda rng: ((), make_case(rng)),
        lambda data, i: run_case(data, windows=i % 2 == 1),  # every other case: lines read in windows
        "ProfileReadError",
    ))
