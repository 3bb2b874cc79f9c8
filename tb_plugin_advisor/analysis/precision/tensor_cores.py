"""Tensor Cores (NVIDIA) and matrix cores (AMD MFMA, TPU MXU): how much device time runs on them,
which Tensor-Core-eligible work does not, and the likely reason.

"Eligible" means matrix work: a GEMM / convolution / fused-attention kernel, or any kernel of an op
that is one (TF MatMul, Conv2D, Einsum …; XLA dot, convolution, cuBLAS/cuDNN custom calls). The
built-in Profile tab only knows TF op types, so JAX work is never eligible there (ARCHITECTURE.md §6).

Times: `time_ms` values are totals over the profiled window, or per step when `steps` is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.architectures import TENSOR_CORE_DIM_MULTIPLE, Architecture
from tb_plugin_advisor.analysis.classify.kernel_view import KernelView, kernel_view, line_stat_strings
from tb_plugin_advisor.analysis.classify.patterns import (
    FAMILIES,
    LOW_PRECISION,
    MATRIX_FAMILIES,
    PRECISIONS,
)
from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.formatting import format_pct
from tb_plugin_advisor.lookup import among, largest_first, sums_by_code

# How many entries the JSON lists keep (the rest is noise for a reader, and the report stays small).
MAX_KERNELS = 50
MAX_NOT_USING = 20
MAX_TRANSPOSES = 10

# Why eligible work is not on Tensor Cores: one sentence per reason id, the id stays stable so the
# recommendation rules can test for it.
REASONS: Dict[str, str] = {
    "no_tensor_cores": "{device} ({arch}) has no Tensor Cores; matrix work runs on the FMA units",
    "fp32_tf32_off": "fp32 without TF32 on {arch}: turn TF32 on or use mixed precision (the "
    "recommendations give the code for this run's framework)",
    "fp32_needs_16bit": "fp32 on {arch}: its Tensor Cores need fp16 inputs; use mixed precision in "
    "float16 with loss scaling ({arch} has no bf16)",
    "fp32_vector_units": "fp32 on the vector units of {arch}; its matrix cores run bf16/fp16 fastest: "
    "use mixed precision in bf16",
    "fp64": "fp64: Tensor Cores do not serve double precision here; use fp32 or 16-bit types",
    "dims_not_multiple": "{precision} with dimensions that are not multiples of {multiple} (shape {shape}): "
    "pad or resize layers (units, channels, batch) to multiples of {multiple}",
    "low_precision_no_tc": "{precision} kernel without Tensor Cores: usually dimensions or alignment "
    "that are not multiples of 8, or a library fallback kernel",
    "gemv": "matrix-vector product (one dimension is 1): no Tensor Core path; batch the work",
    "layout_transpose": "layout transpose inside a matrix op: feed NHWC / channels_last data so the "
    "library needs no conversion",
    "unknown_precision": "the kernel name does not say its data type; check the op's dtype",
}


@dataclass
class NotUsing:
    """Eligible work that ran without Tensor Cores (one op × kernel pair)."""

    op: str
    kernel: str
    time_ns: int
    reason_id: str
    reason: str
    precision: str

    def to_json(self, scale: float) -> Dict[str, Any]:
        return {
            "op": self.op,
            "kernel": self.kernel,
            "kernel_short": short_name(self.kernel),
            "time_ms": round(self.time_ns * scale, 4),
            "reason": self.reason,
            "reason_id": self.reason_id,
            "precision": self.precision,
        }


@dataclass
class TensorCoreResult:
    """Tensor Core use over every device of a profile.

    Percentages are of device compute time (kernels other than collectives and runtime copies).
    `tf32_possible`: an Ampere-or-newer NVIDIA GPU ran fp32 GEMMs/convolutions without TF32.
    """

    compute_ns: int = 0
    tensor_core_ns: int = 0
    eligible_ns: int = 0
    eligible_tensor_core_ns: int = 0
    transpose_ns: int = 0
    architectures: List[str] = field(default_factory=list)
    has_tensor_cores: Optional[bool] = None
    kernels: List[Dict[str, Any]] = field(default_factory=list)  # times in ns
    eligible_not_using: List[NotUsing] = field(default_factory=list)
    transposes: List[Tuple[str, int]] = field(default_factory=list)
    tf32_possible: bool = False
    evidence: List[str] = field(default_factory=list)
    steps: Optional[int] = None
    # eligible matrix work (matmul/conv/attention) by precision: what mixed precision or TF32 would
    # speed up (advice/gains.py)
    eligible_ns_by_precision: Dict[str, int] = field(default_factory=dict)

    @property
    def device_time_pct(self) -> float:
        return _pct(self.tensor_core_ns, self.compute_ns)

    @property
    def eligible_time_pct(self) -> float:
        return _pct(self.eligible_ns, self.compute_ns)

    @property
    def eligible_on_tensor_cores_pct(self) -> float:
        return _pct(self.eligible_tensor_core_ns, self.eligible_ns)

    @property
    def transpose_time_pct(self) -> float:
        return _pct(self.transpose_ns, self.compute_ns)

    @property
    def not_using_time_pct(self) -> float:
        """Share of compute time in eligible matrix kernels that did not use Tensor Cores."""
        return _pct(sum(n.time_ns for n in self.eligible_not_using), self.compute_ns)

    def _scale(self) -> float:
        return 1e-6 / self.steps if self.steps else 1e-6

    def to_json(self) -> Dict[str, Any]:
        scale = self._scale()
        return {
            "tensor_cores": {
                "device_time_pct": round(self.device_time_pct, 3),
                "eligible_time_pct": round(self.eligible_time_pct, 3),
                "eligible_on_tensor_cores_pct": round(self.eligible_on_tensor_cores_pct, 3),
                "architecture": ", ".join(self.architectures),
                "has_tensor_cores": self.has_tensor_cores,
                "kernels": [
                    {
                        "name": k["name"],
                        "short_name": short_name(k["name"]),
                        "uses_tensor_cores": k["uses_tensor_cores"],
                        "precision": k["precision"],
                        "time_ms": round(k["time_ns"] * scale, 4),
                        "family": k["family"],
                        "eligible": k["eligible"],
                    }
                    for k in self.kernels
                ],
                "eligible_not_using": [n.to_json(scale) for n in self.eligible_not_using],
                "transpose_time_pct": round(self.transpose_time_pct, 3),
                "top_transposes": [
                    {"name": name, "short_name": short_name(name), "time_ms": round(ns * scale, 4)}
                    for name, ns in self.transposes
                ],
                "tf32_possible": self.tf32_possible,
                "time_basis": "per_step" if self.steps else "total",
                "evidence": list(self.evidence),
            }
        }


def _pct(part: float, whole: float) -> float:
    return 100.0 * float(part) / float(whole) if whole else 0.0


# ---------------------------------------------------------------------------------------------------


def _shape_dims(shape: str) -> List[Tuple[str, List[int]]]:
    """TF `shape` stats, e.g. "(half[4,384,4095];half[4095,1024])" → [("half", [4, 384, 4095]), …]."""
    out = []
    for dtype, dims in re.findall(r"([A-Za-z0-9_]+)\[([0-9, ]*)\]", shape or ""):
        values = [int(d) for d in dims.replace(" ", "").split(",") if d]
        out.append((dtype, values))
    return out


def _misaligned_dim(shape: str, multiple: int) -> Optional[int]:
    """The first matrix dimension (last two of each ≥2-D input) that is not a multiple of `multiple`."""
    for _, dims in _shape_dims(shape):
        if len(dims) < 2:
            continue
        for d in dims[-2:]:
            if d % multiple:
                return d
    return None


def why_not(precision: str, family: str, arch: Architecture, device: str, shape: Optional[str],
            vendor: str = "") -> Tuple[str, str]:
    """The likely reason an eligible kernel is not on Tensor Cores: (reason id, sentence)."""
    fields = {"device": device or "this GPU", "arch": arch.name, "precision": precision, "shape": shape or ""}
    if family == "transpose":
        rid = "layout_transpose"
    elif family == "gemv":
        rid = "gemv"
    elif arch.tensor_cores is False:
        rid = "no_tensor_cores"
    elif precision == "fp32":
        if vendor.lower().startswith("amd"):
            rid = "fp32_vector_units"
        elif arch.tf32:
            rid = "fp32_tf32_off"
        else:
            rid = "fp32_needs_16bit"
    elif precision == "fp64":
        rid = "fp64"
    elif precision in LOW_PRECISION or precision == "tf32":
        multiple = TENSOR_CORE_DIM_MULTIPLE.get(precision, 8)
        bad = _misaligned_dim(shape, multiple) if shape else None
        if bad is not None:
            rid = "dims_not_multiple"
            fields["multiple"] = multiple
        else:
            rid = "low_precision_no_tc"
    else:
        rid = "unknown_precision"
    return rid, REASONS[rid].format(**fields)


# ---------------------------------------------------------------------------------------------------


def analyze_tensor_cores(profile, steps: Optional[int] = None) -> TensorCoreResult:
    """Tensor Core use of every accelerator in `profile` (a tb_plugin_advisor.model.Profile)."""
    result = TensorCoreResult(steps=steps if steps and steps > 0 else None)
    kernels = _KernelSums()
    not_using: Dict[Tuple[str, str], NotUsing] = {}
    transposes: Dict[str, int] = {}
    capabilities: List[Optional[bool]] = []
    fp32_matrix_ns = 0
    for device in profile.devices:
        if len(device.kernels) == 0:
            continue
        view = kernel_view(device)
        capabilities.append(view.arch.tensor_cores)
        if view.arch.name not in result.architectures:
            result.architectures.append(view.arch.name)
        _accumulate(result, device, view, kernels, not_using, transposes)
        if view.arch.tf32 and not device.vendor.lower().startswith("amd"):
            fp32_matrix_ns += _fp32_matrix_ns(view)
    result.has_tensor_cores = (
        True if any(c is True for c in capabilities) else False if capabilities and all(
            c is False for c in capabilities) else None
    )
    result.kernels = kernels.top(MAX_KERNELS)
    result.eligible_not_using = sorted(not_using.values(), key=lambda n: -n.time_ns)[:MAX_NOT_USING]
    result.transposes = sorted(transposes.items(), key=lambda kv: -kv[1])[:MAX_TRANSPOSES]
    result.tf32_possible = fp32_matrix_ns > 0
    result.evidence = _evidence(result, fp32_matrix_ns)
    return result


def _fp32_matrix_ns(view: KernelView) -> int:
    fp32 = view.precision == PRECISIONS.index("fp32")
    matrix = among(view.family, [FAMILIES.index(f) for f in MATRIX_FAMILIES])
    return int(view.duration_ns[fp32 & matrix & view.compute & ~view.tensor_cores].sum())


class _KernelSums:
    """Time, Tensor Core time, eligible time and time per precision of each kernel name, summed over
    the devices as columns (a dict per name was most of this analysis for 100,000 names);
    rows are made only for the top names. A name keeps the family of the device it was first seen on."""

    def __init__(self) -> None:
        self.parts: List[Tuple[List[str], List[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, names: List[str], families: List[str], time_ns: np.ndarray, tc_ns: np.ndarray,
            eligible_ns: np.ndarray, by_prec: np.ndarray) -> None:
        self.parts.append((names, families, time_ns, tc_ns, eligible_ns, by_prec))

    def top(self, limit: int) -> List[Dict[str, Any]]:
        """The `limit` names with the most time (ties: first seen first), as the report lists them."""
        if not self.parts:
            return []
        names = [n for part in self.parts for n in part[0]]
        families = [f for part in self.parts for f in part[1]]
        time_ns, tc_ns, eligible_ns = (np.concatenate([part[k] for part in self.parts]) for k in (2, 3, 4))
        by_prec = np.concatenate([part[5] for part in self.parts])
        ids: Dict[str, int] = {}
        of_row = np.fromiter((ids.setdefault(n, len(ids)) for n in names), dtype=np.int64, count=len(names))
        if len(ids) < len(names):  # a name on several devices (or twice in a plane): summed
            first = np.full(len(ids), len(names), dtype=np.int64)
            np.minimum.at(first, of_row, np.arange(len(names)))
            families = [families[i] for i in first.tolist()]
            names = [names[i] for i in first.tolist()]
            time_ns, tc_ns, eligible_ns = (np.bincount(of_row, weights=c, minlength=len(ids)).astype(np.int64)
                                           for c in (time_ns, tc_ns, eligible_ns))
            by_prec = np.stack([np.bincount(of_row, weights=by_prec[:, k], minlength=len(ids))
                                for k in range(by_prec.shape[1])], axis=1)
        out = []
        for i in largest_first(time_ns, limit).tolist():
            time, tc, eligible = int(time_ns[i]), int(tc_ns[i]), int(eligible_ns[i])
            out.append({
                "name": names[i], "time_ns": time, "tc_ns": tc, "eligible_ns": eligible,
                "by_prec": by_prec[i].copy(), "family": families[i], "uses_tensor_cores": tc * 2 >= time,
                "eligible": eligible > 0, "precision": PRECISIONS[int(np.argmax(by_prec[i]))],
            })
        return out


def _accumulate(result: TensorCoreResult, device, view: KernelView, kernels: _KernelSums, not_using,
                transposes) -> None:
    dur = view.duration_ns
    compute = view.compute
    tc = view.tensor_cores
    eligible = view.eligible
    # sums taken in place or a million kernels at a time (lookup.sums_by_code): no per-kernel copies.
    # The device's totals are the sums of its names' (whole numbers, exact below 2**53 ns: 104 days of
    # kernel time), not more passes over every kernel.
    n_names = len(view.names) + 1
    name_index, n_prec = view.name_index, len(PRECISIONS)
    per_name = sums_by_code(name_index, n_names, dur, compute)
    tc_name = sums_by_code(name_index, n_names, dur, tc)
    eligible_name = sums_by_code(name_index, n_names, dur, eligible)
    result.compute_ns += int(per_name.sum())
    result.tensor_core_ns += int(tc_name.sum())
    result.eligible_ns += int(eligible_name.sum())
    result.eligible_tensor_core_ns += int(np.sum(dur, where=eligible & tc))
    for precision in ("fp32", "tf32"):
        ns = int(np.sum(dur, where=eligible & (view.precision == PRECISIONS.index(precision))))
        by_precision = result.eligible_ns_by_precision
        if ns:
            by_precision[precision] = by_precision.get(precision, 0) + ns

    listed = np.nonzero((per_name > 0) & ((tc_name > 0) | (eligible_name > 0)))[0]
    # time per (listed name, precision): over the listed names only (names × precisions for every
    # name was 64 MB, and as much again per chunk summed, with a million names)
    row_of = np.full(n_names, -1, dtype=np.int64)
    row_of[listed] = np.arange(listed.size)
    by_prec = sums_by_code(lambda part: row_of[name_index[part]] * n_prec + view.precision[part],
                           listed.size * n_prec, dur, compute & (row_of[name_index] >= 0)
                           ).reshape(listed.size, n_prec)
    families = [view.class_list[k].family for k in view.class_of[listed].tolist()]
    kernels.add([view.names[i] for i in listed.tolist()], families,
                per_name[listed].astype(np.int64), tc_name[listed].astype(np.int64),
                eligible_name[listed].astype(np.int64), by_prec)

    transpose = compute & (view.family == FAMILIES.index("transpose"))
    per_transpose = sums_by_code(name_index, n_names, dur, transpose)
    result.transpose_ns += int(per_transpose.sum())
    for i in np.nonzero(per_transpose)[0].tolist():
        transposes[view.names[i]] = transposes.get(view.names[i], 0) + int(per_transpose[i])

    candidates = [FAMILIES.index(f) for f in (*MATRIX_FAMILIES, "gemv", "transpose")]
    mask = eligible & ~tc & among(view.family, candidates)
    rows = np.nonzero(mask)[0]
    if rows.size == 0:
        return
    keys = (view.op[rows].astype(np.int64) + 1) * n_names + view.name_index[rows]
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    totals = np.bincount(inverse.reshape(-1), weights=dur[rows].astype(np.float64), minlength=unique.size)
    order = np.argsort(-totals)[:MAX_NOT_USING]
    representatives = rows[first[order]]
    shapes = line_stat_strings(device, "shape", representatives)
    device_label = device.model or device.name
    for j, group in enumerate(order.tolist()):
        row = int(rows[first[group]])
        op_index = int(view.op[row])
        op = view.op_labels[op_index] if op_index >= 0 else ""
        name = view.names[int(view.name_index[row])]
        precision = PRECISIONS[int(view.precision[row])]
        family = FAMILIES[int(view.family[row])]
        shape = device.kernels.strings[int(shapes[j])] if shapes is not None and shapes[j] >= 0 else None
        rid, reason = why_not(precision, family, view.arch, device_label, shape, device.vendor)
        key = (op, name)
        if key in not_using:
            not_using[key].time_ns += int(totals[group])
        else:
            not_using[key] = NotUsing(op, name, int(totals[group]), rid, reason, precision)


def _evidence(result: TensorCoreResult, fp32_matrix_ns: int) -> List[str]:
    lines: List[str] = []
    if result.compute_ns == 0:
        return ["no device kernels in this profile: Tensor Core use cannot be measured"]
    arch = ", ".join(result.architectures)
    lines.append(
        f"{format_pct(result.device_time_pct)} of device compute time ran on Tensor Cores / matrix cores "
        f"({arch}); matrix work (GEMM, convolution, attention and their ops) is "
        f"{format_pct(result.eligible_time_pct)}, of which "
        f"{format_pct(result.eligible_on_tensor_cores_pct)} used them"
    )
    if result.has_tensor_cores is False:
        lines.append("this device has no Tensor Cores: eligible work cannot use them")
    if result.eligible_not_using:
        top = result.eligible_not_using[0]
        lines.append(f"largest eligible kernel without Tensor Cores: {top.kernel[:120]} ({top.reason_id})")
    if fp32_matrix_ns:
        share = _pct(fp32_matrix_ns, result.compute_ns)
        lines.append(
            f"fp32 GEMM/convolution kernels without TF32 take {format_pct(share)} of device compute time "
            "on a GPU that supports TF32"
        )
    if result.transpose_ns:
        name = result.transposes[0][0] if result.transposes else ""
        lines.append(
            f"layout transposes take {format_pct(result.transpose_time_pct)} of device compute time "
            f"(largest: {name[:120]})"
        )
    return lines
