"""What the PyTorch profiler (Kineto) writes, as data: category roles, args kept as stats, files.

Kineto renamed its categories between 2021 and today (ARCHITECTURE.md §10); the reader matches them here,
case-insensitively and by role, so that one spelling change never silently drops events.
"""

from __future__ import annotations

import re
import time
from typing import Dict, Optional

# Roles: where an event goes in the Profile.
HOST = "host"  # a host-thread event (op, runtime call, annotation, python frame)
KERNEL = "kernel"  # a device stream event that is a kernel
MEMCPY = "memcpy"
MEMSET = "memset"
GPU_ANNOTATION = "gpu_annotation"  # a user range projected onto a device stream
SPAN = "span"  # the profiler's own "PyTorch Profiler (0)" capture window: bookkeeping, not work
DEVICE_ROLES = frozenset({KERNEL, MEMCPY, MEMSET, GPU_ANNOTATION})

# Complete ("X") event categories, lower-cased → role. Both the 2021 and the current spellings.
CATEGORY_ROLES: Dict[str, str] = {
    # 2021 (Kineto in torch 1.8/1.9)
    "operator": HOST,
    "runtime": HOST,
    "kernel": KERNEL,  # same spelling in both eras, case aside
    "memcpy": MEMCPY,
    "memset": MEMSET,
    "trace": SPAN,
    "python": HOST,
    "user_annotation": HOST,
    # current
    "cpu_op": HOST,
    "cuda_runtime": HOST,  # also hip* calls on ROCm
    "cuda_driver": HOST,
    "cuda_sync": KERNEL,  # stream waits on a device stream; analyses see them as device time
    "gpu_memcpy": MEMCPY,
    "gpu_memset": MEMSET,
    "gpu_user_annotation": GPU_ANNOTATION,
    "python_function": HOST,
    "fwdbwd": HOST,
    "overhead": HOST,
    "privateuse1_runtime": HOST,
    "privateuse1_driver": HOST,
    "mtia_runtime": HOST,
    "mtia_ccp_events": KERNEL,  # activity on the MTIA device (pid = device)
    "xpu_runtime": HOST,
    "xpu_driver": HOST,
    "cpu_instant_event": HOST,
    "mtia_insight": HOST,
}

# Device plane of each device category (default: a GPU). deviceProperties describe GPUs only.
GPU_PLANE = "/device:GPU:"
DEVICE_PLANES: Dict[str, str] = {"mtia_ccp_events": "/device:MTIA:"}

# Flow ("s"/"f") categories that link a runtime launch to the device activity it started.
LAUNCH_FLOW_CATEGORIES = frozenset({"ac2g", "async"})

# Numbers a trace may carry. An args value beyond ±LARGEST_ARG_MAGNITUDE (or not finite) is treated
# as unknown: every id, size, count and FLOP figure Kineto writes fits an int64, and anything larger
# would overflow the columns or turn averages into inf. A device event's pid is the device's number;
# no machine has more devices than this.
LARGEST_ARG_MAGNITUDE = float(1 << 63)
LARGEST_DEVICE_NUMBER = 65_535

# Host range names → StepMarker (a PyTorch step = one `prof.step()`).
PROFILER_STEP = re.compile(r"^ProfilerStep#(\d+)$")

# `args` keys kept as stats, → stat name. One place: analyses read these stat names. Kept lean on
# purpose (every kept arg costs time and memory per event): call stacks, strides, concrete inputs,
# CUPTI callback ids and contexts are left out.
ARG_STATS: Dict[str, str] = {
    "correlation": "correlation_id",
    "External id": "external_id",
    "external id": "external_id",
    "Sequence number": "sequence_number",
    "Fwd thread id": "fwd_thread_id",
    "Input type": "input_type",
    "Input Dims": "input_dims",
    "flops": "flops",  # with_flops=True: the op's FLOPs (analysis/deep/op_flops.py)
    "Concrete Inputs": "concrete_inputs",  # scalar args (conv stride/padding/groups) for op_flops.py
    "Input dims": "input_dims",
    "device": "device_id",
    "stream": "stream_id",
    "bytes": "bytes",
    "memory bandwidth (GB/s)": "memory_bandwidth_gbps",
    "grid": "grid",
    "block": "block",
    "registers per thread": "registers_per_thread",
    "shared memory": "shared_memory_bytes",
    "blocks per SM": "blocks_per_sm",
    "warps per SM": "warps_per_sm",
    "est. achieved occupancy %": "occupancy_pct",
    "kind": "copy_kind",
    # NCCL collectives (PyTorch's record of each c10d call, on its kernel): message sizes and ranks
    "In msg nelems": "in_msg_nelems",
    "Out msg nelems": "out_msg_nelems",
    "Group size": "group_size",
    "dtype": "dtype",
    "Collective name": "collective_name",
    "Python id": "python_id",
    "Python parent id": "python_parent_id",
    "Fwd thread": "fwd_thread_id",
    # [memory] instant events (profile_memory=True)
    "Bytes": "memory_bytes",
    "Total Allocated": "total_allocated",
    "Total Reserved": "total_reserved",
    "Device Type": "device_type",
    "Device Id": "device_id",
    "Addr": "address",
}

# Instant events kept: the allocator's records, on one "[memory]" line per process.
MEMORY_EVENT = "[memory]"

# Metadata ("M") names that carry names for processes and threads.
PROCESS_NAME = "process_name"
THREAD_NAME = "thread_name"
PROCESS_LABELS = "process_labels"

# Profile.format and Session.format of a Kineto trace (readers/formats/kineto.py).
FORMAT_ID = "kineto"

# File names.
TRACE_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")
_HANDLER_NAME = re.compile(r"^(?P<worker>.+)\.(?P<stamp>\d{10,20})\.pt\.trace\.json(?:\.gz)?$")
_PLAIN_NAME = re.compile(r"^(?P<worker>.+?)\.pt\.trace\.json(?:\.gz)?$")
JSON_SUFFIXES = (".json", ".json.gz")


def role_of(category: str, cache: Dict[str, Optional[str]]) -> Optional[str]:
    """The role of a category (None when unknown), memoised per spelling."""
    try:
        return cache[category]
    except KeyError:
        role = cache[category] = CATEGORY_ROLES.get(category.lower())
        return role


def is_trace_file(name: str) -> bool:
    return name.endswith(TRACE_SUFFIXES)


def split_trace_name(name: str) -> Optional[tuple]:
    """`<worker>.<timestamp>.pt.trace.json[.gz]` → (worker, timestamp or ""); None for other names."""
    match = _HANDLER_NAME.match(name)
    if match:
        return match.group("worker"), match.group("stamp")
    match = _PLAIN_NAME.match(name)
    if match:
        return match.group("worker"), ""
    return None


def is_json_name(name: str) -> bool:
    """A JSON file that is not named as the handler names traces: a trace saved by
    `prof.export_chrome_trace` may be one, under any name."""
    return name.endswith(JSON_SUFFIXES) and not is_trace_file(name)


def handler_name(name: str, mtime_ns: Optional[int]) -> str:
    """The name tensorboard_trace_handler would have given a file: `<stem>.<ms>.pt.trace.json[.gz]`."""
    gz = name.endswith(".gz")
    stem = name[: -len(".json.gz")] if gz else name[: -len(".json")] if name.endswith(".json") else name
    stamp = (mtime_ns or int(time.time() * 1e9)) // 1_000_000
    return f"{stem}.{stamp}.pt.trace.json{'.gz' if gz else ''}"


def worker_from_filename(path: str) -> str:
    """The host label of a trace file: the handler's `<worker>`, else the name without `.json[.gz]`."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    parts = split_trace_name(base)
    if parts:
        return parts[0]
    for suffix in (".json.gz", ".json", ".gz"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base
