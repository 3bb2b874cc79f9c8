"""Kineto trace shapes for bench_shapes.py: files of a given size whose make-up differs.

Each shape stresses one cost of reading a trace: the bench_kineto training loop (the common shape),
distinct kernel names (one Python string each must survive the read), tiny events (per-event state
against few bytes of file), and many args per event (stat columns, and the args left out). Events
are written from byte templates with `%` formatting (a 100 MB file in a few seconds); the shapes
are documented in SHAPES, which bench_shapes.py prints beside each figure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

from bench_kineto import write_trace as write_training_loop

HEAD = {
    "schemaVersion": 1,
    "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85_174_583_296,
                          "computeMajor": 8, "computeMinor": 0, "numSms": 108, "warpSize": 32}],
    "displayTimeUnit": "ms",
    "baseTimeNanoseconds": 1_700_000_000_000_000_000,
}
PID, TID, STREAM = 31337, 31337, 7
CHUNK_EVENTS = 20_000  # events formatted and written at a time


def _write(path: Path, target_bytes: int, events: Iterator[str]) -> Tuple[int, int]:
    """Write HEAD and the events `events` yields until the file reaches target_bytes (0: until they
    end); returns (size, events written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        text = json.dumps(HEAD)[:-1] + ',\n"traceEvents": [\n'
        metadata = [
            f'{{"ph":"M","name":"process_name","pid":{PID},"tid":0,"ts":0,"args":{{"name":"python"}}}}',
            f'{{"ph":"M","name":"thread_name","pid":{PID},"tid":{TID},"ts":0,"args":{{"name":"thread 1"}}}}',
        ]
        text += ",\n".join(metadata)
        written = len(text)
        out.write(text)
        chunk: List[str] = []
        for event in events:
            chunk.append(event)
            if len(chunk) == CHUNK_EVENTS:
                text = ",\n" + ",\n".join(chunk)
                out.write(text)
                written += len(text)
                count += len(chunk)
                chunk = []
                if target_bytes and written >= target_bytes:
                    break
        if chunk:
            out.write(",\n" + ",\n".join(chunk))
            count += len(chunk)
        out.write("\n]}\n")
    return path.stat().st_size, count + len(metadata)


def _us(ns: int) -> str:
    """ns → the µs text Kineto writes (three decimals)."""
    return f"{ns // 1000}.{ns % 1000:03d}"


KERNEL_ARGS = ('"External id":%d,"queued":0,"device":0,"context":1,"stream":7,"correlation":%d,'
               '"registers per thread":128,"shared memory":49152,"blocks per SM":2.37,"warps per SM":9.48,'
               '"grid":[%d,1,1],"block":[128,1,1],"est. achieved occupancy %%":12')


def _distinct_kernels(target_bytes: int, names: int, full_args: bool) -> Iterator[str]:
    """Kernel events on one stream, the k-th named after name k % names. With few args, every name's
    length is padded so that `names` events fill the target (one event per name); with the full
    Kineto kernel args, names repeat once the pool is used up."""
    if full_args:
        template = ('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%s,"dur":1.500,'
                    '"args":{' + KERNEL_ARGS + '}}')
        pad = ""
    else:
        template = ('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%s,"dur":1.5,'
                    '"args":{"correlation":%d}}')
        fixed = len(template % ("", _us(names * 2000), names)) + len(",\n") + len("k_0000000")
        pad = "_" * max(0, target_bytes // names - fixed)
    k = 0
    while full_args or k < names:
        name = (f"void at::native::kernel_{k % names:06d}<float, 4>(at::TensorIteratorBase&)" if full_args
                else f"k_{k % names:07d}{pad}")
        ts = _us(k * 2000)
        yield template % ((name, ts, k, k, 1 + k % 512) if full_args else (name, ts, k))
        k += 1


def write_names_1m(path: Path, target_bytes: int) -> Tuple[int, int]:
    """1,000,000 kernels, each with its own name and one short arg; the names are padded to fill the
    size (a 100 MB file is then a little larger: 1 M events take ~110 MB)."""
    return _write(path, 0, _distinct_kernels(target_bytes, 1_000_000, full_args=False))


def write_names_200k(path: Path, target_bytes: int) -> Tuple[int, int]:
    """Kernels with Kineto's 13 kernel args, names drawn in turn from 200,000 distinct ones."""
    return _write(path, target_bytes, _distinct_kernels(target_bytes, 200_000, full_args=True))


def write_tiny(path: Path, target_bytes: int) -> Tuple[int, int]:
    """The same op over and over, with one small arg: ~95 bytes of file per event."""
    template = ('{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":%d,"dur":1,'
                '"args":{"External id":%d}}')

    def events() -> Iterator[str]:
        k = 0
        while True:
            yield template % (2 * k, k)
            k += 1

    return _write(path, target_bytes, events())


WIDE_ARGS = (  # 10 args the reader keeps, 10 it leaves out
    '"External id":%d,"Sequence number":%d,"Fwd thread id":0,"Input type":["float","float",""],'
    '"Input Dims":[[%d,1024],[1024,1024],[]],"Concrete Inputs":["","","1"],"flops":%d,"Python id":%d,'
    '"Python parent id":%d,"Collective name":"",'
    '"Record function id":0,"Ev Idx":%d,"Input Strides":[[1024,1],[1024,1],[]],'
    '"Trace name":"PyTorch Profiler",'
    '"Trace iteration":0,"Call stack":"train.py(42): step\\nmodel.py(7): forward","Profiler Step":%d,'
    '"Module Hierarchy":"model.encoder.layers.%d.mlp","stream":0,"Source":"python"'
)


def write_wide_args(path: Path, target_bytes: int) -> Tuple[int, int]:
    """Ops with 20 args each: 10 kept as stats, 10 left out; dims cycle over 1,000 batch sizes."""
    template = ('{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":31337,"tid":31337,"ts":%s,"dur":1,'
                '"args":{' + WIDE_ARGS + '}}')

    def events() -> Iterator[str]:
        k = 0
        while True:
            yield template % (_us(k * 2000), k, k, 1 + k % 1000, 2 * k, k, k // 2, k, k // 200, k % 24)
            k += 1

    return _write(path, target_bytes, events())


def write_training(path: Path, target_bytes: int) -> Tuple[int, int]:
    """bench_kineto.py's CUDA training loop (op, nested op, launch, kernel, flow pair per op)."""
    size = write_training_loop(path, target_bytes)
    return size, -1  # counted by the reader


WRITERS: Dict[str, Callable[[Path, int], Tuple[int, int]]] = {
    "a": write_training,
    "b": write_names_1m,
    "c": write_names_200k,
    "d": write_tiny,
    "e": write_wide_args,
}
SHAPES = {
    "a": "training loop (bench_kineto)",
    "b": "1 M distinct kernel names",
    "c": "200k distinct kernel names, 13 args",
    "d": "tiny identical events",
    "e": "20 args per event (10 kept)",
}
