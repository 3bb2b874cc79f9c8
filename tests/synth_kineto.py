"""Build synthetic PyTorch profiler (Kineto) traces in code, for tests where the truth must be known.

The builder writes what Kineto writes (DESIGN.md §10): complete events with µs `ts`/`dur`, `M`
metadata naming processes and threads, `ac2g` flows, `deviceProperties`, `distributedInfo`. `era`
picks the spelling: "2021" (Operator/Runtime/Kernel/Memcpy, absolute integer µs) or "current"
(cpu_op/cuda_runtime/kernel/gpu_memcpy/user_annotation, float µs relative to baseTimeNanoseconds).
Times given to the builder are ns since the epoch, so tests can compare to exact values.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

CATEGORIES = {
    "2021": {"op": "Operator", "runtime": "Runtime", "kernel": "Kernel", "memcpy": "Memcpy",
             "memset": "Memset", "annotation": "user_annotation", "gpu_annotation": "gpu_user_annotation",
             "python": "python_function", "flow": "async"},
    "current": {"op": "cpu_op", "runtime": "cuda_runtime", "kernel": "kernel", "memcpy": "gpu_memcpy",
                "memset": "gpu_memset", "annotation": "user_annotation",
                "gpu_annotation": "gpu_user_annotation", "python": "python_function", "flow": "ac2g"},
}
BASE_NS = 1_700_000_000_000_000_000  # baseTimeNanoseconds of "current" traces
A100 = {"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42_314_694_656, "computeMajor": 8,
        "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
        "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
        "sharedMemPerMultiprocessor": 167936, "numSms": 108, "sharedMemPerBlockOptin": 166912}
MI300 = {"id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 205_571_227_648, "computeMajor": 9,
         "computeMinor": 4, "maxThreadsPerBlock": 1024, "warpSize": 64, "numSms": 304}


class KinetoTrace:
    """Accumulates events; `write()` / `to_bytes()` give the file."""

    def __init__(self, era: str = "current", pid: int = 4242, tid: int = 4242,
                 devices: Optional[List[Dict[str, Any]]] = None, rank: Optional[int] = None,
                 world_size: int = 1, process_name: str = "python"):
        self.era = era
        self.cat = CATEGORIES[era]
        self.pid = pid
        self.tid = tid
        self.events: List[Dict[str, Any]] = []
        self.top: Dict[str, Any] = {"schemaVersion": 1}
        self.top["deviceProperties"] = devices if devices is not None else [A100]
        if rank is not None:
            self.top["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world_size}
        if era == "current":
            self.top["baseTimeNanoseconds"] = BASE_NS
            self.top["displayTimeUnit"] = "ms"
        self._correlation = 0
        self._external = 0
        self.metadata("process_name", pid, 0, process_name)
        self.metadata("thread_name", pid, tid, "thread 1 (python)")

    # -- time --------------------------------------------------------------------------------------
    def _ts(self, ns: int) -> Any:
        if self.era == "2021":
            return ns // 1000
        return round((ns - BASE_NS) / 1000, 3)

    def _dur(self, ns: int) -> Any:
        return ns // 1000 if self.era == "2021" else round(ns / 1000, 3)

    # -- events ------------------------------------------------------------------------------------
    def raw(self, event: Dict[str, Any]) -> Dict[str, Any]:
        self.events.append(event)
        return event

    def metadata(self, name: str, pid: Any, tid: Any, label: str) -> None:
        self.raw({"name": name, "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"name": label}})

    def complete(self, cat: str, name: str, start_ns: int, dur_ns: int, pid: Any = None, tid: Any = None,
                 args: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        event = {"ph": "X", "cat": cat, "name": name, "pid": self.pid if pid is None else pid,
                 "tid": self.tid if tid is None else tid, "ts": self._ts(start_ns), "dur": self._dur(dur_ns)}
        if args is not None:
            event["args"] = args
        return self.raw(event)

    def op(self, name: str, start_ns: int, dur_ns: int, input_types: Optional[List[str]] = None,
           input_dims: Optional[List[List[int]]] = None, tid: Any = None,
           flops: Optional[int] = None, concrete: Optional[List[str]] = None) -> Dict[str, Any]:
        self._external += 1
        args: Dict[str, Any] = {"External id": self._external}
        if flops is not None:  # with_flops=True
            args["flops"] = flops
        if concrete is not None:  # record_shapes=True, PyTorch >= 2.1: scalar args as strings
            args["Concrete Inputs"] = concrete
        if input_types is not None:
            args["Input type"] = input_types
            args["Input Dims"] = input_dims or [[] for _ in input_types]
        return self.complete(self.cat["op"], name, start_ns, dur_ns, tid=tid, args=args)

    def annotation(self, name: str, start_ns: int, dur_ns: int, tid: Any = None) -> Dict[str, Any]:
        self._external += 1
        return self.complete(self.cat["annotation"], name, start_ns, dur_ns, tid=tid,
                             args={"External id": self._external})

    def step(self, number: int, start_ns: int, dur_ns: int) -> Dict[str, Any]:
        return self.annotation(f"ProfilerStep#{number}", start_ns, dur_ns)

    def dataloader(self, start_ns: int, dur_ns: int, workers: int = 0) -> Dict[str, Any]:
        kind = "_MultiProcessingDataLoaderIter" if workers else "_SingleProcessDataLoaderIter"
        return self.annotation(f"enumerate(DataLoader)#{kind}.__next__", start_ns, dur_ns)

    def launch(self, kernel: str, start_ns: int, dur_ns: int, kernel_start_ns: int, kernel_dur_ns: int,
               device: int = 0, stream: int = 7, grid=(80, 1, 1), block=(256, 1, 1), registers: int = 32,
               shared: int = 0, occupancy: float = 50.0, runtime: str = "cudaLaunchKernel") -> int:
        """A runtime launch on the host thread, its kernel on `stream` and the flow between them."""
        self._correlation += 1
        corr = self._correlation
        self.complete(self.cat["runtime"], runtime, start_ns, dur_ns,
                      args={"cbid": 211, "correlation": corr, "External id": self._external})
        self.complete(self.cat["kernel"], kernel, kernel_start_ns, kernel_dur_ns, pid=device,
                      tid=self._stream(stream), args={
                          "queued": 0, "device": device, "context": 1, "stream": stream, "correlation": corr,
                          "External id": self._external, "registers per thread": registers,
                          "shared memory": shared, "blocks per SM": 0.5, "warps per SM": 4.0,
                          "grid": list(grid), "block": list(block), "est. achieved occupancy %": occupancy})
        self._flow(corr, start_ns, kernel_start_ns, device, stream)
        return corr

    def memcpy(self, direction: str, start_ns: int, dur_ns: int, nbytes: int, device: int = 0,
               stream: int = 7, launch_start_ns: Optional[int] = None) -> int:
        """A copy (`HtoD`, `DtoH`, `DtoD`) and, when launch_start_ns is given, its cudaMemcpyAsync."""
        self._correlation += 1
        corr = self._correlation
        if launch_start_ns is not None:
            self.complete(self.cat["runtime"], "cudaMemcpyAsync", launch_start_ns, 5_000,
                          args={"cbid": 41, "correlation": corr})
            self._flow(corr, launch_start_ns, start_ns, device, stream)
        names = {"HtoD": "Memcpy HtoD (Pageable -> Device)", "DtoH": "Memcpy DtoH (Device -> Pageable)",
                 "DtoD": "Memcpy DtoD (Device -> Device)"}
        self.complete(self.cat["memcpy"], names[direction], start_ns, dur_ns, pid=device,
                      tid=self._stream(stream), args={"device": device, "context": 1, "stream": stream,
                                                      "correlation": corr, "bytes": nbytes,
                                                      "memory bandwidth (GB/s)": nbytes / max(dur_ns, 1)})
        return corr

    def memset(self, start_ns: int, dur_ns: int, nbytes: int, device: int = 0, stream: int = 7) -> None:
        self.complete(self.cat["memset"], "Memset (Device)", start_ns, dur_ns, pid=device,
                      tid=self._stream(stream), args={"device": device, "stream": stream, "bytes": nbytes})

    def memory(self, at_ns: int, nbytes: int, allocated: int, reserved: int, device: int = 0) -> None:
        self.raw({"ph": "i", "s": "t", "name": "[memory]", "pid": self.pid, "tid": self.tid,
                  "ts": self._ts(at_ns), "args": {"Bytes": nbytes, "Total Allocated": allocated,
                                                  "Total Reserved": reserved, "Device Type": 1,
                                                  "Device Id": device}})

    def span(self, start_ns: int, dur_ns: int) -> None:
        self.raw({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
                  "tid": "PyTorch Profiler", "ts": self._ts(start_ns), "dur": self._dur(dur_ns),
                  "args": {"Op count": 0}})

    def _stream(self, stream: int) -> Any:
        return f"stream {stream}" if self.era == "2021" else stream

    def _flow(self, corr: int, host_ns: int, device_ns: int, device: int, stream: int) -> None:
        flow = self.cat["flow"]
        name = "launch" if self.era == "2021" else "ac2g"
        self.raw({"ph": "s", "id": corr, "pid": self.pid, "tid": self.tid, "ts": self._ts(host_ns),
                  "cat": flow, "name": name})
        self.raw({"ph": "f", "id": corr, "pid": device, "tid": self._stream(stream),
                  "ts": self._ts(device_ns), "cat": flow, "name": name, "bp": "e"})

    # -- output ------------------------------------------------------------------------------------
    def document(self) -> Dict[str, Any]:
        return {**self.top, "traceEvents": self.events}

    def to_bytes(self, gzipped: bool = False) -> bytes:
        data = json.dumps(self.document()).encode()
        return gzip.compress(data) if gzipped else data

    def write(self, path: Path, gzipped: Optional[bool] = None) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.to_bytes(path.name.endswith(".gz") if gzipped is None else gzipped))
        return path


def training_trace(era: str = "current", steps: int = 3, workers: int = 0, step_ns: int = 10_000_000,
                   start_ns: Optional[int] = None, **kwargs: Any) -> KinetoTrace:
    """A small realistic training loop: per step a DataLoader wait, an H2D copy, conv forward and
    backward with kernels, an optimizer step — every duration known exactly."""
    trace = KinetoTrace(era=era, **kwargs)
    t = (BASE_NS + 1_000_000_000) if start_ns is None else start_ns
    trace.span(t, steps * step_ns)
    for n in range(steps):
        s = t + n * step_ns
        trace.step(n + 1, s, step_ns - 1_000)
        trace.dataloader(s + 10_000, 2_000_000, workers)
        trace.memcpy("HtoD", s + 2_100_000, 300_000, 4 * 1024**2, launch_start_ns=s + 2_050_000)
        trace.op("aten::conv2d", s + 2_500_000, 3_000_000, ["float", "float", "float"],
                 [[32, 3, 224, 224], [64, 3, 7, 7], [64]])
        trace.launch("void implicit_convolve_sgemm<float>(int)", s + 2_600_000, 20_000,
                     s + 2_700_000, 2_500_000)
        trace.op("aten::relu", s + 5_600_000, 200_000, ["float"], [[32, 64, 112, 112]])
        trace.launch("void at::native::vectorized_elementwise_kernel<4>(int)", s + 5_650_000, 10_000,
                     s + 5_700_000, 150_000)
        trace.annotation("Optimizer.step#SGD.step", s + 6_000_000, 1_000_000)
        trace.memset(s + 7_100_000, 2_000, 4096)
        trace.memory(s + 2_550_000, 1024, 10 * 1024**2, 20 * 1024**2)
    return trace
