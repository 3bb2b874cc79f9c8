"""Fuzz the PyTorch profiler (Kineto) reader and the analyses with mutated windows of real traces.

    python bench/fuzz_kineto.py [--cases 100000] [--seed 0] [--timeout-s 10] [--minutes 0] [--tracebacks]

Each case is `kineto_fuzz_harness.make_case(Random(seed + i))`: a window of a real trace (the
committed H200 captures, plus ../shared/corpus when present) with hostile numbers, wrong types,
missing fields, reordered events, deep nesting, hostile text, other encodings, truncation, gzip
damage or byte flips, read and fully analysed in this process. The loop and the summary are
bench/fuzz_runner.py's: cases, reports and clear refusals, uncaught exceptions by (type, last frame
inside tb_plugin_advisor) with the seeds that reproduce each and the mutations of the first, hangs
(a case over --timeout-s), the maximum RSS. --minutes stops early at a time budget. Reproduce one
case with `run_case(make_case(random.Random(seed)))` from tests/.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]

from fuzz_runner import fuzz_main  # noqa: E402
from kineto_fuzz_harness import make_named_case, run_case, seeds  # noqa: E402

if __name__ == "__main__":
    print(f"seed files: {len(seeds())} (each loaded when first picked)", flush=True)
    sys.exit(fuzz_main(__doc__, make_named_case, lambda data, i: run_case(data), "AdvisorError"))
