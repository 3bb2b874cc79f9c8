"""Device activity in the Profile (model.py): kernels and copies of one accelerator as columns,
derived by the reader once so that analyses don't each redo it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import numpy as np

if TYPE_CHECKING:
    from tb_plugin_advisor.model import Plane



@dataclass(frozen=True)
class KernelDetails:
    """CUPTI's `kernel_details` stat, parsed."""

    registers_per_thread: Optional[int] = None
    static_shared_bytes: Optional[int] = None
    dynamic_shared_bytes: Optional[int] = None
    grid: Optional[Tuple[int, int, int]] = None
    block: Optional[Tuple[int, int, int]] = None
    occupancy_pct: Optional[float] = None


@dataclass
class KernelTable:
    """Every kernel (or device op) of one device, as columns sorted by start time.

    `name_index` points into `names`; `tf_op`, `hlo_op`, `hlo_module`, `details` point into `strings`
    (-1 where absent). For TPUs and other XLA devices the "kernels" are the device's op events.
    """

    names: List[str]
    strings: List[str]
    start_ns: np.ndarray
    duration_ns: np.ndarray
    name_index: np.ndarray
    line_index: np.ndarray  # which stream / line of the device plane (index into Device.plane.lines)
    tf_op: np.ndarray
    hlo_op: np.ndarray
    hlo_module: np.ndarray
    details: np.ndarray
    correlation_id: np.ndarray  # int32 or int64 (as the lines'), -1 where absent

    def __len__(self) -> int:
        return int(self.start_ns.shape[0])

    @property
    def total_ns(self) -> int:
        return int(self.duration_ns.sum())

    def string(self, column: np.ndarray, i: int) -> Optional[str]:
        idx = int(column[i])
        return self.strings[idx] if idx >= 0 else None


MEMCPY_DIRECTIONS = ("H2D", "D2H", "D2D", "P2P", "other")


@dataclass
class MemcpyTable:
    """Every copy on one device as columns; `direction` indexes MEMCPY_DIRECTIONS."""

    start_ns: np.ndarray
    duration_ns: np.ndarray
    direction: np.ndarray  # int8
    bytes: np.ndarray  # int64, -1 where unknown
    line_index: np.ndarray

    def __len__(self) -> int:
        return int(self.start_ns.shape[0])

    def total_ns(self, direction: Optional[str] = None) -> int:
        if direction is None:
            return int(self.duration_ns.sum())
        code = MEMCPY_DIRECTIONS.index(direction)
        return int(self.duration_ns[self.direction == code].sum())


@dataclass
class Device:
    """An accelerator (GPU, TPU) with its properties and activity."""

    name: str  # plane name, e.g. "/device:GPU:0"
    kind: str  # "gpu" | "tpu" | "device"
    ordinal: int
    vendor: str  # "Nvidia", "AMD", "Google", "" when unknown
    model: str  # e.g. "NVIDIA A100-SXM4-40GB"
    compute_capability: Optional[Tuple[int, int]]
    core_count: Optional[int]  # SMs / CUs / TensorCores
    clock_rate_khz: Optional[float]
    memory_bytes: Optional[int]
    memory_bandwidth: Optional[float]  # bytes/s
    plane: Plane = field(repr=False)
    kernels: KernelTable = field(repr=False)
    memcpys: MemcpyTable = field(repr=False)
    # What analyses derive from the tables and share (analysis/kernel_view.py): computed once per device
    derived: Dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def has_activity(self) -> bool:
        return len(self.kernels) > 0 or len(self.memcpys) > 0
