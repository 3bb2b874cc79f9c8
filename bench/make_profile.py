"""Write a large synthetic TF-on-GPU profile (`.xplane.pb`) fast, for the report benchmark.

Shape (per 100 ms step, like a TF 2.x custom loop on one A100): the python thread holds a root step
marker `train` (_r=1, step_num), 15 ms in `IteratorGetNextOp::DoCompute`, then the tf.function call;
a tf_Compute thread runs one TF op per kernel with a nested `cudaLaunchKernel` (correlation_id); the
GPU runs the kernels back to back (kernel_details, tf_op, correlation_id stats), an H2D input copy
and a D2H copy; a tf.data producer thread runs map ops beside the step.

Speed: the bytes of one step are built once per line with the project's schema module; every value
that changes between steps (event offsets, step numbers, correlation ids) is written as a fixed-width
10-byte varint (protobuf parsers accept non-minimal varints) and patched for all steps at once with
numpy. 200 MB take a few seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tb_plugin_advisor.readers.xplane import schema

T0_NS = 1_700_000_000_000_000_000
STEP_PS = 100 * 10**9  # 100 ms
WIDE = 10  # bytes of a fixed-width varint
FIRST_STEP = 100  # profiled steps start after warm-up


varint = schema.encode_varint


def wide_varint_columns(values: np.ndarray) -> np.ndarray:
    """Each uint64 value as a WIDE-byte (non-minimal) varint: shape (n, WIDE) uint8."""
    values = values.astype(np.uint64)
    shifts = (np.arange(WIDE, dtype=np.uint64) * np.uint64(7))[None, :]
    groups = ((values[:, None] >> shifts) & np.uint64(0x7F)).astype(np.uint8)
    groups[:, :-1] |= 0x80
    return groups


def key(field: int, wire: int) -> bytes:
    return varint((field << 3) | wire)


@dataclass
class Slot:
    """A WIDE varint inside a line's per-step template: value = base + step * per_step."""

    position: int
    base: int
    per_step: int


class LineTemplate:
    """The events of one line for one step, with the positions of the values that change per step."""

    def __init__(self) -> None:
        self.body = bytearray()
        self.slots: List[Slot] = []

    def event(
        self,
        metadata_id: int,
        offset_ps: int,
        duration_ps: int,
        stats: Tuple[Tuple[int, str, int, int], ...] = (),
    ) -> None:
        """stats: (stat metadata id, kind, value, per-step increment); kind "int", "ref" or "wide"."""
        payload = bytearray(key(1, 0) + varint(metadata_id))
        payload += key(2, 0)
        offset_slot = len(payload)
        payload += bytes(WIDE)
        payload += key(3, 0) + varint(duration_ps)
        stat_slots = []
        for stat_id, kind, value, per_step in stats:
            stat = bytearray(key(1, 0) + varint(stat_id))
            if kind == "ref":
                stat += key(7, 0) + varint(value)
            elif kind == "wide":
                stat += key(4, 0)
                stat_slots.append((len(payload) + 2 + len(stat), value, per_step))  # +2: key + length
                stat += bytes(WIDE)
            else:
                stat += key(4, 0) + varint(value)
            payload += key(4, 2) + varint(len(stat)) + stat
        head = key(4, 2) + varint(len(payload))
        start = len(self.body) + len(head)
        self.slots.append(Slot(start + offset_slot, offset_ps, STEP_PS))
        for position, value, per_step in stat_slots:
            self.slots.append(Slot(start + position, value, per_step))
        self.body += head + payload

    def render(self, steps: int) -> bytes:
        """All steps' events: the template tiled, every slot patched with its per-step value."""
        template = np.frombuffer(bytes(self.body), dtype=np.uint8)
        size = template.size
        out = np.tile(template, steps)
        if self.slots:
            positions = np.array([s.position for s in self.slots], dtype=np.int64)
            base = np.array([s.base for s in self.slots], dtype=np.uint64)
            per = np.array([s.per_step for s in self.slots], dtype=np.uint64)
            step_index = np.arange(steps, dtype=np.uint64)[:, None]
            values = (base[None, :] + step_index * per[None, :]).reshape(-1)
            encoded = wide_varint_columns(values)
            where = (np.arange(steps, dtype=np.int64)[:, None] * size + positions[None, :]).reshape(-1)
            out[where[:, None] + np.arange(WIDE)[None, :]] = encoded
        return out.tobytes()


class PlaneWriter:
    """Metadata through the schema module; lines as raw bytes appended after it."""

    def __init__(self, plane_id: int, name: str) -> None:
        self.proto = schema.XPlane(id=plane_id, name=name)
        self.event_ids: Dict[str, int] = {}
        self.stat_ids: Dict[str, int] = {}
        self.lines: List[bytes] = []

    def event_id(self, name: str) -> int:
        if name not in self.event_ids:
            self.event_ids[name] = len(self.event_ids) + 1
            meta = self.proto.event_metadata[self.event_ids[name]]
            meta.id, meta.name = self.event_ids[name], name
        return self.event_ids[name]

    def stat_id(self, name: str) -> int:
        if name not in self.stat_ids:
            self.stat_ids[name] = len(self.stat_ids) + 1
            meta = self.proto.stat_metadata[self.stat_ids[name]]
            meta.id, meta.name = self.stat_ids[name], name
        return self.stat_ids[name]

    def plane_stat(self, name: str, value) -> None:
        stat = self.proto.stats.add(metadata_id=self.stat_id(name))
        if isinstance(value, str):
            stat.str_value = value
        else:
            stat.int64_value = int(value)

    def add_line(self, line_id: int, name: str, template: LineTemplate, steps: int) -> None:
        header = key(1, 0) + varint(line_id) + key(2, 2) + varint(len(name.encode())) + name.encode()
        header += key(3, 0) + varint(T0_NS)
        events = template.render(steps)
        body = header + events
        self.lines.append(key(3, 2) + varint(len(body)) + body)

    def to_bytes(self) -> bytes:
        return self.proto.SerializeToString() + b"".join(self.lines)


def build(steps: int, kernels_per_step: int) -> bytes:
    kernel_us = 75_000 // kernels_per_step  # kernels fill 75 ms of the 100 ms step
    ops = [f"model/block_{i // 4}/{('conv', 'bn', 'relu', 'add')[i % 4]}" for i in range(200)]
    op_types = {"conv": "Conv2D", "bn": "FusedBatchNormV3", "relu": "Relu", "add": "AddV2"}
    kernel_names = {
        "conv": "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
        "bn": "void tensorflow::functor::FusedBatchNormKernel<Eigen::bfloat16, float>(...)",
        "relu": "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<relu, Eigen::bfloat16>>(...)",
        "add": "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<sum, Eigen::bfloat16>>(...)",
    }

    host = PlaneWriter(1, "/host:CPU")
    gpu = PlaneWriter(2, "/device:GPU:0")
    for name, value in (
        ("device_vendor", "Nvidia"),
        ("gpu_device_name", "NVIDIA A100-SXM4-40GB"),
        ("compute_cap_major", 8),
        ("compute_cap_minor", 0),
        ("core_count", 108),
        ("clock_rate", 1410000),
        ("memory_size", 40 << 30),
    ):
        gpu.plane_stat(name, value)
    details = gpu.stat_id(
        "regs:64 static_shared:0 dynamic_shared:49152 grid:108,1,1 block:256,1,1 occ_pct:50"
    )
    tf_op_refs = {
        op: gpu.stat_id(f"{op}/{op_types[op.rsplit('/', 1)[1]]}:{op_types[op.rsplit('/', 1)[1]]}")
        for op in ops
    }
    h2d_details = gpu.stat_id("kind_src:1 kind_dst:2 size:6291456 dest:0 async:1")
    d2h_details = gpu.stat_id("kind_src:2 kind_dst:1 size:4 dest:0 async:1")

    python, compute, producer = LineTemplate(), LineTemplate(), LineTemplate()
    stream, copies = LineTemplate(), LineTemplate()
    ms = 10**9  # ps per ms
    python.event(
        host.event_id("train"),
        0,
        100 * ms - 1000,
        ((host.stat_id("step_num"), "wide", FIRST_STEP, 1), (host.stat_id("_r"), "int", 1, 0)),
    )
    python.event(host.event_id("IteratorGetNextOp::DoCompute"), 1000, 15 * ms)
    python.event(host.event_id("EagerLocalExecute: __inference_train_step_1234"), 16 * ms, 83 * ms)
    copies.event(
        gpu.event_id("MemcpyH2D"),
        15 * ms + 100_000,
        900 * 10**6,
        ((gpu.stat_id("memcpy_details"), "ref", h2d_details, 0),),
    )
    correlation = host.stat_id("correlation_id")
    gpu_correlation = gpu.stat_id("correlation_id")
    start_ps = 17 * ms
    for k in range(kernels_per_step):
        op = ops[k % len(ops)]
        kind = op.rsplit("/", 1)[1]
        t = start_ps + k * kernel_us * 10**6
        compute.event(host.event_id(f"{op}:{op_types[kind]}"), t - 30 * 10**6, 20 * 10**6)
        compute.event(
            host.event_id("cudaLaunchKernel"),
            t - 25 * 10**6,
            5 * 10**6,
            ((correlation, "wide", k, kernels_per_step),),
        )
        stream.event(
            gpu.event_id(kernel_names[kind]),
            t,
            (kernel_us - 2) * 10**6,
            (
                (gpu_correlation, "wide", k, kernels_per_step),
                (gpu.stat_id("kernel_details"), "ref", details, 0),
                (gpu.stat_id("tf_op"), "ref", tf_op_refs[op], 0),
            ),
        )
    copies.event(
        gpu.event_id("MemcpyD2H"),
        93 * ms,
        50 * 10**6,
        ((gpu.stat_id("memcpy_details"), "ref", d2h_details, 0),),
    )
    for j in range(16):
        producer.event(host.event_id("decode_image/DecodeJpeg:DecodeJpeg"), j * 6 * ms, 5 * ms)

    host.add_line(1, "python3", python, steps)
    host.add_line(2, "tf_Compute/1", compute, steps)
    host.add_line(3, "tf_data_private_threadpool/5", producer, steps)
    gpu.add_line(7, "Stream #7(Kernel)", stream, steps)
    gpu.add_line(8, "Stream #8(MemcpyH2D,MemcpyD2H)", copies, steps)
    space = bytearray()
    for plane in (host, gpu):
        data = plane.to_bytes()
        space += key(1, 2) + varint(len(data)) + data
    space += key(4, 2) + varint(len(b"bench-host")) + b"bench-host"
    return bytes(space)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--kernels-per-step", type=int, default=1500)
    args = parser.parse_args(argv)
    begin = time.perf_counter()
    data = build(args.steps, args.kernels_per_step)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(data)
    device_events = args.steps * (args.kernels_per_step + 2)
    all_events = device_events + args.steps * (2 * args.kernels_per_step + 3 + 16)
    print(
        f"wrote {args.output}: {len(data) / 1e6:.1f} MB, {device_events / 1e6:.2f} M device events, "
        f"{all_events / 1e6:.2f} M events, in {time.perf_counter() - begin:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
