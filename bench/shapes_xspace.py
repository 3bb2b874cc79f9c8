"""XSpace profile shapes for bench_shapes.py: files of a given size whose make-up differs.

(f) make_profile.py's TF-on-GPU loop (1,500 kernels a step, 3 stats a kernel: bench_report's file);
(g) A100-shaped: ~4,000 kernels a step, 3–6 stats a kernel and more events per MB (~2.2 M per
100 MB, as in captures of large models); (h) 1,000,000 distinct event metadata names (XLA fusion
names), used by the GPU's kernels in turn.

Speed: as in make_profile.py, one step of each line is encoded once, tiled, and every value that
changes per step (offsets, step numbers, correlation ids, metadata ids) is a fixed-width varint
patched with numpy; a metadata id can wrap (modulo the number of names).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple, Union

import numpy as np
from make_profile import STEP_PS, T0_NS, WIDE, PlaneWriter, build, key, varint, wide_varint_columns

MS = 10**9  # ps


@dataclass
class WideSlot:
    """A fixed-width varint in a step template: value = (base + step * per_step) % modulo (+ offset)."""

    position: int
    base: int
    per_step: int
    modulo: Optional[int] = None
    offset: int = 0


Stat = Tuple[int, str, float, int]  # (stat id, kind: int | ref | wide | double, value, per step)
Metadata = Union[int, Tuple[int, int, int, int]]  # an id, or (base, per step, modulo, offset)


class StepTemplate:
    """One step of a line's events, with the positions of the values that change from step to step."""

    def __init__(self) -> None:
        self.body = bytearray()
        self.slots: List[WideSlot] = []
        self.events = 0

    def event(self, metadata: Metadata, offset_ps: int, duration_ps: int, stats: Tuple[Stat, ...] = ()
              ) -> None:
        """metadata: an id, or (base, per step, modulo, offset) for one that changes per step."""
        slots: List[Tuple[int, WideSlot]] = []
        payload = bytearray(key(1, 0))
        if isinstance(metadata, tuple):
            slots.append((len(payload), WideSlot(0, *metadata)))
            payload += bytes(WIDE)
        else:
            payload += varint(metadata)
        payload += key(2, 0)
        slots.append((len(payload), WideSlot(0, offset_ps, STEP_PS)))
        payload += bytes(WIDE)
        payload += key(3, 0) + varint(duration_ps)
        for stat_id, kind, value, per_step in stats:
            stat = bytearray(key(1, 0) + varint(stat_id))
            if kind == "ref":
                stat += key(7, 0) + varint(int(value))
            elif kind == "double":
                stat += key(2, 1) + struct.pack("<d", value)
            elif kind == "wide":
                stat += key(4, 0)
                slots.append((len(payload) + 2 + len(stat), WideSlot(0, int(value), per_step)))
                stat += bytes(WIDE)
            else:
                stat += key(4, 0) + varint(int(value))
            payload += key(4, 2) + varint(len(stat)) + stat
        head = key(4, 2) + varint(len(payload))
        start = len(self.body) + len(head)
        for position, slot in slots:
            slot.position = start + position
            self.slots.append(slot)
        self.body += head + payload
        self.events += 1

    def render(self, steps: int) -> bytes:
        template = np.frombuffer(bytes(self.body), dtype=np.uint8)
        out = np.tile(template, steps)
        if self.slots:
            step = np.arange(steps, dtype=np.uint64)[:, None]
            base = np.array([s.base for s in self.slots], dtype=np.uint64)[None, :]
            per = np.array([s.per_step for s in self.slots], dtype=np.uint64)[None, :]
            values = base + step * per
            for k, slot in enumerate(self.slots):
                if slot.modulo:
                    values[:, k] = values[:, k] % np.uint64(slot.modulo) + np.uint64(slot.offset)
            positions = np.array([s.position for s in self.slots], dtype=np.int64)
            rows = np.arange(steps, dtype=np.int64)[:, None] * template.size
            where = (rows + positions[None, :]).reshape(-1)
            out[where[:, None] + np.arange(WIDE)[None, :]] = wide_varint_columns(values.reshape(-1))
        return out.tobytes()


def _line(plane: PlaneWriter, line_id: int, name: str, template: StepTemplate, steps: int) -> None:
    header = key(1, 0) + varint(line_id) + key(2, 2) + varint(len(name.encode())) + name.encode()
    body = header + key(3, 0) + varint(T0_NS) + template.render(steps)
    plane.lines.append(key(3, 2) + varint(len(body)) + body)


def _space(planes: List[bytes]) -> bytes:
    space = bytearray()
    for data in planes:
        space += key(1, 2) + varint(len(data)) + data
    return bytes(space + key(4, 2) + varint(len(b"bench-host")) + b"bench-host")


def _gpu_plane() -> PlaneWriter:
    gpu = PlaneWriter(2, "/device:GPU:0")
    for name, value in (("device_vendor", "Nvidia"), ("gpu_device_name", "NVIDIA A100-SXM4-80GB"),
                        ("compute_cap_major", 8), ("compute_cap_minor", 0), ("core_count", 108),
                        ("clock_rate", 1410000), ("memory_size", 80 << 30)):
        gpu.plane_stat(name, value)
    return gpu


def _metadata_entries(names: List[str], first_id: int) -> bytes:
    """Event metadata map entries (id → {id, name}) serialized directly: a million through the
    runtime's map would take a minute."""
    parts = []
    for k, name in enumerate(names):
        ident = varint(first_id + k)
        text = name.encode()
        meta = b"\x08" + ident + b"\x12" + varint(len(text)) + text
        entry = b"\x08" + ident + b"\x12" + varint(len(meta)) + meta
        parts.append(b"\x22" + varint(len(entry)) + entry)
    return b"".join(parts)


def _steps_for(target_bytes: int, step_bytes: int) -> int:
    return max(2, target_bytes // max(1, step_bytes))


def _gpu_loop(target_bytes: int, kernels: int, kernel_names: int, distinct_per_step: bool,
              extra_stats: bool) -> bytes:
    """A host plane (step marker, one op and one launch per kernel) and a GPU stream of `kernels`
    kernels a step. distinct_per_step: kernel k of step s uses name (s * kernels + k) % kernel_names,
    so every name is used in turn; else name k % kernel_names in every step. extra_stats: kernel k
    carries 3 + k % 4 stats (group_id, hlo_module, occupancy), else 3."""
    host, gpu = PlaneWriter(1, "/host:CPU"), _gpu_plane()
    ops = [f"model/layer_{i // 8}/{('MatMul', 'Add', 'Relu', 'Mul')[i % 4]}" for i in range(1000)]
    op_ids = [host.event_id(f"{op}:{op.rsplit('/', 1)[1]}") for op in ops]
    launch = host.event_id("cudaLaunchKernel")
    correlation = host.stat_id("correlation_id")
    gpu_correlation, details_stat = gpu.stat_id("correlation_id"), gpu.stat_id("kernel_details")
    tf_op, group, module, occupancy = (gpu.stat_id(n) for n in ("tf_op", "group_id", "hlo_module",
                                                               "theoretical_occupancy_pct"))
    details = [gpu.stat_id(f"regs:{32 + 8 * (i % 8)} static_shared:0 dynamic_shared:{1024 * i} "
                           f"grid:{108 * (1 + i % 4)},1,1 block:256,1,1 occ_pct:{25 + i % 50}")
               for i in range(64)]
    modules = [gpu.stat_id(f"jit_train_step_{i}") for i in range(4)]
    op_refs = [gpu.stat_id(f"{op}:{op.rsplit('/', 1)[1]}") for op in ops[:200]]
    if distinct_per_step:
        first = 1_000
        names = [f"loop_add_fusion.{k}" for k in range(kernel_names)]
        gpu.lines.append(_metadata_entries(names, first))
        kernel_ids: List[Metadata] = [(k, kernels, kernel_names, first) for k in range(kernels)]
    else:
        ids = [gpu.event_id(f"void at::native::kernel_{i}<float, {i % 7}>(float const*, float*, int)")
               for i in range(kernel_names)]
        kernel_ids = [ids[k % kernel_names] for k in range(kernels)]

    python, compute, stream = StepTemplate(), StepTemplate(), StepTemplate()
    python.event(host.event_id("train"), 0, 100 * MS - 1000,
                 ((host.stat_id("step_num"), "wide", 100, 1), (host.stat_id("_r"), "int", 1, 0)))
    span = 90 * MS // kernels
    for k in range(kernels):
        t = 5 * MS + k * span
        compute.event(op_ids[k % len(op_ids)], t - span // 2, span // 4)
        compute.event(launch, t - span // 4, span // 8, ((correlation, "wide", k, kernels),))
        stats: Tuple[Stat, ...] = ((gpu_correlation, "wide", k, kernels),
                                   (details_stat, "ref", details[k % 64], 0),
                                   (tf_op, "ref", op_refs[k % 200], 0))
        if extra_stats:
            extra: Tuple[Stat, ...] = ((group, "wide", 100, 1), (module, "ref", modules[k % 4], 0),
                                       (occupancy, "double", 50.0, 0))
            stats += extra[: k % 4]
        stream.event(kernel_ids[k], t, span * 3 // 4, stats)
    step_bytes = len(python.body) + len(compute.body) + len(stream.body)
    steps = _steps_for(target_bytes - sum(map(len, gpu.lines)), step_bytes)
    _line(host, 1, "python3", python, steps)
    _line(host, 2, "tf_Compute/1", compute, steps)
    _line(gpu, 7, "Stream #7(Kernel)", stream, steps)
    return _space([host.to_bytes(), gpu.to_bytes()])


def write_bench_profile(path: Path, target_bytes: int) -> Tuple[int, int]:
    """make_profile.py's shape, steps scaled to the size as bench_report.py does."""
    kernels = 1500
    steps = max(2, int(target_bytes / (kernels * 95)))
    data = build(steps, kernels)
    return _save(path, data, steps * (3 * kernels + 2 + 3 + 16))


def write_a100(path: Path, target_bytes: int) -> Tuple[int, int]:
    """~4,000 kernels a step, 3–6 stats a kernel, 400 kernel names: ~2.2 M events per 100 MB."""
    data = _gpu_loop(target_bytes, 4000, 400, distinct_per_step=False, extra_stats=True)
    return _save(path, data, -1)


def write_many_metadata(path: Path, target_bytes: int) -> Tuple[int, int]:
    """1,000,000 distinct kernel metadata names (XLA fusions), the GPU's kernels using them in turn."""
    data = _gpu_loop(target_bytes, 4000, 1_000_000, distinct_per_step=True, extra_stats=False)
    return _save(path, data, -1)


def _save(path: Path, data: bytes, events: int) -> Tuple[int, int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data), events


WRITERS: Dict[str, Callable[[Path, int], Tuple[int, int]]] = {
    "f": write_bench_profile,
    "g": write_a100,
    "h": write_many_metadata,
}
SHAPES = {
    "f": "TF loop, 1,500 kernels a step (bench_report)",
    "g": "A100: 4,000 kernels a step, 3-6 stats",
    "h": "1 M distinct metadata names",
}
