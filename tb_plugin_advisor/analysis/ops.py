"""Per-op and per-kernel time tables, per steady step: what the diff matches across runs and people scan.

On accelerators an op is what the kernel's annotation names (the TF op `scope/name:Type`, else the
XLA `hlo_op`, else the kernel itself) and its time is the device time of its kernels, summed over
devices. On CPU-only profiles the ops are TF op events on the host's compute threads; ops of the
tf.data producer threads are listed too, as category `input_pipeline` (they run beside the step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import numpy as np

from tb_plugin_advisor.analysis import event_names as names
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.breakdown import Breakdown, device_kernel_category, is_producer_line
from tb_plugin_advisor.analysis.intervals import window_index
from tb_plugin_advisor.analysis.lookup import unique_inverse
from tb_plugin_advisor.analysis.onednn_ops import familiar_tf_op
from tb_plugin_advisor.model import Profile


@dataclass
class OpRow:
    name: str
    category: str  # device_compute | communication | memcpy | host_compute | input_pipeline
    time_ms: float  # per steady step
    count: float  # per steady step
    onednn_op: Optional[str] = None  # the oneDNN op type TF ran this op as (name shows the familiar one)

    def to_json(self) -> Dict[str, Any]:
        row: Dict[str, Any] = {
            "name": self.name,
            "category": self.category,
            "time_ms": round(self.time_ms, 6),
            "count": round(self.count, 3),
        }
        if self.onednn_op:
            row["onednn_op"] = self.onednn_op
        return row


def _windows(breakdown: Breakdown):
    lo = breakdown.window_start_ns[breakdown.steady]
    hi = breakdown.window_end_ns[breakdown.steady]
    order = np.argsort(lo, kind="stable")
    return lo[order], hi[order], max(int(lo.size), 1)


def op_table(profile: Profile, breakdown: Breakdown, limit: int = th.TOP_OPS) -> List[OpRow]:
    """Top ops by time per steady step (see module docstring)."""
    lo, hi, n = _windows(breakdown)
    totals: Dict[tuple, List[float]] = {}
    if any(len(d.kernels) for d in profile.devices):
        for device in profile.devices:
            k = device.kernels
            if not len(k):
                continue
            inside = window_index(lo, hi, k.start_ns) >= 0 if lo.size else np.ones(len(k), bool)
            if not inside.any():
                continue
            # one integer per (op label, kernel): the label is the tf_op, else the hlo_op, else the kernel
            span = len(k.strings) + 1
            tf_op, hlo_op, name_index = k.tf_op[inside], k.hlo_op[inside], k.name_index[inside]
            label_id = np.where(
                tf_op >= 0, tf_op, np.where(hlo_op >= 0, span + hlo_op, 2 * span + name_index)
            )
            keys = label_id.astype(np.int64) * len(k.names) + name_index
            unique, inverse = unique_inverse(keys)
            time = np.bincount(inverse, weights=k.duration_ns[inside], minlength=len(unique))
            count = np.bincount(inverse, minlength=len(unique))
            for row, key_value in enumerate(unique.tolist()):
                label_value, name_value = divmod(key_value, len(k.names))
                kernel_name = k.names[name_value]
                if label_value < span:
                    label = k.strings[label_value]
                elif label_value < 2 * span:
                    label = names.short_op_name(k.strings[label_value - span])
                else:
                    label = names.short_op_name(kernel_name)
                key = (label, device_kernel_category(kernel_name))
                slot = totals.setdefault(key, [0.0, 0.0])
                slot[0] += float(time[row])
                slot[1] += float(count[row])
    else:
        _host_ops(profile, lo, hi, totals)
    return _top_rows(totals, n, limit)


def _top_rows(totals: Dict[tuple, List[float]], n: int, limit: int) -> List[OpRow]:
    """The first `limit` rows by time per step, then name. Only rows whose time reaches the limit-th
    largest can be among them, so only those get their familiar op name (issue 12: 100,000 ops)."""
    items = list(totals.items())
    keep = range(len(items))
    if 0 < limit < len(items):
        times = np.array([t for _, (t, _) in items], dtype=np.float64) / 1e6 / n  # as OpRow.time_ms
        keep = np.flatnonzero(times >= np.partition(times, len(times) - limit)[len(times) - limit]).tolist()
    rows = []
    for i in keep:
        (name, category), (t, c) = items[i]
        familiar, onednn = familiar_tf_op(name)
        rows.append(OpRow(familiar, category, t / 1e6 / n, c / n, onednn))
    rows.sort(key=lambda r: (-r.time_ms, r.name))
    return rows[:limit]


# The host events that are ops on a CPU-only profile: TF ops, and PyTorch's aten ops (inclusive time:
# `aten::linear` contains its `aten::addmm`, as in PyTorch's own key_averages "CPU total").
HOST_OP_PATTERNS = tuple(p for p in names.HOST_COMPUTE if p.id in ("tf_op", "torch_aten_op"))


def _host_ops(profile: Profile, lo: np.ndarray, hi: np.ndarray, totals: Dict[tuple, List[float]]) -> None:
    for plane in profile.host_planes:
        is_op = np.append(names.matching(HOST_OP_PATTERNS, plane.event_names), False)
        if not is_op.any():
            continue
        for line in plane.lines:
            if len(line) == 0:
                continue
            mask = is_op[line.metadata_index]
            if lo.size:
                mask &= window_index(lo, hi, line.start_ns) >= 0
            if not mask.any():
                continue
            category = "input_pipeline" if is_producer_line(line) else "host_compute"
            meta = line.metadata_index[mask]
            used, inverse = np.unique(meta, return_inverse=True)
            time = np.bincount(inverse, weights=line.duration_ns[mask], minlength=used.size)
            count = np.bincount(inverse, minlength=used.size)
            for row, m in enumerate(used.tolist()):
                slot = totals.setdefault((plane.event_names[m], category), [0.0, 0.0])
                slot[0] += float(time[row])
                slot[1] += float(count[row])


def kernel_table(profile: Profile, breakdown: Breakdown, limit: int = th.TOP_KERNELS) -> List[OpRow]:
    """Top kernels (device ops) by name, time per steady step summed over devices."""
    lo, hi, n = _windows(breakdown)
    totals: Dict[tuple, List[float]] = {}
    for device in profile.devices:
        k = device.kernels
        if not len(k):
            continue
        inside = window_index(lo, hi, k.start_ns) >= 0 if lo.size else np.ones(len(k), bool)
        time = np.bincount(k.name_index[inside], weights=k.duration_ns[inside], minlength=len(k.names))
        count = np.bincount(k.name_index[inside], minlength=len(k.names))
        for i in np.flatnonzero(count).tolist():
            label = names.short_op_name(k.names[i])
            slot = totals.setdefault((label, device_kernel_category(k.names[i])), [0.0, 0.0])
            slot[0] += float(time[i])
            slot[1] += float(count[i])
    rows = [OpRow(name, category, t / 1e6 / n, c / n) for (name, category), (t, c) in totals.items()]
    rows.sort(key=lambda r: (-r.time_ms, r.name))
    return rows[:limit]
