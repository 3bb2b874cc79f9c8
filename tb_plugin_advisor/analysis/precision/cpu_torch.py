"""Precision of a CPU-only PyTorch trace: aten op self time typed by the op's `Input type` arg.

PyTorch on the CPU has no kernels to read types from; with `record_shapes=True` every aten op names
its inputs' dtypes (`["c10::BFloat16", "float", "ScalarList"]`). An op's precision is that of its first
floating-point input; integer-only ops (indexing, shapes) have none and stay out. Self time (an op's
time minus its nested ops') so `aten::linear` → `aten::addmm` is counted once.
"""

from __future__ import annotations

import json
from typing import Dict, List, Optional

import numpy as np

from tb_plugin_advisor.analysis.classify.event_names import TORCH_ATEN_OP
from tb_plugin_advisor.analysis.classify.torch_names import TORCH_NAMES

# Kineto `Input type` dtype strings → precision bucket (PRECISIONS of patterns.py)
TORCH_DTYPES: Dict[str, str] = {
    "float": "fp32",
    "double": "fp64",
    "c10::Half": "fp16",
    "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8",
    "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8",
    "c10::Float8_e5m2fnuz": "fp8",
    "c10::Float8_e8m0fnu": "fp8",
    "signed char": "int8",
    "unsigned char": "int8",
    "c10::complex<float>": "fp32",
    "c10::complex<double>": "fp64",
}


def precision_of_input_types(text: Optional[str]) -> Optional[str]:
    """'["c10::BFloat16","float",""]' → 'bf16' (first floating/8-bit input); None when none is."""
    if not text:
        return None
    try:
        types = json.loads(text)
    except ValueError:
        return None
    for dtype in types if isinstance(types, list) else []:
        precision = TORCH_DTYPES.get(str(dtype))
        if precision:
            return precision
    return None


def _self_time(starts: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """Each event's duration minus its direct children's (events of one thread nest)."""
    order = np.argsort(starts, kind="stable")
    self_ns = durations.astype(np.int64).copy()
    stack: List[int] = []
    for i in order.tolist():
        start = starts[i]
        while stack and starts[stack[-1]] + durations[stack[-1]] <= start:
            stack.pop()
        if stack:
            self_ns[stack[-1]] -= durations[i]
        stack.append(i)
    return np.maximum(self_ns, 0)


def torch_host_precision(result, profile) -> bool:
    """Fill result from aten op self time; False when the trace has no typed aten ops."""
    typed = False
    fp32_ops: Dict[str, int] = {}
    for plane in profile.host_planes:
        for line in plane.lines:
            if len(line) == 0 or "input_type" not in line.stats:
                continue
            aten = line.name_mask(lambda n: bool(TORCH_ATEN_OP.compiled.match(n)))
            if not aten.any():
                continue
            rows = np.nonzero(aten)[0]
            self_ns = _self_time(line.start_ns[rows], line.duration_ns[rows])
            types = line.stat_strings("input_type")
            for row, ns in zip(rows.tolist(), self_ns.tolist()):
                precision = precision_of_input_types(types[row])
                if precision is None or ns <= 0:
                    continue
                typed = True
                name = line.name_of(row)
                result.time_ns[precision] += ns
                if TORCH_NAMES["matrix_op"].match(name):
                    result.matrix_time_ns[precision] += ns
                if precision == "fp32":
                    fp32_ops[name] = fp32_ops.get(name, 0) + ns
    if typed:
        result.basis = "host"
        result.top_fp32_ops = sorted(fp32_ops.items(), key=lambda kv: -kv[1])[:10]
        result.evidence.append(
            "CPU-only PyTorch trace: aten op self time by the dtype of each op's first floating-point "
            "input (`Input type`, recorded with record_shapes=True)"
        )
    return typed
