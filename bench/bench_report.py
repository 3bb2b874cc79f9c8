"""Benchmark: `tb-advisor report` vs xprof's own converter on the same synthetic GPU profiles.

    python bench/bench_report.py [--sizes 20,100,300] [--kernels-per-step 1500] [--repeat 1]
                                 [--regen] [--skip-xprof] [--file F]

For each size, builds bench/out/bench-<MB>mb.xplane.pb (make_profile.py; the step count is scaled
to the size), then measures, each in a fresh Python process: (1) ours — read the file and build the
full report JSON; (2) xprof — `xspace_to_tool_data([copy], "overview_page", {})` on a copy of the
file in a temporary directory (xprof writes caches next to its input); (3) the floor — a bare
protobuf parse of the whole file (`XSpace.FromString`). Prints wall times, ours ÷ xprof, and our
peak RSS (the child's ru_maxrss) ÷ file size, also net of the interpreter's RSS after imports.
Not a test: CI does not run it. Figures are only comparable within one run on one machine.
"""

from __future__ import annotations

import argparse
import compileall
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
    from tb_plugin_advisor.readers.xplane.reader import read_xplane
    from tb_plugin_advisor.report.run import build_report
    imported = time.perf_counter()
    baseline_kb = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() // 1024
    profile = read_xplane({path!r})
    read = time.perf_counter()
    report = build_report(RunProfiles("bench", [profile])).to_json()
    text = json.dumps(report)
    done = time.perf_counter()
    print(json.dumps({{
        "wall_s": done - begin, "import_s": imported - begin, "read_s": read - imported,
        "analyse_s": done - read, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "baseline_kb": baseline_kb,
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


FLOOR = textwrap.dedent(
    """
    import json, resource, sys, time
    sys.path.insert(0, {root!r})
    from tb_plugin_advisor.readers.xplane import schema
    begin = time.perf_counter()
    with open({path!r}, "rb") as handle:
        space = schema.XSpace.FromString(handle.read())
    done = time.perf_counter()
    print(json.dumps({{"wall_s": done - begin, "planes": len(space.planes),
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
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


def steps_for(megabytes: float, kernels_per_step: int) -> int:
    """Steps that make a file of about `megabytes` (make_profile writes ~95 bytes per kernel)."""
    return max(2, int(megabytes * 1e6 / (kernels_per_step * 95)))


def ensure_profile(path: Path, steps: int, kernels_per_step: int, regen: bool) -> None:
    if regen or not path.exists():
        command = [sys.executable, str(HERE / "make_profile.py"), str(path), "--steps", str(steps),
                   "--kernels-per-step", str(kernels_per_step)]
        subprocess.run(command, check=True)


def measure(path: Path, args) -> dict:
    size = path.stat().st_size
    ours = [measure_ours(path, args.timeout) for _ in range(args.repeat)]
    print(f"  ours:  {json.dumps(ours[-1])}", flush=True)
    floor = run_child(FLOOR.format(root=str(ROOT), path=str(path)), args.timeout)
    print(f"  floor: {json.dumps(floor)}", flush=True)
    row = {
        "mb": size / 1e6, "ours_s": median_of(ours, "wall_s"), "read_s": median_of(ours, "read_s"),
        "rss_x": median_of(ours, "maxrss_kb") * 1024 / size,
        "net_rss_x": (median_of(ours, "maxrss_kb") - median_of(ours, "baseline_kb")) * 1024 / size,
        "net_rss_mb": (median_of(ours, "maxrss_kb") - median_of(ours, "baseline_kb")) / 1024,
        "floor_s": floor["wall_s"], "xprof_s": None,
    }
    if not args.skip_xprof:
        xprof = [measure_xprof(path, args.timeout) for _ in range(args.repeat)]
        print(f"  xprof: {json.dumps(xprof[-1])}", flush=True)
        row["xprof_s"] = median_of(xprof, "wall_s")
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20,100,300", help="profile sizes in MB, comma-separated")
    parser.add_argument("--file", type=Path, help="measure this file instead of generated sizes")
    parser.add_argument("--kernels-per-step", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per tool (median reported)")
    parser.add_argument("--regen", action="store_true", help="rebuild the profiles even if they exist")
    parser.add_argument("--skip-xprof", action="store_true")
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args(argv)

    if args.file:
        paths = [args.file]
    else:
        paths = []
        for text in args.sizes.split(","):
            megabytes = float(text)
            path = HERE / "out" / f"bench-{text.strip()}mb.xplane.pb"
            steps = steps_for(megabytes, args.kernels_per_step)
            ensure_profile(path, steps, args.kernels_per_step, args.regen)
            paths.append(path)
    # An installed package has its bytecode (pip compiles it, as it did xprof's); this checkout may not
    # (PYTHONDONTWRITEBYTECODE=1 on some machines), which would add ~50 ms of compiling to every run.
    compileall.compile_dir(ROOT / "tb_plugin_advisor", quiet=1)
    rows = []
    for path in paths:
        print(f"profile: {path} ({path.stat().st_size / 1e6:.1f} MB)", flush=True)
        rows.append(measure(path, args))

    print()
    print(f"{'file MB':>8} {'ours s':>8} {'read s':>8} {'xprof s':>8} {'ours/xprof':>10} "
          f"{'RSS/file':>9} {'net RSS/file':>12} {'net RSS MB':>10} {'floor s':>8}")
    for r in rows:
        xprof = f"{r['xprof_s']:8.2f}" if r["xprof_s"] else f"{'-':>8}"
        ratio = f"{r['ours_s'] / r['xprof_s']:10.3f}" if r["xprof_s"] else f"{'-':>10}"
        print(f"{r['mb']:8.1f} {r['ours_s']:8.2f} {r['read_s']:8.2f} {xprof} {ratio} {r['rss_x']:8.2f}x "
              f"{r['net_rss_x']:11.2f}x {r['net_rss_mb']:10.0f} {r['floor_s']:8.2f}")
    print("targets: ours/xprof <= 0.1 at 100 and 300 MB; RSS/file <= 1.5 (or <= 150 MB net for small files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
