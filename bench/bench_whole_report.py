"""Benchmark: the whole report (`tb-advisor report FILE --format json`), not only the reader, on every
profile shape of bench_shapes.py, against a bare parse of the same file measured in the same run.

    python bench/bench_whole_report.py [--mb 100 300] [--shapes abcdefgh] [--repeat 1] [--keep]

For each shape and size one file is generated (shapes_kineto.py, shapes_xspace.py), then measured in
fresh processes, process start and imports included in the times:

  report   `tb-advisor report FILE --format json --no-cache`, its output thrown away: the time as the
           executable runs it (`console_main`, its process's end included: what a user waits for);
           the memory from a child calling the CLI's `main` itself, which then reads its own peak
           (what TensorBoard's worker holds)
  parse    the bare parse of the same bytes: upb `XSpace.FromString` for XSpace (the message classes
           built at runtime from the format's own .proto fields, as the reader builds them), a
           `msgspec.json.decode` of the whole document for Kineto

Memory: each child's peak RSS (VmHWM, its own high-water mark) net of its RSS right after its imports
(for the report, the modules `main` imports only once a command runs: the `report` command, the engine,
discovery and the TensorBoard file layer it brings),
divided by the uncompressed size — the ratio bench_shapes.py uses — and the whole peak beside it.
Time: report wall ÷ parse wall. The bounds: memory ≤ 1.5× the size (2× with a million distinct
names), time ≤ 1.5× the parse on the XSpace shapes. Not a test: figures depend on the machine and its
load; compare those of one run.

The package's bytecode is compiled first (forced), as `pip install` compiles it: a module whose .pyc is
stale is compiled from source at every import when PYTHONDONTWRITEBYTECODE is set, and `compileall`'s
own check misses a source edited within the second its .pyc was written (7 such modules cost 60 ms of
every report here), which is not what a user waits for.
"""

from __future__ import annotations

import argparse
import compileall
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

import bench_shapes  # noqa: E402
import shapes_kineto  # noqa: E402

MEMORY_BOUND = {"b": 2.0, "h": 2.0}  # a million distinct names; else 1.5
TIME_BOUND = 1.5  # × the bare parse, XSpace shapes

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    start = time.perf_counter()
    sys.path.insert(0, {root!r})
    path, tool = {path!r}, {tool!r}

    def rss_kb():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() // 1024

    def peak_kb():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    if tool == "report":
        import contextlib, io, os
        from tb_plugin_advisor.views.cli.main import main
        # the modules `main` imports only once a command runs (numpy, the engine, and discovery, which
        # brings TensorBoard's file layer and, where installed, boto3 for its S3 filesystem: ~21 MB):
        # imports, not the profile's memory, as the parse's own imports are taken before its base
        from tb_plugin_advisor.views.cli.commands import report  # noqa: F401
        from tb_plugin_advisor.report import analyze, door  # noqa: F401
        from tb_plugin_advisor.sources import discovery  # noqa: F401
        base = rss_kb()
        sink = open(os.devnull, "w")
        with contextlib.redirect_stdout(sink):
            code = main(["report", path, "--format", "json", "--no-cache"])
        assert code == 0, code
    elif tool == "parse-xspace":
        from tb_plugin_advisor.readers.xplane import schema
        base = rss_kb()
        with open(path, "rb") as handle:
            space = schema.XSpace.FromString(handle.read())
        assert len(space.planes) > 0
    elif tool == "parse-kineto":
        import msgspec
        base = rss_kb()
        with open(path, "rb") as handle:
            document = msgspec.json.decode(handle.read())
        assert document["traceEvents"]
    print(json.dumps({{"wall_s": time.perf_counter() - start, "base_kb": base, "peak_kb": peak_kb()}}))
    """
)


def measure(path: Path, tool: str, timeout: float) -> Dict[str, Any]:
    """One tool on one file in a fresh process; the wall time is taken outside it (process start
    included), {{"error": …}} when it fails."""
    code = CHILD.format(root=str(ROOT), path=str(path), tool=tool)
    begin = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    wall = time.perf_counter() - begin
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:160]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["outside_s"] = wall
    return result


def time_executable(path: Path, timeout: float) -> Dict[str, Any]:
    """`tb-advisor report PATH --format json --no-cache` as the installed executable runs it, in a fresh
    process: its wall time, taken outside."""
    entry = "from tb_plugin_advisor.views.cli.main import console_main; console_main()"
    command = [sys.executable, "-c", entry, "report", str(path), "--format", "json", "--no-cache"]
    begin = time.perf_counter()
    try:
        proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=timeout, cwd=str(ROOT))
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    wall = time.perf_counter() - begin
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:160]}
    return {"outside_s": wall}


def best_runs(path: Path, kind: str, repeat: int, timeout: float
              ) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]:
    """The fastest of `repeat` runs of each of the report's memory child, the executable and the bare
    parse, run in turn (report, executable, parse, report, …) so that a slower spell of a shared machine
    weighs on both sides of the ratio alike."""
    runs: Dict[str, List[Dict[str, Any]]] = {"report": [], "executable": [], "parse": []}
    for _ in range(repeat):
        runs["report"].append(measure(path, "report", timeout))
        runs["executable"].append(time_executable(path, timeout))
        runs["parse"].append(measure(path, f"parse-{kind}", timeout))
    return _fastest(runs["report"]), _fastest(runs["executable"]), _fastest(runs["parse"])


def _fastest(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    good = [r for r in runs if "error" not in r]
    return min(good, key=lambda r: r["outside_s"]) if good else runs[0]


def row(shape: str, size: int, report: Dict[str, Any], executable: Dict[str, Any], parse: Dict[str, Any]
        ) -> Dict[str, Any]:
    out: Dict[str, Any] = {"shape": shape, "what": bench_shapes.SHAPES[shape], "mb": size / 1e6}
    for label, result in (("report", report), ("parse", parse)):
        if "error" in result:
            out[f"{label}_error"] = result["error"]
            continue
        net = (result["peak_kb"] - result["base_kb"]) * 1024
        out[f"{label}_s"] = result["outside_s"]
        out[f"{label}_peak_mb"] = result["peak_kb"] * 1024 / 1e6
        out[f"{label}_ratio"] = net / size
    if "error" in executable:
        out["report_error"] = executable["error"]
        out.pop("report_s", None)
    elif "report_s" in out:
        out["report_child_s"] = out["report_s"]  # the memory child's own time, for reference
        out["report_s"] = executable["outside_s"]
    if "report_s" in out and "parse_s" in out:
        out["time_ratio"] = out["report_s"] / out["parse_s"]
    return out


def within(r: Dict[str, Any]) -> bool:
    memory = r.get("report_ratio", float("inf")) <= MEMORY_BOUND.get(r["shape"], 1.5)
    xspace = r["shape"] not in shapes_kineto.SHAPES
    speed = not xspace or r.get("time_ratio", float("inf")) <= TIME_BOUND
    return memory and speed


def _cell(r: Dict[str, Any], label: str) -> str:
    if f"{label}_error" in r:
        return r[f"{label}_error"]
    return f"{r[f'{label}_peak_mb']:,.0f} MB ({r[f'{label}_ratio']:.2f}×)"


def table(rows: List[Dict[str, Any]]) -> str:
    lines = ["| shape | MB | report peak (net ÷ size) | parse peak (net ÷ size) | report s | parse s | "
             "report ÷ parse | within |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        seconds = [f"{r[k]:.2f}" if k in r else "" for k in ("report_s", "parse_s")]
        ratio = f"{r['time_ratio']:.2f}" if "time_ratio" in r else ""
        lines.append(f"| {r['shape']}: {r['what']} | {r['mb']:.0f} | {_cell(r, 'report')} | "
                     f"{_cell(r, 'parse')} | {seconds[0]} | {seconds[1]} | {ratio} | "
                     f"{'yes' if within(r) else 'no'} |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, nargs="+", default=[100, 300], help="profile sizes, MB")
    parser.add_argument("--shapes", default="".join(bench_shapes.SHAPES), help="e.g. 'fgh' (default all)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="fresh processes per tool, the two tools in turn: the fastest of each kept")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args(argv)
    folder = OUT / "shapes"
    compileall.compile_dir(str(ROOT / "tb_plugin_advisor"), quiet=1, force=True)
    rows: List[Dict[str, Any]] = []
    for mb in args.mb:
        for shape in args.shapes:
            kind = "kineto" if shape in shapes_kineto.SHAPES else "xspace"
            path = folder / f"whole_{shape}_{mb}mb{'.pt.trace.json' if kind == 'kineto' else '.xplane.pb'}"
            size, _ = bench_shapes.generate(shape, path, mb * 1_000_000)
            try:
                rows.append(row(shape, size, *best_runs(path, kind, args.repeat, args.timeout)))
                print(table(rows[-1:]).splitlines()[-1], flush=True)
            finally:
                if not args.keep:
                    path.unlink(missing_ok=True)
    print()
    print(table(rows))
    OUT.mkdir(exist_ok=True)
    (OUT / "whole_report.json").write_text(json.dumps(rows, indent=1))
    over = [f"{r['shape']}@{r['mb']:.0f}MB" for r in rows if not within(r)]
    print(f"\nover a bound: {', '.join(over) or 'none'}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
