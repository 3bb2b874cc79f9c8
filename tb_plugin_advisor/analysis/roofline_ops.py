"""The ops of a profile that have a FLOP count, with bytes, device time, precision and where it came from.

Two kinds of source, each labelled on the op:
- XSpace (TF/JAX): XLA's cost analysis puts `flops` and `bytes_accessed` on device op events (TPU ops,
  and GPU kernels of XLA programs where the profiler records them) → "profile (XLA cost analysis)".
- Kineto (PyTorch): the op's own `flops` arg (profile(with_flops=True)) → "profile (with_flops)", or
  FLOPs from `Input Dims` for matmul/conv/attention (op_flops.py) → "shapes". Such an op's time is the
  device time of the kernels launched inside it (runtime events on its thread, joined to kernels by
  correlation id); on a CPU-only trace, its own duration. Ops nested inside another costed op are
  dropped so that nothing is counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.accelerator_peaks import precision_of
from tb_plugin_advisor.analysis.op_flops import FORMULAS, element_width, parse_dims, parse_types, shape_cost
from tb_plugin_advisor.model import Device, Line, Profile
from tb_plugin_advisor.readers.devices import XLA_OP_LINES

SOURCE_XLA = "profile (XLA cost analysis)"
SOURCE_WITH_FLOPS = "profile (with_flops)"
FLOPS_STATS = ("flops", "model_flops")
BYTES_STATS = ("bytes_accessed",)
MAX_FLOPS = 1e21  # per op call: a zettaFLOP is beyond any real op; larger values are broken stats


@dataclass
class OpCall:
    name: str
    source: str
    flops: float
    bytes: Optional[float]
    time_ns: int
    start_ns: int
    precision: Optional[str]  # fp32, bf16 … from the op's dtype; None when the profile does not say


def profile_ops(profile: Profile) -> List[OpCall]:
    calls: List[OpCall] = []
    for device in profile.devices:
        calls.extend(_xla_ops(device))
    if profile.framework == "pytorch":
        kernels = _kernels_by_correlation(profile)
        for plane in profile.host_planes:
            for line in plane.lines:
                calls.extend(_torch_ops(line, kernels, bool(profile.gpus)))
    return calls


# ---------------------------------------------------------------------------------------------------
# XSpace


def _line_ops(line: Line) -> List[OpCall]:
    pos = np.arange(len(line))
    flops, has_flops = _column(line, FLOPS_STATS, pos)
    nbytes, has_bytes = _column(line, BYTES_STATS, pos)
    sane = has_flops & np.isfinite(flops) & (flops > 0) & (flops < MAX_FLOPS)
    nbytes_ok = has_bytes & np.isfinite(nbytes) & (nbytes > 0) & (nbytes < MAX_FLOPS)
    return [OpCall(line.name_of(i), SOURCE_XLA, float(flops[i]), float(nbytes[i]) if nbytes_ok[i] else None,
                   int(line.duration_ns[i]), int(line.start_ns[i]), None)
            for i in np.nonzero(sane)[0].tolist()]


def _column(line: Line, names: Tuple[str, ...], pos: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    for name in names:
        column = line.stats.get(name)
        if column is not None and column.kind != "str":
            return column.values[pos].astype(np.float64), column.present[pos]
    return np.zeros(pos.size), np.zeros(pos.size, dtype=bool)


def _xla_ops(device: Device) -> List[OpCall]:
    table = device.kernels
    out: List[OpCall] = []
    if len(table) == 0:
        return out
    activity = set(np.unique(table.line_index).tolist())
    derived = [line for i, line in enumerate(device.plane.lines)
               if line.name in XLA_OP_LINES and i not in activity and "flops" in line.stats]
    if derived:
        # a GPU plane xprof has already processed: its "XLA Ops" line spans each HLO op's kernels
        # and carries the op's cost stats, so the ops are read there and the kernels are not
        for line in derived:
            out.extend(_line_ops(line))
        return out
    for line_index in np.unique(table.line_index).tolist():
        line = device.plane.lines[int(line_index)]
        if not any(name in line.stats for name in FLOPS_STATS):
            continue
        rows = np.nonzero(table.line_index == line_index)[0]
        pos = np.clip(np.searchsorted(line.start_ns, table.start_ns[rows]), 0, max(len(line) - 1, 0))
        flops, has_flops = _column(line, FLOPS_STATS, pos)
        nbytes, has_bytes = _column(line, BYTES_STATS, pos)
        # a hostile or broken stat (NaN, inf, absurd) is no FLOP count
        sane = has_flops & np.isfinite(flops) & (flops > 0) & (flops < MAX_FLOPS)
        nbytes_ok = has_bytes & np.isfinite(nbytes) & (nbytes > 0) & (nbytes < MAX_FLOPS)
        for k in np.nonzero(sane)[0].tolist():
            i = int(rows[k])
            name = table.string(table.hlo_op, i) or table.names[int(table.name_index[i])]
            out.append(OpCall(name, SOURCE_XLA, float(flops[k]), float(nbytes[k]) if nbytes_ok[k] else None,
                              int(table.duration_ns[i]), int(table.start_ns[i]), None))
    return out


# ---------------------------------------------------------------------------------------------------
# Kineto


def _kernels_by_correlation(profile: Profile) -> Tuple[np.ndarray, np.ndarray]:
    """Sorted correlation ids of every device kernel and their durations (summed per id)."""
    ids = [d.kernels.correlation_id for d in profile.devices if len(d.kernels)]
    durs = [d.kernels.duration_ns for d in profile.devices if len(d.kernels)]
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    corr, dur = np.concatenate(ids), np.concatenate(durs)
    keep = corr >= 0
    unique, inverse = np.unique(corr[keep], return_inverse=True)
    return unique, np.bincount(inverse, weights=dur[keep]).astype(np.int64)


def _launched_ns(line: Line, kernels: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per event of the line: device ns of the kernel launched by it (0 for non-launches)."""
    out = np.zeros(len(line), dtype=np.int64)
    column = line.stats.get("correlation_id")
    ids, durs = kernels
    if column is None or column.kind == "str" or ids.size == 0:
        return out
    idx = column.indices
    corr = column.data.astype(np.int64)
    pos = np.clip(np.searchsorted(ids, corr), 0, ids.size - 1)
    hit = ids[pos] == corr
    out[idx[hit]] = durs[pos[hit]]
    return out


def _torch_ops(line: Line, kernels: Tuple[np.ndarray, np.ndarray], on_gpu: bool) -> List[OpCall]:
    flops_col = line.stats.get("flops")
    names = line.plane.event_names
    formula_ids = {i for i, n in enumerate(names) if n in FORMULAS or n == "aten::convolution_backward"}
    candidates = np.zeros(len(line), dtype=bool)
    if formula_ids:
        candidates |= np.isin(line.metadata_index, list(formula_ids))
    if flops_col is not None and flops_col.kind != "str":
        candidates[flops_col.indices[flops_col.data > 0]] = True
    idx = np.nonzero(candidates)[0]
    if idx.size == 0:
        return []
    launched = np.cumsum(_launched_ns(line, kernels))
    starts, ends = line.start_ns, line.end_ns

    def text(stat: str, i: int) -> Optional[str]:  # per candidate: no list over the whole line
        value = line.stat_value(stat, i)
        return value if isinstance(value, str) else None

    costed: List[Tuple[int, OpCall]] = []
    for i in idx.tolist():
        name = names[int(line.metadata_index[i])]
        types = parse_types(text("input_type", i))
        recorded = line.stat_value("flops", i) if flops_col is not None else None
        dims = parse_dims(text("input_dims", i))
        concrete = parse_types(text("concrete_inputs", i)) or None
        shaped = shape_cost(name, dims, types, concrete)
        if isinstance(recorded, (int, float)) and 0 < recorded < MAX_FLOPS:
            flops, source = float(recorded), SOURCE_WITH_FLOPS
            nbytes = shaped[1] if shaped else _input_bytes(dims, types)
        elif shaped is not None:
            flops, nbytes, source = shaped
        else:
            continue
        # device time of the kernels launched between the op's start and end on this thread
        lo = int(np.searchsorted(starts, starts[i], side="left"))
        hi = int(np.searchsorted(starts, ends[i], side="left"))
        device_ns = int(launched[hi - 1] - (launched[lo - 1] if lo > 0 else 0)) if hi > lo else 0
        time_ns = device_ns if on_gpu else int(line.duration_ns[i])
        if time_ns <= 0:
            continue
        precision = precision_of(types[0]) if types else None
        costed.append((i, OpCall(name, source, flops, nbytes, time_ns, int(starts[i]), precision)))
    return _outermost(costed, ends)


def _input_bytes(dims, types) -> Optional[float]:
    if not dims:
        return None
    return float(sum(int(np.prod(s)) for s in dims if s) * element_width(types))


def _outermost(costed: List[Tuple[int, OpCall]], ends: np.ndarray) -> List[OpCall]:
    """Drop costed ops inside another costed op (events on a line nest, sorted by start)."""
    out: List[OpCall] = []
    open_end = -1
    for i, call in costed:
        if call.start_ns < open_end:
            continue
        out.append(call)
        open_end = int(ends[i])
    return out

