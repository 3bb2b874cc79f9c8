"""Fuzzing the reader and the analyses: mutations of valid profiles, and profiles of random content.

Shared by tests/readers/test_fuzz.py (hypothesis, a bounded number of inputs in CI) and bench/fuzz.py
(100,000 inputs from a seeded generator). One input = bytes; `run_case` reads them and builds the
full report as the server would. A ProfileReadError (a clear "cannot read" answer) is a pass;
any other exception is a bug.
"""

from __future__ import annotations

import json
import math
import random
from typing import Callable, Dict, List

from synth import XSpaceBuilder

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.guarded_io import ReadLimits
from tb_plugin_advisor.readers.xplane import line_windows, schema
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes
from tb_plugin_advisor.report.run import build_report

T0 = 1_700_000_000_000_000_000
# Small caps so an inflated count fails fast instead of allocating (the caps themselves are tested).
FUZZ_LIMITS = ReadLimits(max_profile_bytes=8 << 20, max_events=2_000_000)

HOSTILE_VALUES = [math.nan, math.inf, -math.inf, -1, -(1 << 63), (1 << 64) - 1, 1e308, -0.0, 0, "", "x" * 300,
                  "nan", "12", "\x1b[31mred\x1b[0m", b"\x00\xff", True, 3.5]
STAT_NAMES = ["step_num", "_r", "peak_bytes_in_use", "allocator_name", "kernel_details", "memcpy_details",
              "tf_op", "hlo_op", "correlation_id", "flops", "bytes_accessed", "iter_num", "group_id",
              "compute_cap_major", "compute_cap_minor", "core_count", "memory_size", "clock_rate",
              "device_vendor", "is_eager", "long_name", "tf_function_call", "producer_type"]
EVENT_NAMES = ["train", "MemoryAllocation", "MemoryDeallocation", "cudaLaunchKernel", "MemcpyH2D",
               "MEMCPYDToH", "IteratorGetNext", "Iterator::Prefetch", "model/dense/MatMul:MatMul",
               "volta_h884gemm_64x64", "ampere_bf16_s16816gemm", "sm80_xmma_fprop", "EagerExecute",
               "train_step#step_num=1,_r=1#", "TraceContext", "$ThreadpoolListener::Record", ""]
PLANE_NAMES = ["/host:CPU", "/device:GPU:0", "/device:GPU:1", "/device:TPU:0", "/device:CUSTOM:x",
               "Task Environment", "/host:metadata"]


def valid_profile(rng: random.Random) -> bytes:
    """A well-formed profile with a random mix of lines, events, names and (often hostile) stats."""
    b = XSpaceBuilder(hostnames=[rng.choice(["h", "", "\x1b]0;x\x07"])])
    for _ in range(rng.randint(1, 3)):
        plane = b.plane(rng.choice(PLANE_NAMES))
        if rng.random() < 0.5:
            names = rng.sample(STAT_NAMES, rng.randint(0, 4))
            plane.set_stats({name: rng.choice(HOSTILE_VALUES) for name in names})
        for line_id in range(rng.randint(0, 3)):
            line = plane.line(rng.choice(["python", "Stream #1(Kernel)", "tf_Compute", "XLA Ops", "Steps"]),
                              id=line_id, timestamp_ns=T0)
            for _ in range(rng.randint(0, 25)):
                stats = {rng.choice(STAT_NAMES): rng.choice(HOSTILE_VALUES) for _ in range(rng.randint(0, 3))}
                name = rng.choice(EVENT_NAMES) if rng.random() < 0.8 else f"k{rng.randint(0, 10**6)}"
                line.event(name, T0 + rng.randint(0, 10**7), rng.randint(0, 10**6), stats=stats)
    if rng.random() < 0.2:
        b.error(rng.choice(["CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", "x"]))
    return b.to_bytes()


def _varint(value: int) -> bytes:
    return schema.encode_varint(value)


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def inflate_length(data: bytes, rng: random.Random) -> bytes:
    """Replace one byte that may be a length with a huge varint (a field claiming GBs)."""
    if not data:
        return data
    at = rng.randrange(len(data))
    huge = _varint(rng.choice([1 << 31, (1 << 63) - 1, 1 << 40, 0x7F, 1 << 21]))
    return data[:at] + huge + data[at + 1 :]


def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    """Wrap the bytes in many layers of length-delimited fields (a parser recursing without end)."""
    depth = rng.choice([10, 100, 1000, 5000])
    body = data[: rng.randrange(len(data) + 1)]
    for _ in range(depth):
        body = bytes([rng.choice([0x0A, 0x1A, 0x22, 0x2A])]) + _varint(len(body)) + body
    return body


def splice(data: bytes, rng: random.Random) -> bytes:
    """Copy a random slice of the file over another place (duplicated fields, misaligned tags)."""
    if len(data) < 4:
        return data
    a, b = sorted(rng.randrange(len(data)) for _ in range(2))
    at = rng.randrange(len(data))
    return data[:at] + data[a:b] + data[at:]


def random_bytes(data: bytes, rng: random.Random) -> bytes:
    return rng.randbytes(rng.randint(0, 64))


MUTATIONS: Dict[str, Callable[[bytes, random.Random], bytes]] = {
    "bit_flips": flip_bits,
    "truncation": truncate,
    "inflated_length": inflate_length,
    "deep_nesting": deep_nesting,
    "splice": splice,
    "random_bytes": random_bytes,
}


def make_case(rng: random.Random) -> bytes:
    """One fuzz input: a random valid profile, mutated by 0-2 random mutations."""
    data = valid_profile(rng)
    for name in rng.sample(sorted(MUTATIONS), rng.choice([0, 1, 1, 1, 2])):
        data = MUTATIONS[name](data, rng)
    return data


def run_case(data: bytes, windows: bool = False) -> str:
    """Read and fully analyse `data`; returns "report" or "refused"; any other exception propagates.
    `windows`: every line is read the way a long one is, a few bytes of the file at a time
    (readers/line_windows.py), so damaged input reaches that path too."""
    whole_below, window = line_windows.WHOLE_BELOW, line_windows.WINDOW
    if windows:
        line_windows.WHOLE_BELOW, line_windows.WINDOW = 0, 48
    try:
        profile = read_xplane_bytes(data, source="fuzz.xplane.pb", limits=FUZZ_LIMITS)
    except AdvisorError:
        return "refused"
    finally:
        line_windows.WHOLE_BELOW, line_windows.WINDOW = whole_below, window
    report = build_report(RunProfiles("fuzz", [profile])).to_json()
    json.dumps(report, allow_nan=False)  # the JSON contract: no NaN/inf reaches a client
    return "report"


__all__: List[str] = ["MUTATIONS", "make_case", "run_case", "valid_profile"]
