"""Build synthetic XSpace files in code, for tests where the truth must be known exactly.

Real TensorFlow on this machine only writes CPU profiles; GPU kernels, copies and precise timings come
from here. The builder writes the same wire format as the profiler (via the project's own schema), so
files it makes go through exactly the same reader path as real ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from tb_plugin_advisor.readers.xplane import schema


class PlaneBuilder:
    """One XPlane; event and stat metadata ids are handed out on demand and reused by name."""

    def __init__(self, proto, plane_id: int):
        self.proto = proto
        self.proto.id = plane_id
        self._event_ids: Dict[Tuple[str, str], int] = {}
        self._stat_ids: Dict[str, int] = {}

    def stat_id(self, name: str) -> int:
        if name not in self._stat_ids:
            new_id = len(self._stat_ids) + 1
            self._stat_ids[name] = new_id
            self.proto.stat_metadata[new_id].id = new_id
            self.proto.stat_metadata[new_id].name = name
        return self._stat_ids[name]

    def event_id(
        self, name: str, display_name: str = "", metadata_stats: Optional[Dict[str, Any]] = None
    ) -> int:
        key = (name, display_name)
        if key not in self._event_ids:
            new_id = len(self._event_ids) + 1
            self._event_ids[key] = new_id
            meta = self.proto.event_metadata[new_id]
            meta.id = new_id
            meta.name = name
            if display_name:
                meta.display_name = display_name
            for stat_name, value in (metadata_stats or {}).items():
                self._set_stat(meta.stats.add(), stat_name, value)
        return self._event_ids[key]

    def _set_stat(self, stat, name: str, value: Any, as_ref: bool = False) -> None:
        stat.metadata_id = self.stat_id(name)
        if as_ref and isinstance(value, str):
            stat.ref_value = self.stat_id(value)  # the profiler interns repeated strings this way
        elif isinstance(value, bool):
            stat.int64_value = int(value)
        elif isinstance(value, int):
            if value >= 0:
                stat.uint64_value = value
            else:
                stat.int64_value = value
        elif isinstance(value, float):
            stat.double_value = value
        elif isinstance(value, bytes):
            stat.bytes_value = value
        else:
            stat.str_value = str(value)

    def set_stats(self, stats: Dict[str, Any]) -> PlaneBuilder:
        for name, value in stats.items():
            self._set_stat(self.proto.stats.add(), name, value)
        return self

    def line(
        self, name: str, id: Optional[int] = None, display_name: str = "", timestamp_ns: Optional[int] = None
    ) -> LineBuilder:
        """A new line; its timestamp defaults to its first event's start (offsets must fit int64 ps)."""
        proto = self.proto.lines.add()
        proto.id = id if id is not None else len(self.proto.lines)
        proto.name = name
        if display_name:
            proto.display_name = display_name
        return LineBuilder(self, proto, timestamp_ns)


class LineBuilder:
    """One XLine; times are given in absolute nanoseconds and stored as the profiler does (ps offsets)."""

    def __init__(self, plane: PlaneBuilder, proto, timestamp_ns: Optional[int]):
        self.plane = plane
        self.proto = proto
        self._timestamp_set = timestamp_ns is not None
        if timestamp_ns is not None:
            proto.timestamp_ns = timestamp_ns

    def event(
        self,
        name: str,
        start_ns: int,
        duration_ns: int,
        stats: Optional[Dict[str, Any]] = None,
        ref_stats: Optional[Dict[str, str]] = None,
        metadata_stats: Optional[Dict[str, Any]] = None,
        display_name: str = "",
    ) -> LineBuilder:
        """Add an event; `ref_stats` are string stats stored as ref_value, as CUPTI does."""
        if not self._timestamp_set:
            self.proto.timestamp_ns = start_ns
            self._timestamp_set = True
        event = self.proto.events.add()
        event.metadata_id = self.plane.event_id(name, display_name, metadata_stats)
        event.offset_ps = (start_ns - self.proto.timestamp_ns) * 1000
        event.duration_ps = duration_ns * 1000
        for stat_name, value in (stats or {}).items():
            self.plane._set_stat(event.stats.add(), stat_name, value)
        for stat_name, value in (ref_stats or {}).items():
            self.plane._set_stat(event.stats.add(), stat_name, value, as_ref=True)
        return self

    def kernel(
        self,
        name: str,
        start_ns: int,
        duration_ns: int,
        tf_op: Optional[str] = None,
        hlo_op: Optional[str] = None,
        hlo_module: Optional[str] = None,
        correlation_id: Optional[int] = None,
        details: str = "regs:32 static_shared:0 dynamic_shared:0 grid:80,1,1 block:256,1,1 occ_pct:50",
        stats: Optional[Dict[str, Any]] = None,
    ) -> LineBuilder:
        """A GPU kernel the way CUPTI records it: kernel_details and tf_op as ref stats."""
        refs = {"kernel_details": details}
        if tf_op:
            refs["tf_op"] = tf_op
        if hlo_op:
            refs["hlo_op"] = hlo_op
        if hlo_module:
            refs["hlo_module"] = hlo_module
        plain = dict(stats or {})
        if correlation_id is not None:
            plain["correlation_id"] = correlation_id
        return self.event(name, start_ns, duration_ns, stats=plain, ref_stats=refs)

    def memcpy(
        self,
        name: str,
        start_ns: int,
        duration_ns: int,
        bytes: int,
        correlation_id: Optional[int] = None,
        dest: int = 0,
    ) -> LineBuilder:
        """A copy: `MemcpyH2D` (current CUPTI) or `MEMCPYHToD` (older writers) and memcpy_details."""
        plain: Dict[str, Any] = {}
        if correlation_id is not None:
            plain["correlation_id"] = correlation_id
        details = f"kind_src:1 kind_dst:2 size:{bytes} dest:{dest} async:1"
        return self.event(name, start_ns, duration_ns, stats=plain, ref_stats={"memcpy_details": details})


class XSpaceBuilder:
    """A whole profile of one host."""

    def __init__(self, hostnames=("synth-host",)):
        self.proto = schema.XSpace()
        self.proto.hostnames.extend(hostnames)
        self._next_plane_id = 0

    def plane(self, name: str) -> PlaneBuilder:
        proto = self.proto.planes.add()
        proto.name = name
        self._next_plane_id += 1
        return PlaneBuilder(proto, self._next_plane_id)

    def gpu_plane(
        self,
        ordinal: int,
        model: str = "NVIDIA A100-SXM4-40GB",
        compute_capability: Tuple[int, int] = (8, 0),
        vendor: str = "Nvidia",
        core_count: int = 108,
        memory_size: int = 40 * (1 << 30),
        memory_bandwidth: int = 1_555_000_000_000,
        clock_rate_khz: int = 1410000,
    ) -> PlaneBuilder:
        plane = self.plane(f"/device:GPU:{ordinal}")
        plane.set_stats(
            {
                "device_vendor": vendor,
                "gpu_device_name": model,
                "compute_cap_major": compute_capability[0],
                "compute_cap_minor": compute_capability[1],
                "core_count": core_count,
                "clock_rate": clock_rate_khz,
                "memory_size": memory_size,
                "memory_bandwidth": memory_bandwidth,
            }
        )
        return plane

    def error(self, text: str) -> XSpaceBuilder:
        self.proto.errors.append(text)
        return self

    def warning(self, text: str) -> XSpaceBuilder:
        self.proto.warnings.append(text)
        return self

    def to_bytes(self) -> bytes:
        return self.proto.SerializeToString()

    def write(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.to_bytes())
        return path
