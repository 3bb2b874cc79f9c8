"""Benchmark: the readers' peak memory and time on profiles of many shapes, both formats.

    python bench/bench_shapes.py [--mb 100] [--shapes abcdefgh] [--keep] [--skip-reference]
                                 [--before CHECKOUT] [--repeat 1]

One figure fits one generator: a reader tuned on bench_kineto's trace can still take 10x the file on
a trace of a million kernel names. So each shape here varies what drives the cost (events per MB,
args or stats per event, distinct names) at the same file size:

  Kineto (shapes_kineto.py)        (a) training loop (bench_kineto)  (b) 1 M distinct kernel names
                                   (c) 200k names, 13 args a kernel  (d) tiny identical events
                                   (e) 20 args per event (10 kept)
  XSpace (shapes_xspace.py)        (f) bench_report's TF loop        (g) A100: 4,000 kernels a step,
                                   3–6 stats a kernel, ~2.2 M events per 100 MB
                                   (h) 1 M distinct event metadata names

Each file is generated in bench/out/shapes/, then read in a fresh Python process per tool:

  ours        read_kineto / read_xplane → Profile (the reader alone)
  reference   torch-tb-profiler's RunProfileData.parse (Kineto) and xprof's
              xspace_to_tool_data(..., "overview_page") (XSpace), on the same file, when installed
              (`pip install torch-tb-profiler xprof`; bench-only, never imported by the package)

The ratio is the one bench_report.py uses: the child's peak RSS minus its RSS right after its imports
(statm, same process), divided by the uncompressed profile size. The peak is the child's own
high-water mark (VmHWM): Linux folds the spawning parent's RSS into a child's ru_maxrss at exec, so
ru_maxrss reads the parent's size whenever the parent is the larger (as when it just wrote a
profile). `held` is the RSS after the read, net of imports (what the Profile keeps). The readers'
bound is a ratio of 1.5 on every shape (2 with a million distinct names), or 150 MB net for a small
file (as README and bench_report.py say). `--before CHECKOUT` measures another checkout's readers on
the same files too. Results go to bench/out/shapes_<MB>mb.json; the files are deleted after
measuring unless --keep. Not a test: CI does not run it; timings depend on the machine and its
load, so compare figures taken in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

import shapes_kineto  # noqa: E402
import shapes_xspace  # noqa: E402

SHAPES = {**shapes_kineto.SHAPES, **shapes_xspace.SHAPES}
WRITERS = {**shapes_kineto.WRITERS, **shapes_xspace.WRITERS}
BOUND = {"b": 2.0, "h": 2.0}  # a million distinct names; else 1.5
SMALL_FILE_NET_MB = 150  # a small file may take this much whatever its ratio (README, bench_report.py)


def within_bound(r: Dict[str, Any]) -> bool:
    """Our peak within the bound: the shape's ratio, or SMALL_FILE_NET_MB for a small file."""
    if "ratio" not in r:
        return False
    return r["ratio"] <= BOUND.get(r["shape"], 1.5) or r["peak_net_mb"] <= SMALL_FILE_NET_MB

CHILD = textwrap.dedent(
    """
    import json, resource, sys, tempfile, time
    sys.path.insert(0, {root!r})
    path, tool = {path!r}, {tool!r}

    def rss_kb():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() // 1024

    def peak_kb():  # this process's own high-water mark (see the module's docstring)
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    if tool == "ours-kineto":
        from tb_plugin_advisor.readers.kineto.reader import read_kineto as read
    elif tool == "ours-xspace":
        from tb_plugin_advisor.readers.xplane.reader import read_xplane as read
    elif tool == "torch-tb-profiler":
        import logging
        logging.disable(logging.CRITICAL)
        from torch_tb_profiler.profiler.data import RunProfileData
        cache = tempfile.mkdtemp(prefix="bench-ttp-")
        def read(p):
            return RunProfileData.parse("worker0", "1", p, cache)
    elif tool == "xprof":
        from xprof.convert import raw_to_tool_data
        def read(p):
            return raw_to_tool_data.xspace_to_tool_data([p], "overview_page", {{}})
    base_kb = rss_kb()
    begin = time.perf_counter()
    result = read(path)
    seconds = time.perf_counter() - begin
    peak = peak_kb()
    held_kb = rss_kb()
    events = sum(p.event_count for p in result.planes) if tool.startswith("ours") else -1
    names = sum(len(p.event_names) for p in result.planes) if tool.startswith("ours") else -1
    print(json.dumps({{"seconds": seconds, "base_kb": base_kb, "peak_kb": peak, "held_kb": held_kb,
                      "events": events, "names": names}}))
    """
)


def measure(path: Path, tool: str, timeout: float, root: Path = ROOT) -> Dict[str, Any]:
    """One tool on one file, in a fresh process (ours from the checkout at `root`); {"error": ...}
    when it fails or runs out of time."""
    code = CHILD.format(root=str(root), path=str(path), tool=tool)
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:160]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_xprof(path: Path, timeout: float) -> Dict[str, Any]:
    """xprof writes caches beside its input: it reads a copy in a temporary session directory."""
    with tempfile.TemporaryDirectory(prefix="bench-xprof-", dir=path.parent) as tmp:
        copy = Path(tmp) / "plugins" / "profile" / "bench" / path.name
        copy.parent.mkdir(parents=True)
        shutil.copyfile(path, copy)
        return measure(copy, "xprof", timeout)


def generate(shape: str, path: Path, target_bytes: int) -> Tuple[int, int]:
    """(size, events written or -1) of a new profile, written by a child process so that this one
    stays small while the readers run."""
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); from pathlib import Path; "
            f"import bench_shapes; print(json.dumps(bench_shapes.WRITERS[{shape!r}](Path({str(path)!r}), "
            f"{target_bytes})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    size, events = json.loads(proc.stdout.strip().splitlines()[-1])
    return size, events


def installed(module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([sys.executable, "-c", probe]).returncode == 0


def row(shape: str, tool: str, size: int, written_events: int, result: Dict[str, Any]) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"shape": shape, "what": SHAPES[shape], "tool": tool, "mb": size / 1e6}
    if "error" in result:
        return {**entry, **result}
    net = (result["peak_kb"] - result["base_kb"]) * 1024
    events = result["events"] if result["events"] >= 0 else written_events
    return {**entry, "events": events, "names": result["names"], "seconds": result["seconds"],
            "peak_net_mb": net / 1e6, "ratio": net / size,
            "held_mb": (result["held_kb"] - result["base_kb"]) * 1024 / 1e6}


def table(rows: List[Dict[str, Any]]) -> str:
    lines = ["| shape | tool | MB | events | events/MB | peak net MB | ratio | bound | held MB | s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        label = f"{r['shape']}: {r['what']}"
        if "error" in r:
            lines.append(f"| {label} | {r['tool']} | {r['mb']:.0f} | | | {r['error']} | | | | |")
            continue
        ours = r["tool"] in ("ours", "before")
        bound = BOUND.get(r["shape"], 1.5) if ours else None
        mark = "" if bound is None or within_bound(r) else " ✗"
        events = f"{r['events']:,}" if r["events"] >= 0 else ""
        per_mb = f"{r['events'] / r['mb']:,.0f}" if r["events"] >= 0 else ""
        lines.append(
            f"| {label} | {r['tool']} | {r['mb']:.0f} | {events} | {per_mb} | {r['peak_net_mb']:,.0f} | "
            f"{r['ratio']:.2f}{mark} | {'' if bound is None else f'{bound:.1f}'} | {r['held_mb']:,.0f} | "
            f"{r['seconds']:.1f} |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100, help="size of every profile, MB (e.g. 100 or 300)")
    parser.add_argument("--shapes", default="".join(SHAPES), help="which shapes, e.g. 'abg' (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files in bench/out/shapes")
    parser.add_argument("--skip-reference", action="store_true",
                        help="ours only: no torch-tb-profiler, no xprof")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per measurement")
    parser.add_argument("--before", type=Path, metavar="CHECKOUT",
                        help="also measure the readers of another checkout (e.g. `git worktree add` of an "
                             "older commit) on the same files, as 'before'")
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per tool: the fastest is kept")
    args = parser.parse_args(argv)
    folder = OUT / "shapes"
    references = {"kineto": "torch-tb-profiler", "xspace": "xprof"}
    have = {} if args.skip_reference else {
        "kineto": installed("torch_tb_profiler"), "xspace": installed("xprof")}
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.mb} MB profiles", flush=True)
    rows: List[Dict[str, Any]] = []
    for shape in args.shapes:
        if shape not in SHAPES:
            parser.error(f"unknown shape {shape!r}: one of {''.join(SHAPES)}")
        kind = "kineto" if shape in shapes_kineto.SHAPES else "xspace"
        suffix = ".pt.trace.json" if kind == "kineto" else ".xplane.pb"
        path = folder / f"shape_{shape}_{args.mb}mb{suffix}"
        begin = time.perf_counter()
        size, events = generate(shape, path, args.mb * 1_000_000)
        print(f"({shape}) {SHAPES[shape]}: wrote {size / 1e6:.1f} MB in {time.perf_counter() - begin:.1f} s",
              flush=True)
        try:
            tools = [(f"ours-{kind}", ROOT, "ours")]
            if args.before:
                tools.insert(0, (f"ours-{kind}", args.before.resolve(), "before"))
            if have.get(kind):
                tools.append((references[kind], ROOT, references[kind]))
            for tool, root, label in tools:
                runs = [measure_xprof(path, args.timeout) if tool == "xprof" else
                        measure(path, tool, args.timeout, root) for _ in range(args.repeat)]
                result = min(runs, key=lambda r: r.get("seconds", float("inf")))
                rows.append(row(shape, label, size, events, result))
                if label == "ours" and rows[-1].get("events", -1) >= 0:
                    events = rows[-1]["events"]  # (the reference tools' rows show the events read)
                print(table(rows[-1:]).splitlines()[-1], flush=True)
        finally:
            if not args.keep:
                path.unlink(missing_ok=True)
    print()
    print(table(rows))
    OUT.mkdir(exist_ok=True)
    (OUT / f"shapes_{args.mb}mb.json").write_text(json.dumps(rows, indent=1))
    over = [r["shape"] for r in rows if r["tool"] == "ours" and not within_bound(r)]
    print(f"\nours over the bound: {', '.join(over) or 'none'}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
