"""Peak memory per allocator, from the allocator stats TF/XLA attach to MemoryAllocation events.

Every `MemoryAllocation` / `MemoryDeallocation` event carries `peak_bytes_in_use` of its allocator
(`GPU_0_bfc`, `gpu_host_bfc`, `cpu` …; TPU runtimes record none and mean device memory). The
device peak is the largest value of a device allocator; host allocators are reported apart.
"""

from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from tb_plugin_advisor.analysis.classify.allocator_names import holds_host_memory
from tb_plugin_advisor.lookup import unique_codes
from tb_plugin_advisor.model import Profile

MEMORY_EVENTS = ("MemoryAllocation", "MemoryDeallocation")
NO_ALLOCATOR = "device"  # TPU runtimes leave allocator_name out
MAX_BYTES = float(1 << 62)  # no allocator peaks above this; larger values are corrupt


def peak_by_allocator(profile: Profile) -> Dict[str, int]:
    """allocator name → largest `peak_bytes_in_use` seen."""
    peaks: Dict[str, int] = {}
    for plane in profile.host_planes:
        is_memory = np.array([n in MEMORY_EVENTS for n in plane.event_names] + [False])
        if not is_memory.any():
            continue
        for line in plane.lines:
            peak = line.stats.get("peak_bytes_in_use")
            if peak is None or peak.kind == "str" or len(line) == 0:
                continue
            # Hostile or broken values (NaN, negative, wrapped uint64) are not byte counts: skip them.
            plausible = (peak.values >= 0) & (peak.values < MAX_BYTES)
            mask = is_memory[line.metadata_index] & peak.present & plausible
            if not mask.any():
                continue
            allocator = line.stats.get("allocator_name")
            if allocator is None or allocator.kind != "str":
                _raise(peaks, NO_ALLOCATOR, int(peak.values[mask].max()))
                continue
            named = mask & allocator.present
            ids = allocator.values[named]
            values = peak.values[named]
            for allocator_id in unique_codes(ids).tolist():
                _raise(peaks, plane.strings[allocator_id], int(values[ids == allocator_id].max()))
            unnamed = mask & ~allocator.present
            if unnamed.any():
                _raise(peaks, NO_ALLOCATOR, int(peak.values[unnamed].max()))
    return peaks


def device_peak_bytes(peaks: Dict[str, int]) -> Optional[int]:
    """The largest device-allocator peak (None when the profile records no device allocator)."""
    device = [v for k, v in peaks.items() if not holds_host_memory(k)]
    return max(device) if device else None


def _raise(peaks: Dict[str, int], key: str, value: int) -> None:
    if value > peaks.get(key, -1):
        peaks[key] = value
