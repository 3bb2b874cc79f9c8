"""What an allocator's name says: whether it holds host memory or device memory, and which device.

TF names its allocators `GPU_0_bfc`, `gpu_host_bfc`, `bfc_cpu_allocator_for_gpu`, `mklcpu`, `cpu`;
Kineto's memory events name `CPU` or `GPU`/`XPU`/`MTIA` with a device index; TPU runtimes record no
name (device memory). The peak-memory figures and the memory view read allocators the same way
through this one module (tests/analysis/deep/test_memory_timeline.py and
tests/analysis/deep/test_memory_attribution.py back the names with real profiles).
"""

from __future__ import annotations

import re
from typing import Optional

# Allocator names that hold host memory (TF: `cpu`, `gpu_host_bfc`, `bfc_cpu_allocator_for_gpu`,
# `mklcpu`; Kineto: `CPU`).
HOST_ALLOCATOR = re.compile(r"(?i)host|cpu")
# The number in a device allocator's name is its device ordinal (`GPU_0_bfc`, `gpu:1`).
DEVICE_ORDINAL = re.compile(r"(?i)(?:gpu|tpu|xpu|mtia|device)[_: ]?(\d+)")


def holds_host_memory(allocator: str) -> bool:
    return bool(HOST_ALLOCATOR.search(allocator))


def device_ordinal(allocator: str) -> Optional[int]:
    """The device ordinal a device allocator's name holds; None when it holds none."""
    match = DEVICE_ORDINAL.search(allocator)
    return int(match.group(1)) if match else None
