"""Check: the streamed Kineto path reads every trace exactly as the whole-document path does.

    python bench/check_kineto_stream.py [--cases 20000] [--seed 0] [--piece 256]

readers/kineto/stream.py decodes traceEvents a batch at a time while the text streams by, and hands
anything it cannot vouch for to the whole-document path. Each case here (a mutated window of a real
trace: kineto_fuzz_harness.make_named_case, plus the unmutated seeds) is read both ways, the stream
cut into pieces of --piece bytes so that events straddle pieces, and the outcomes are compared: the
same Profile (names, columns with their dtypes, stats, devices, markers, warnings, properties) or the
same error. Prints how many cases streamed, fell back or differed, and the seeds of those that
differed. Not a test (CI runs the fuzz tests); run it after changing either path.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from random import Random
from typing import Any, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from kineto_fuzz_harness import FUZZ_LIMITS, make_named_case, unmutated  # noqa: E402

from tb_plugin_advisor.errors import AdvisorError  # noqa: E402
from tb_plugin_advisor.model import Profile  # noqa: E402
from tb_plugin_advisor.readers.guarded_io import inflate, pieces_of  # noqa: E402
from tb_plugin_advisor.readers.kineto import reader  # noqa: E402


def whole(data: bytes) -> Any:
    try:
        return reader._read([inflate(data, "case", FUZZ_LIMITS)], "case", "w")
    except AdvisorError as error:
        return f"{type(error).__name__}: {error}"


def streamed(data: bytes, piece: int) -> Any:
    try:
        return reader._read_streamed(pieces_of(data, "case", FUZZ_LIMITS, piece), "case", "w")
    except AdvisorError as error:
        return f"{type(error).__name__}: {error}"


def _column(values: np.ndarray) -> Any:
    return (str(values.dtype), values.tolist())


def summary(profile: Profile) -> Any:
    """Everything a Profile says, as plain values (arrays with their dtypes)."""
    planes = []
    for plane in profile.planes:
        lines = []
        for line in plane.lines:
            stats = {name: (c.kind, _column(c.indices), _column(c.data), c.count)
                     for name, c in sorted(line.stats.items())}
            lines.append((line.id, line.name, line.display_name, _column(line.start_ns),
                          _column(line.duration_ns), _column(line.metadata_index), stats))
        planes.append((plane.id, plane.name, plane.event_names, plane.stats, list(plane.strings), lines))
    devices = []
    for device in profile.devices:
        kernels, copies = device.kernels, device.memcpys
        devices.append((device.name, device.kind, device.model, device.vendor,
                        [_column(getattr(kernels, f)) for f in ("start_ns", "duration_ns", "name_index",
                                                                "line_index", "tf_op", "details",
                                                                "correlation_id")],
                        [_column(getattr(copies, f)) for f in ("start_ns", "duration_ns", "direction",
                                                               "bytes")]))
    return (profile.path, profile.host, profile.size_bytes, planes, devices, profile.step_markers,
            profile.hostnames, profile.warnings, profile.properties, profile.framework)


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--piece", type=int, default=256, help="bytes per streamed piece")
    args = parser.parse_args(argv)
    counts: collections.Counter = collections.Counter()
    differed: List[str] = []
    for i in range(args.cases):
        rng = Random(args.seed + i)
        names, data = (["unmutated"], unmutated(rng)) if i % 10 == 0 else make_named_case(rng)
        expected = whole(data)
        got = streamed(data, args.piece)
        if got is None:
            counts["fell back"] += 1
            continue
        counts["streamed"] += 1
        same = (got == expected if isinstance(got, str) or isinstance(expected, str)
                else summary(got) == summary(expected))
        if not same:
            counts["differed"] += 1
            differed.append(f"seed {args.seed + i} {names}")
    print(dict(counts))
    for line in differed[:20]:
        print("  differed:", line)
    return 1 if differed else 0


if __name__ == "__main__":
    sys.exit(main())
