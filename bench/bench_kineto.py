"""Benchmark: reading PyTorch profiler (Kineto) traces, ours vs torch-tb-profiler's loader.

    python bench/bench_kineto.py [--mb 1000] [--sizes 100,300] [--corpus] [--parsers] [--skip-theirs]

Writes bench/out/kineto_<MB>mb.pt.trace.json: a synthetic trace of the shape Kineto writes for a
CUDA training loop (per op: an aten op with shapes and dtypes, a nested op, a cudaLaunchKernel with
correlation, its kernel on a stream with grid/block/registers/occupancy, the ac2g flow pair; a
ProfilerStep every 200 ops, a DataLoader range and an H2D copy per step). Then measures, each in a
fresh Python process (wall time and the child's own peak RSS, ru_maxrss):

- ours:       read_kineto(file) → Profile            (the reader)
- ours+report: read_kineto + build_report → JSON     (what the tab and CLI do)
- theirs:     torch_tb_profiler RunProfileData.parse (json.loads + its event parsing + analysis,
              what its TensorBoard tab does per trace; `pip install torch-tb-profiler`, bench only)
- --parsers:  the JSON parsers alone on the same bytes: json (stdlib), orjson, msgspec (typed,
              events as raw slices) — why the reader uses msgspec.

Prints wall time, our time ÷ theirs, and peak RSS ÷ uncompressed size. Not a test: CI does not run
it. Timings depend on the machine and its load: compare ratios taken in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
CORPUS = ROOT.parent / "shared" / "corpus"

BASE_NS = 1_700_000_000_000_000_000
KERNELS = [
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl, "
    "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, "
    "float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, "
    "c10::BFloat16*)",
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
]
OPS = ["aten::linear", "aten::gelu", "aten::layer_norm", "aten::matmul"]


def write_trace(path: Path, target_bytes: int) -> int:
    """Stream a synthetic trace of about target_bytes to path; returns its size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pid, tid = 31337, 31337
    us = 0.0
    corr = 0
    ext = 0
    step = 0
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        head = {
            "schemaVersion": 1,
            "deviceProperties": [
                {
                    "id": 0,
                    "name": "NVIDIA A100-SXM4-80GB",
                    "totalGlobalMem": 85_174_583_296,
                    "computeMajor": 8,
                    "computeMinor": 0,
                    "maxThreadsPerBlock": 1024,
                    "maxThreadsPerMultiprocessor": 2048,
                    "regsPerBlock": 65536,
                    "warpSize": 32,
                    "sharedMemPerBlock": 49152,
                    "numSms": 108,
                }
            ],
            "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
            "record_shapes": 1,
            "with_stack": 0,
            "displayTimeUnit": "ms",
            "baseTimeNanoseconds": BASE_NS,
        }
        text = json.dumps(head)[:-1] + ',\n  "traceEvents": [\n'
        out.write(text)
        written += len(text)
        events = [
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0, "args": {"name": "thread 1"}},
        ]
        first = True
        while written < target_bytes:
            if corr % 200 == 0:
                step += 1
                events.append(
                    {
                        "ph": "X",
                        "cat": "user_annotation",
                        "name": f"ProfilerStep#{step}",
                        "pid": pid,
                        "tid": tid,
                        "ts": round(us, 3),
                        "dur": 200 * 60.0 + 500,
                        "args": {"External id": ext},
                    }
                )
                events.append(
                    {
                        "ph": "X",
                        "cat": "user_annotation",
                        "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                        "pid": pid,
                        "tid": tid,
                        "ts": round(us + 1, 3),
                        "dur": 300.0,
                        "args": {},
                    }
                )
                events.append(
                    {
                        "ph": "X",
                        "cat": "gpu_memcpy",
                        "name": "Memcpy HtoD (Pageable -> Device)",
                        "pid": 0,
                        "tid": 7,
                        "ts": round(us + 310, 3),
                        "dur": 150.0,
                        "args": {
                            "device": 0,
                            "stream": 7,
                            "correlation": 10**9 + step,
                            "bytes": 12_845_056,
                            "memory bandwidth (GB/s)": 85.6,
                        },
                    }
                )
                us += 400
            k = corr % 4
            ext += 1
            corr += 1
            ts = round(us, 3)
            events.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": OPS[k],
                    "pid": pid,
                    "tid": tid,
                    "ts": ts,
                    "dur": 50.0,
                    "args": {
                        "External id": ext,
                        "Record function id": 0,
                        "Ev Idx": ext,
                        "Input Dims": [[32, 512, 1024], [1024, 1024], [1024]],
                        "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"],
                        "Input Strides": [[524288, 1024, 1], [1024, 1], [1]],
                        "Concrete Inputs": ["", "", ""],
                        "Sequence number": ext,
                    },
                }
            )
            events.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": "aten::empty",
                    "pid": pid,
                    "tid": tid,
                    "ts": round(us + 2, 3),
                    "dur": 3.125,
                    "args": {"External id": ext + 10**8},
                }
            )
            events.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "pid": pid,
                    "tid": tid,
                    "ts": round(us + 10, 3),
                    "dur": 6.5,
                    "args": {"External id": ext, "cbid": 211, "correlation": corr},
                }
            )
            events.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": KERNELS[k],
                    "pid": 0,
                    "tid": 7,
                    "ts": round(us + 20, 3),
                    "dur": 55.25,
                    "args": {
                        "External id": ext,
                        "queued": 0,
                        "device": 0,
                        "context": 1,
                        "stream": 7,
                        "correlation": corr,
                        "registers per thread": 128,
                        "shared memory": 49152,
                        "blocks per SM": 2.37,
                        "warps per SM": 9.48,
                        "grid": [256, 1, 1],
                        "block": [128, 1, 1],
                        "est. achieved occupancy %": 12,
                    },
                }
            )
            events.append(
                {
                    "ph": "s",
                    "id": corr,
                    "pid": pid,
                    "tid": tid,
                    "ts": round(us + 10, 3),
                    "cat": "ac2g",
                    "name": "ac2g",
                }
            )
            events.append(
                {
                    "ph": "f",
                    "id": corr,
                    "pid": 0,
                    "tid": 7,
                    "ts": round(us + 20, 3),
                    "cat": "ac2g",
                    "name": "ac2g",
                    "bp": "e",
                }
            )
            us += 60
            if len(events) >= 6000:
                text = ("" if first else ",\n") + ",\n".join(json.dumps(e) for e in events)
                first = False
                out.write(text)
                written += len(text)
                events = []
        if events:
            text = ("" if first else ",\n") + ",\n".join(json.dumps(e) for e in events)
            out.write(text)
        out.write("\n]}\n")
    return path.stat().st_size


CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    sys.path.insert(0, {root!r})
    path, what = {path!r}, {what!r}
    begin = time.perf_counter()
    if what in ("ours", "ours+report"):
        from tb_plugin_advisor.readers.kineto.reader import read_kineto
        profile = read_kineto(path)
        events = sum(p.event_count for p in profile.planes)
        if what == "ours+report":
            from tb_plugin_advisor.model import RunProfiles
            from tb_plugin_advisor.report.run import build_report
            json.dumps(build_report(RunProfiles("bench", [profile])).to_json())
    elif what == "theirs":
        import logging
        logging.disable(logging.CRITICAL)
        from torch_tb_profiler.profiler.data import RunProfileData
        data = RunProfileData.parse("worker0", "1", path, "/tmp")
        events = len(data.events)
    elif what == "baseline":
        from tb_plugin_advisor.readers.kineto.reader import read_kineto  # noqa: F401 - the imports alone
        events = 0
    elif what == "json":
        with open(path, "rb") as f:
            events = len(json.loads(f.read())["traceEvents"])
    elif what == "orjson":
        import orjson
        with open(path, "rb") as f:
            events = len(orjson.loads(f.read())["traceEvents"])
    elif what == "msgspec":
        from tb_plugin_advisor.readers.kineto.load import decode_event, decode_trace, read_trace_bytes
        trace = decode_trace(read_trace_bytes(path), path)
        events = 0
        for i, raw in enumerate(trace.traceEvents):
            decode_event(raw, i, path)
            events += 1
    done = time.perf_counter()
    print(json.dumps({{"seconds": done - begin, "events": events,
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
    """
)


def measure(path: Path, what: str, timeout: float = 3600) -> dict:
    code = CHILD.format(root=str(ROOT), path=str(path), what=what)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def uncompressed_size(path: Path) -> int:
    if path.name.endswith(".gz"):
        import gzip

        with gzip.open(path, "rb") as f:
            return sum(len(chunk) for chunk in iter(lambda: f.read(1 << 20), b""))
    return path.stat().st_size


def report(path: Path, whats, skip_theirs: bool) -> None:
    size = uncompressed_size(path)
    print(f"\n{path.name}: {size / 1e6:.1f} MB uncompressed")
    results = {}
    base = measure(path, "baseline").get("maxrss_kb", 0) * 1024
    print(f"  (a child that only imports the reader peaks at {base / 1e6:.1f} MB)")
    for what in whats:
        if what == "theirs" and skip_theirs:
            continue
        result = results[what] = measure(path, what)
        if "error" in result:
            print(f"  {what:12s} failed: {result['error']}")
            continue
        rss = result["maxrss_kb"] * 1024
        print(
            f"  {what:12s} {result['seconds']:8.2f} s   peak RSS {rss / 1e6:8.1f} MB "
            f"= {rss / size:5.2f}x the trace ({(rss - base) / size:5.2f}x above imports)   "
            f"({result['events']} events)"
        )
    ours, theirs = results.get("ours", {}), results.get("theirs", {})
    if "seconds" in ours and "seconds" in theirs:
        print(
            f"  ratio: ours / theirs = {ours['seconds'] / theirs['seconds']:.3f} (wall time); "
            f"peak RSS {ours['maxrss_kb'] / theirs['maxrss_kb']:.3f}"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=0, help="also measure one synthetic trace of this size")
    parser.add_argument("--sizes", default="100", help="comma-separated synthetic sizes in MB (scaling)")
    parser.add_argument(
        "--corpus", action="store_true", help="also the largest Kineto traces of ../shared/corpus"
    )
    parser.add_argument("--parsers", action="store_true", help="also the JSON parsers alone")
    parser.add_argument("--skip-theirs", action="store_true", help="skip torch-tb-profiler")
    args = parser.parse_args(argv)
    whats = ["ours", "ours+report", "theirs"] + (["json", "orjson", "msgspec"] if args.parsers else [])
    sizes = [int(s) for s in args.sizes.split(",") if s] + ([args.mb] if args.mb else [])
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; timings on this machine as loaded now")
    for mb in sizes:
        path = OUT / f"kineto_{mb}mb.pt.trace.json"
        if not path.exists():
            write_trace(path, mb * 1_000_000)
        report(path, whats, args.skip_theirs)
    if args.corpus and CORPUS.is_dir():
        traces = sorted(
            (p for p in CORPUS.rglob("*.json.gz") if "sagemaker" not in str(p)),
            key=lambda p: p.stat().st_size,
            reverse=True,
        )[:3]
        for path in traces:
            report(path, ["ours", "theirs"], args.skip_theirs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
