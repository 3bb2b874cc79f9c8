"""Numeric precision of the work in a profile, and whether mixed precision is really on.

GPU/TPU: every kernel's precision comes from its name (library type tokens, C++ template types) or,
failing that, from TF's `shape` stat; shares are of device compute time (collectives and runtime
copies left out). bf16 counts as 16-bit — the built-in Profile tab counts it as 32-bit (ARCHITECTURE.md §6).

CPU-only TF profiles have no kernels and op events carry no dtype; `MemoryAllocation` events do
(`data_type`, `tf_op`, `region_type`), when the profiled process used TF's BFC allocator on the host
(TF_CPU_ALLOCATOR_USE_BFC=true) or ran with oneDNN on (its mklcpu allocator records them; TF 2.21's
default CPU allocator with oneDNN off records none). Ops on tf.data producer threads (decoding,
augmentation) are input work beside the step and stay out of the shares; oneDNN op names
(`_MklNativeConv2D`) count as the ops they stand for (onednn_ops.py). An op counts as the
type of its output tensor, which bounds, not measures, its internal math — the summary says so.

Times: `time_ms` values are totals over the profiled window, or per step when `steps` is given.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.analysis.classify.patterns import (
    FAMILIES,
    LOW_PRECISION,
    MATRIX_FAMILIES,
    PRECISIONS,
)
from tb_plugin_advisor.analysis.precision.cpu_tf import MAX_TOP_FP32_OPS, host_precision
from tb_plugin_advisor.analysis.precision.cpu_torch import torch_host_precision
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.formatting import fixed, format_pct
from tb_plugin_advisor.lookup import among, sums_by_code

# Verdict: share of matrix work (GEMM/convolution/attention, or all compute when the profile has
# none) in 16-bit/8-bit types, among the work whose type is known. The built-in tab warns below 10 %
# 16-bit of all compute; judging matrix work instead keeps fp32 softmax/loss/optimizer kernels — which
# stay fp32 under mixed precision on purpose — from hiding a correct setup.
VERDICT_THRESHOLDS: Tuple[Tuple[str, float], ...] = (("active", 80.0), ("partial", 20.0))
# Below this share of compute with a known type there is too little evidence for any verdict.
MIN_KNOWN_PCT = 5.0


def analyze_precision(profile, steps: Optional[int] = None) -> PrecisionResult:
    """Precision shares and the mixed-precision verdict of one Profile (tb_plugin_advisor.model)."""
    result = PrecisionResult(steps=steps if steps and steps > 0 else None)
    devices = [d for d in profile.devices if len(d.kernels)]
    if devices:
        _device_precision(result, devices)
    elif not (getattr(profile, "framework", "") == "pytorch" and torch_host_precision(result, profile)):
        host_precision(result, profile)
    _decide(result)
    return result


def _device_precision(result: PrecisionResult, devices) -> None:
    result.basis = "device"
    fp32_ops: Dict[str, int] = {}
    excluded_ns = 0
    shape_typed = 0
    fp32_matrix_ns = 0
    by_rule: Dict[str, int] = {}
    for device in devices:
        # sums over the kernels taken in place or a chunk at a time (lookup.sums_by_code): each
        # per-kernel copy was 8-24 MB of a 300 MB profile's 3 million kernels
        view = kernel_view(device)
        dur = view.duration_ns
        compute = view.compute
        excluded_ns += int(np.sum(dur, where=~compute))
        shape_typed += view.precision_from_shape
        buckets = sums_by_code(view.precision, len(PRECISIONS), dur, compute)
        matrix = compute & among(view.family, [FAMILIES.index(f) for f in MATRIX_FAMILIES])
        # The verdict judges the matrix products themselves: an eligible op's split-K reduction or
        # layout transpose may stay fp32 under mixed precision.
        side_work = among(view.family, [FAMILIES.index(f) for f in ("helper", "transpose")])
        matrix_work = view.eligible & ~side_work
        matrix_buckets = sums_by_code(view.precision, len(PRECISIONS), dur, matrix_work)
        for i, p in enumerate(PRECISIONS):
            result.time_ns[p] += int(buckets[i])
            result.matrix_time_ns[p] += int(matrix_buckets[i])
        fp32 = compute & among(view.precision, [PRECISIONS.index("fp32"), PRECISIONS.index("tf32")])
        if fp32.any():
            _group_fp32(view, fp32, fp32_ops)
        if view.arch.tf32 and not device.vendor.lower().startswith("amd"):
            fp32_matrix = matrix & (view.precision == PRECISIONS.index("fp32")) & ~view.tensor_cores
            fp32_matrix_ns += int(np.sum(dur, where=fp32_matrix))
        # compute time per rule: summed per name, then per class (few), not per name (100,000); sums
        # of whole ns in float64 stay exact
        per_name = sums_by_code(view.name_index, len(view.class_of), dur, compute)
        used = np.flatnonzero(per_name)
        per_class = np.bincount(view.class_of[used], weights=per_name[used], minlength=len(view.class_list))
        for cls, ns in zip(view.class_list, per_class.tolist()):
            if ns:
                for rule in cls.rules:
                    by_rule[rule] = by_rule.get(rule, 0) + int(ns)
    result.tf32_possible = fp32_matrix_ns > 0
    result.top_fp32_ops = sorted(fp32_ops.items(), key=lambda kv: -kv[1])[:MAX_TOP_FP32_OPS]
    result.evidence.extend(_device_evidence(result, excluded_ns, shape_typed, fp32_matrix_ns))


def _group_fp32(view, mask: np.ndarray, out: Dict[str, int]) -> None:
    """fp32/TF32 kernel time per op (the op's label, or the kernel name when no op is recorded)."""
    n_ops = len(view.op_labels)

    def keys(part: slice) -> np.ndarray:
        op = view.op[part]
        return np.where(op >= 0, op, n_ops + view.name_index[part].astype(np.int64))

    totals = sums_by_code(keys, n_ops + len(view.names), view.duration_ns, mask)
    for key in np.nonzero(totals)[0].tolist():
        label = view.op_labels[key] if key < n_ops else view.names[key - n_ops]
        out[label] = out.get(label, 0) + int(totals[key])


def _device_evidence(
    result: PrecisionResult, excluded_ns: int, shape_typed: int, fp32_matrix_ns: int
) -> List[str]:
    shares = result.precision_pct
    lines = []
    present = [f"{p} {format_pct(shares[p])}" for p in PRECISIONS if shares[p] >= 0.05]
    lines.append("device compute time by precision (from kernel names): " + ", ".join(present))
    if shares["bf16"] > 0:
        lines.append(
            f"bf16 kernels ({format_pct(shares['bf16'])}) count as 16-bit here; the built-in Profile tab "
            "counts bf16 as 32-bit"
        )
    if shares["unknown"] >= 0.05:
        lines.append(
            f"{format_pct(shares['unknown'])} of compute time is in kernels whose names carry no data type "
            "(elementwise/fusion kernels): counted as unknown"
        )
    if shape_typed:
        lines.append(f"{shape_typed} kernels were typed from the op's `shape` stat (no type in the name)")
    if excluded_ns:
        lines.append(
            f"{fixed(excluded_ns / 1e6, 3)} ms of collectives and runtime copy kernels are not compute "
            "and are "
            "left out of the shares"
        )
    if fp32_matrix_ns:
        share = 100.0 * fp32_matrix_ns / result.compute_ns
        lines.append(
            f"fp32 GEMM/convolution kernels without TF32 take {format_pct(share)} of compute time on a GPU "
            "that supports TF32"
        )
    return lines


# ---------------------------------------------------------------------------------------------------
# Verdict


def _decide(result: PrecisionResult) -> None:
    total = result.compute_ns
    if total == 0:
        result.verdict = "unknown"
        result.summary = "No compute in this profile: precision cannot be judged."
        return
    known = total - result.time_ns["unknown"]
    matrix_pct = result.matrix_low_precision_pct
    if matrix_pct is not None:
        basis_pct, basis_text = matrix_pct, "of matrix work (matmul/conv/attention)"
    elif known and 100.0 * known / total >= MIN_KNOWN_PCT:
        basis_pct = 100.0 * sum(result.time_ns[p] for p in LOW_PRECISION) / known
        basis_text = "of compute with a known type (no matmul/conv work in the profile)"
    else:
        result.verdict = "unknown"
        if result.basis == "host" and not known:
            result.summary = (
                "Precision unknown: this CPU profile records no tensor types (no typed MemoryAllocation "
                "events), so bf16/fp16 use cannot be seen."
            )
        else:
            result.summary = (
                f"Precision unknown: {format_pct(100.0 * (total - known) / total)} of compute has no "
                "recorded data type (kernel names without types)."
            )
        return
    result.verdict = "not_active"
    for verdict, threshold in VERDICT_THRESHOLDS:
        if basis_pct >= threshold:
            result.verdict = verdict
            break
    shares = result.precision_pct
    mix = ", ".join(f"{p} {format_pct(shares[p])}" for p in PRECISIONS if shares[p] >= 0.5)
    if result.basis == "host" and result.verdict == "not_active":
        # fp32 is TensorFlow's and PyTorch's default on a CPU: say so plainly, not as a failure.
        result.summary = (
            f"fp32 throughout, the default on a CPU: {format_pct(basis_pct)} {basis_text} runs in 16-bit "
            f"types; all compute: {mix}."
        )
        return
    words = {"active": "Mixed precision active", "partial": "Mixed precision partial",
             "not_active": "Mixed precision not active"}[result.verdict]
    if result.basis == "host":
        host_words = {"active": "bf16/fp16 dominant", "partial": "bf16/fp16 present"}
        words = host_words[result.verdict] + " on the host"
    summary = (
        f"{words}: {format_pct(basis_pct)} {basis_text} runs in 16-bit or 8-bit types; all compute: {mix}."
    )
    if result.verdict != "active" and result.top_fp32_ops:
        summary += f" Largest fp32 op: {result.top_fp32_ops[0][0]}."
    if result.basis == "host":
        summary += (" These shares come from each op's output type, so they are an upper bound on the "
                    "16-bit math done.")
    result.summary = summary
