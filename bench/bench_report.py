"""Benchmark: `tb-advisor report` on a large GPU profile vs xprof's own converter on the same file.

    python bench/bench_report.py [--steps 1500] [--kernels-per-step 1500] [--repeat 1] [--regen]

Builds bench/out/bench.xplane.pb (≥ 1 M device events, ≥ 200 MB by default; see make_profile.py),
then measures, each in a fresh Python process: (1) ours — read the file and build the full report
JSON; (2) xprof — `xspace_to_tool_data([copy], "overview_page", {})` on a copy of the file in a
temporary directory (xprof writes caches next to its input). Reports wall time and peak RSS (the
child's own ru_maxrss) and the ratios. Not a test: CI does not run it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_FILE = HERE / "out" / "bench.xplane.pb"

OURS = textwrap.dedent(
    """
    import json, resource, sys, time
    sys.path.insert(0, {root!r})
    begin = time.perf_counter()
    from tb_plugin_advisor.model import RunProfiles
    from tb_plugin_advisor.readers.xplane import read_xplane
    from tb_plugin_advisor.report import build_report
    imported = time.perf_counter()
    profile = read_xplane({path!r})
    read = time.perf_counter()
    report = build_report(RunProfiles("bench", [profile])).to_json()
    text = json.dumps(report)
    done = time.perf_counter()
    print(json.dumps({{
        "wall_s": done - begin, "import_s": imported - begin, "read_s": read - imported,
        "analyse_s": done - read, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "summary": report["verdict"]["summary"], "steps": report["steps"]["count"],
        "input_pct": report["breakdown_pct"]["input"], "json_bytes": len(text),
    }}))
    """
)

XPROF = textwrap.dedent(
    """
    import json, resource, sys, time
    begin = time.perf_counter()
    from xprof.convert import raw_to_tool_data
    imported = time.perf_counter()
    data, content_type = raw_to_tool_data.xspace_to_tool_data([{path!r}], "overview_page", {{}})
    done = time.perf_counter()
    print(json.dumps({{
        "wall_s": done - begin, "import_s": imported - begin, "convert_s": done - imported,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "output_bytes": len(data or b""), "content_type": content_type,
    }}))
    """
)


def run_child(code: str, timeout: float) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_ours(path: Path, timeout: float) -> dict:
    return run_child(OURS.format(root=str(ROOT), path=str(path)), timeout)


def measure_xprof(path: Path, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-xprof-") as tmp:
        copy = Path(tmp) / "plugins" / "profile" / "bench" / path.name
        copy.parent.mkdir(parents=True)
        shutil.copyfile(path, copy)
        return run_child(XPROF.format(path=str(copy)), timeout)


def median_of(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--kernels-per-step", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per tool (median reported)")
    parser.add_argument("--regen", action="store_true", help="rebuild the profile even if it exists")
    parser.add_argument("--skip-xprof", action="store_true")
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args(argv)

    if args.regen or not args.file.exists():
        subprocess.run(
            [
                sys.executable,
                str(HERE / "make_profile.py"),
                str(args.file),
                "--steps",
                str(args.steps),
                "--kernels-per-step",
                str(args.kernels_per_step),
            ],
            check=True,
        )
    size = args.file.stat().st_size
    device_events = args.steps * (args.kernels_per_step + 2)
    print(f"profile: {args.file} — {size / 1e6:.1f} MB, ~{device_events / 1e6:.2f} M device events")

    ours = [measure_ours(args.file, args.timeout) for _ in range(args.repeat)]
    print(f"ours:  {json.dumps(ours[-1])}")
    rows = [("tb-advisor report", median_of(ours, "wall_s"), median_of(ours, "maxrss_kb") * 1024)]
    if not args.skip_xprof:
        xprof = [measure_xprof(args.file, args.timeout) for _ in range(args.repeat)]
        print(f"xprof: {json.dumps(xprof[-1])}")
        rows.append(("xprof overview_page", median_of(xprof, "wall_s"), median_of(xprof, "maxrss_kb") * 1024))

    print()
    print(f"{'':22} {'wall s':>9} {'peak RSS MB':>12} {'RSS / file':>11}")
    for name, wall, rss in rows:
        print(f"{name:22} {wall:9.2f} {rss / 1e6:12.0f} {rss / size:10.2f}×")
    if len(rows) == 2:
        (_, our_wall, our_rss), (_, x_wall, x_rss) = rows
        print(f"{'ours / xprof':22} {our_wall / x_wall:9.3f} {our_rss / x_rss:12.3f}")
        print()
        print(
            f"time: ours is {x_wall / our_wall:.1f}× faster than xprof; memory: {x_rss / our_rss:.1f}× less; "
            f"peak RSS {our_rss / size:.2f}× the file size (target < 3×)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
