"""Precision of CPU-only TF profiles: op events carry no dtype, so each op counts as the type of its
largest output, read from the `MemoryAllocation` events TF records (BFC allocator on the host, or
oneDNN's allocator); ops on tf.data producer threads stay out. Split from analysis/precision/device.py, which
decides the verdict for every kind of profile."""

from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.event_names import INPUT_PRODUCER_LINES, TF_OP_EVENT, first_match
from tb_plugin_advisor.analysis.classify.onednn_ops import familiar_tf_op
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS, classify_op, precision_of_tf_data_type
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.formatting import format_pct
from tb_plugin_advisor.lookup import unique_codes

ALLOCATION_EVENT = "MemoryAllocation"
MAX_TOP_FP32_OPS = 10




def _string_id(plane, text: str) -> int:
    try:
        return plane.strings.index(text)
    except ValueError:
        return -1


def host_precision(result: PrecisionResult, profile) -> None:
    op_time: Dict[str, int] = {}
    op_type: Dict[str, str] = {}
    output_dtype: Dict[str, Tuple[int, int]] = {}  # op name -> (bytes, TF DataType) of its largest output
    bytes_by_precision: Dict[str, int] = {}
    allocations = 0
    for plane in profile.host_planes:
        output_id = _string_id(plane, "output")
        for line in plane.lines:
            if len(line) == 0:
                continue
            ops = line.name_mask(lambda n: bool(TF_OP_EVENT.compiled.match(n)))
            # tf.data's producer threads run preprocessing beside the step (reported as input work);
            # the precision question is about the model's compute.
            if ops.any() and first_match(INPUT_PRODUCER_LINES, line.name) is None:
                per_name = np.bincount(
                    line.metadata_index[ops],
                    weights=line.duration_ns[ops].astype(np.float64),
                    minlength=len(plane.event_names),
                )
                for i in np.nonzero(per_name)[0].tolist():
                    familiar, onednn = familiar_tf_op(plane.event_names[i])
                    name, kind = familiar.rsplit(":", 1)
                    op_time[name] = op_time.get(name, 0) + int(per_name[i])
                    op_type[name] = kind
                    if onednn:
                        result.onednn_ops[familiar] = onednn
            allocs = line.name_mask(lambda n: n == ALLOCATION_EVENT)
            dtype_col, op_col = line.stats.get("data_type"), line.stats.get("tf_op")
            if not allocs.any() or dtype_col is None or op_col is None or dtype_col.kind == "str":
                continue
            rows = np.nonzero(allocs & dtype_col.present)[0]
            allocations += int(rows.size)
            region = line.stats.get("region_type")
            size_col = line.stats.get("requested_bytes")
            sizes = (size_col.values[rows].astype(np.int64) if size_col is not None and size_col.kind != "str"
                     else np.ones(rows.size, dtype=np.int64))
            dtypes = dtype_col.values[rows].astype(np.int64)
            for code in unique_codes(dtypes).tolist():
                precision = precision_of_tf_data_type(code)
                if precision:
                    bytes_by_precision[precision] = bytes_by_precision.get(precision, 0) + int(
                        sizes[dtypes == code].sum())
            keep = op_col.present[rows] & (op_col.kind == "str")
            if region is not None and region.kind == "str" and output_id >= 0:
                keep &= region.present[rows] & (region.values[rows] == output_id)
            for r, code, size in zip(rows[keep].tolist(), dtypes[keep].tolist(), sizes[keep].tolist()):
                name = plane.strings[int(op_col.values[r])]
                if size >= output_dtype.get(name, (-1, 0))[0]:
                    output_dtype[name] = (size, code)
    if not op_time:
        result.basis = "none"
        return
    result.basis = "host"
    fp32_ops: Dict[str, int] = {}
    for name, ns in op_time.items():
        code = output_dtype.get(name, (0, None))[1]
        precision = precision_of_tf_data_type(code) if code is not None else None
        precision = precision or "unknown"
        result.time_ns[precision] += ns
        if classify_op(f"{name}:{op_type[name]}")[0]:
            result.matrix_time_ns[precision] += ns
        if precision in ("fp32", "tf32"):
            fp32_ops[f"{name}:{op_type[name]}"] = ns
    result.top_fp32_ops = sorted(fp32_ops.items(), key=lambda kv: -kv[1])[:MAX_TOP_FP32_OPS]
    result.evidence.extend(_host_evidence(result, allocations, bytes_by_precision))


def _host_evidence(
    result: PrecisionResult, allocations: int, bytes_by_precision: Dict[str, int]
) -> List[str]:
    if not allocations:
        return [
            "CPU profile without typed MemoryAllocation events: TF op events carry no dtype, so the "
            "precision of host compute is unknown (the process must run with TF_CPU_ALLOCATOR_USE_BFC=true "
            "for TensorFlow to record tensor types on the host)"
        ]
    total = sum(bytes_by_precision.values())
    ranked = sorted(bytes_by_precision.items(), key=lambda kv: -kv[1])
    parts = [f"{p} {format_pct(100.0 * b / total)}" for p, b in ranked]
    shares = result.precision_pct
    return [
        f"{allocations} typed MemoryAllocation events; floating-point bytes allocated: " + ", ".join(parts),
        "host op time by the type of each op's output tensor: "
        + ", ".join(f"{p} {format_pct(shares[p])}" for p in PRECISIONS if shares[p] >= 0.05),
        "an op counts as bf16/fp16 when its output is; its internal math (e.g. fp32 accumulation) is not "
        "recorded, so these shares bound 16-bit compute rather than measure it",
    ]


