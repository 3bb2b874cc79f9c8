"""Allocator records of a profile as columns: one row per allocation or free, per allocator, in time order.

Both formats record the allocator on host lines as zero-length events. XSpace (TF, XLA):
`MemoryAllocation` / `MemoryDeallocation` with `allocator_name`, `bytes_allocated` (in use after the
event), `allocation_bytes`, `requested_bytes`, `bytes_reserved`, `bytes_available`, `peak_bytes_in_use`,
`fragmentation`, `addr`, `tf_op`, `shape`, `data_type`, `region_type`. Kineto (PyTorch,
`profile_memory=True`): `[memory]` instant events with `Bytes` (negative for a free), `Total Allocated`,
`Total Reserved`, `Device Type`, `Device Id`, `Addr`, which the Kineto reader keeps as the stats
`memory_bytes`, `total_allocated`, `total_reserved`, `device_type`, `device_id`, `address`.
The tables below are the one place that knows these spellings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.model import Line, Plane, Profile

# Event name → sign of the change (0: the signed size stat says).
MEMORY_EVENT_SIGNS: Dict[str, int] = {"MemoryAllocation": 1, "MemoryDeallocation": -1, "[memory]": 0}

# Column → stat names that carry it, first present wins.
MEMORY_STATS: Dict[str, Tuple[str, ...]] = {
    "in_use": ("bytes_allocated", "total_allocated"),
    "reserved": ("bytes_reserved", "total_reserved"),
    "size": ("allocation_bytes", "memory_bytes"),  # signed for Kineto
    "requested": ("requested_bytes",),
    "available": ("bytes_available",),
    "allocator_peak": ("peak_bytes_in_use",),
    "fragmentation": ("fragmentation",),  # BFC's own measure, 0..1
    "address": ("addr", "address"),
    "data_type": ("data_type",),
    "device_type": ("device_type",),
    "device_id": ("device_id",),
}
MEMORY_TEXT_STATS: Dict[str, Tuple[str, ...]] = {
    "allocator": ("allocator_name",),
    "op": ("tf_op",),
    "shape": ("shape",),
    "region": ("region_type",),
}

# c10::DeviceType (PyTorch) → allocator label for Kineto records, which name no allocator.
TORCH_DEVICE_TYPES: Dict[int, str] = {0: "CPU", 1: "GPU", 6: "GPU", 12: "XPU", 19: "MTIA"}

# TensorFlow DataType enum (types.proto) → name, for the live-allocation table.
TF_DTYPE_NAMES: Dict[int, str] = {
    1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string", 8: "complex64",
    9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16", 18: "complex128", 19: "float16", 20: "resource",
    21: "variant", 22: "uint32", 23: "uint64", 24: "float8_e5m2", 25: "float8_e4m3fn",
}

# PyTorch's ScalarType codes, as `aten::empty*` records its dtype argument (`Concrete Inputs`).
TORCH_DTYPE_NAMES: Dict[int, str] = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32", 7: "float64",
    8: "complex32", 9: "complex64", 10: "complex128", 11: "bool", 15: "bfloat16", 23: "float8_e5m2",
    24: "float8_e4m3fn",
}


@dataclass
class MemoryRecords:
    """Every allocator record of one allocator, sorted by time. Sizes in bytes; NaN / -1 where absent."""

    allocator: str
    time_ns: np.ndarray  # int64
    delta: np.ndarray  # int64 signed change; 0 where unknown
    in_use: np.ndarray  # float64 bytes in use after the event (NaN where not recorded)
    reserved: np.ndarray  # float64
    available: np.ndarray  # float64
    allocator_peak: np.ndarray  # float64
    fragmentation: np.ndarray  # float64 0..1
    requested: np.ndarray  # float64
    address: np.ndarray  # int64, -1 where absent
    data_type: np.ndarray  # int64, -1 where absent
    text: Dict[str, List[Optional[str]]]  # op / shape / region per record (None where absent)

    def __len__(self) -> int:
        return int(self.time_ns.shape[0])


def _numeric(line: Line, mask: np.ndarray, names: Tuple[str, ...], fill: float) -> np.ndarray:
    out = np.full(int(mask.sum()), fill, dtype=np.float64)
    for stat in reversed(names):  # earlier names win: written last
        column = line.stats.get(stat)
        if column is None or column.kind == "str":
            continue
        values = column.values[mask].astype(np.float64)
        present = column.present[mask]
        out[present] = values[present]
    return out


def _texts(line: Line, mask: np.ndarray, names: Tuple[str, ...]) -> List[Optional[str]]:
    rows = np.nonzero(mask)[0]
    out: List[Optional[str]] = [None] * rows.size
    for stat in reversed(names):
        column = line.stats.get(stat)
        if column is None:
            continue
        strings = line.plane.strings
        values, present = column.values[rows], column.present[rows]
        for k in np.nonzero(present)[0].tolist():
            v = values[k]
            out[k] = strings[int(v)] if column.kind == "str" else str(v)
    return out


def _allocator_names(line: Line, mask: np.ndarray, device_type: np.ndarray, device_id: np.ndarray
                     ) -> List[str]:
    named = _texts(line, mask, MEMORY_TEXT_STATS["allocator"])
    out = []
    for name, dtype, did in zip(named, device_type.tolist(), device_id.tolist()):
        if name:
            out.append(name)
        elif dtype == dtype and dtype >= 0:  # Kineto: device type and id
            label = TORCH_DEVICE_TYPES.get(int(dtype), f"device type {int(dtype)}")
            out.append(label if label == "CPU" else f"{label} {int(did) if did == did and did >= 0 else 0}")
        else:
            out.append("device")  # TPU runtimes record no allocator name
    return out


def memory_records(profile: Profile) -> List[MemoryRecords]:
    """One MemoryRecords per allocator found on the host planes (empty list when none)."""
    parts: Dict[str, List[Dict[str, object]]] = {}
    for plane in profile.host_planes:
        sign_of = _sign_table(plane)
        if sign_of is None:
            continue
        for line in plane.lines:
            if len(line) == 0:
                continue
            signs = sign_of[line.metadata_index]
            mask = signs != 2
            if not mask.any():
                continue
            _collect(line, mask, signs[mask], parts)
    return [_assemble(name, chunks) for name, chunks in sorted(parts.items())]


def memory_record_count(profile: Profile) -> int:
    """How many allocator records the host planes hold (what the memory view could read), without
    reading their stats."""
    count = 0
    for plane in profile.host_planes:
        sign_of = _sign_table(plane)
        if sign_of is None:
            continue
        for line in plane.lines:
            if len(line):
                count += int(np.count_nonzero(sign_of[line.metadata_index] != 2))
    return count


def _sign_table(plane: Plane) -> Optional[np.ndarray]:
    """Per event name: +1 / -1 / 0 for memory records, 2 for everything else (None: no record here)."""
    table = np.full(len(plane.event_names) + 1, 2, dtype=np.int8)
    found = False
    for i, name in enumerate(plane.event_names):
        sign = MEMORY_EVENT_SIGNS.get(name)
        if sign is not None:
            table[i] = sign
            found = True
    return table if found else None


def _collect(line: Line, mask: np.ndarray, signs: np.ndarray, parts: Dict[str, List[Dict[str, object]]]
             ) -> None:
    cols = {key: _numeric(line, mask, names, np.nan) for key, names in MEMORY_STATS.items()}
    size = cols["size"]
    delta = np.where(signs == 0, size, signs * np.abs(size))
    delta = np.where(np.isnan(delta), 0, delta).astype(np.int64)
    texts = {key: _texts(line, mask, names) for key, names in MEMORY_TEXT_STATS.items() if key != "allocator"}
    allocators = _allocator_names(line, mask, cols["device_type"], cols["device_id"])
    times = line.start_ns[mask]
    by_name: Dict[str, List[int]] = {}
    for k, name in enumerate(allocators):
        by_name.setdefault(name, []).append(k)
    for name, rows_list in by_name.items():
        rows = np.array(rows_list, dtype=np.int64)
        chunk: Dict[str, object] = {"time": times[rows], "delta": delta[rows]}
        for key in ("in_use", "reserved", "available", "allocator_peak", "fragmentation", "requested"):
            chunk[key] = cols[key][rows]
        for key in ("address", "data_type"):
            raw = cols[key][rows]
            # an address or type code that is not a finite int64 (inf, NaN, 1e300) is unknown: -1
            usable = np.isfinite(raw) & (np.abs(raw) < 2.0**63)
            chunk[key] = np.where(usable, raw, -1).astype(np.int64)
        for key, values in texts.items():
            chunk[key] = [values[k] for k in rows_list]
        parts.setdefault(name, []).append(chunk)


def _assemble(name: str, chunks: List[Dict[str, object]]) -> MemoryRecords:
    def cat(key: str) -> np.ndarray:
        return np.concatenate([c[key] for c in chunks])  # type: ignore[misc]

    time = cat("time")
    order = np.argsort(time, kind="stable")
    text = {key: [v for c in chunks for v in c[key]] for key in ("op", "shape", "region")}  # type: ignore[union-attr]
    order_list = order.tolist()
    return MemoryRecords(
        allocator=name,
        time_ns=time[order],
        delta=cat("delta")[order],
        in_use=cat("in_use")[order],
        reserved=cat("reserved")[order],
        available=cat("available")[order],
        allocator_peak=cat("allocator_peak")[order],
        fragmentation=cat("fragmentation")[order],
        requested=cat("requested")[order],
        address=cat("address")[order],
        data_type=cat("data_type")[order],
        text={key: [values[i] for i in order_list] for key, values in text.items()},
    )
