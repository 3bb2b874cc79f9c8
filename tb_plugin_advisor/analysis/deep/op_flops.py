"""FLOPs and bytes of each executed op, as the roofline needs them: from the profile, else from shapes.

XSpace (TF/JAX on XLA): the op events of an XLA device carry XLA's cost analysis as stats — `flops`
(what the hardware executes), `model_flops` (without rematerialisation and padding: what MFU counts)
and `bytes_accessed` — directly or through their event metadata; each such kernel row is one op.

Kineto (PyTorch): `flops` is an arg of aten ops when the profiler ran with with_flops=True; with
record_shapes=True, matrix ops name their inputs' `Input Dims` and `Input type`, from which FLOPs and
bytes are computed here (matmul family, linear, scaled-dot-product attention, and convolutions when
`Concrete Inputs` gives their stride, padding, dilation and groups — PyTorch ≥ 2.1 records it — and
their backward, aten::convolution_backward, from grad_output's shape). An op is the
outermost host op that has a cost; its device time is the time of every kernel launched inside it
(kernels name their op by `External id`). Each op says where its FLOPs come from: "profile" | "shapes".
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.precision.cpu_torch import precision_of_input_types
from tb_plugin_advisor.lookup import unique_codes, unique_inverse
from tb_plugin_advisor.model import Device, Line, Profile

SOURCES = ("profile", "shapes")
XLA_FLOPS, XLA_MODEL_FLOPS, XLA_BYTES = "flops", "model_flops", "bytes_accessed"
TORCH_FLOPS = "flops"
PRECISION_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}


class OpCost(NamedTuple):
    """One executed op on one device (the slow path: OpCosts.rows(), for tests and small traces)."""

    name: str
    device: str
    start_ns: int
    duration_ns: int  # device time (the sum of its kernels' durations for PyTorch)
    flops: float
    model_flops: float  # = flops unless the profile records model FLOPs apart
    bytes: Optional[float]
    precision: str
    source: str


@dataclass
class OpCosts:
    """Every costed op as columns: a TPU profile costs every op event, a million of them in a long
    capture, so no Python object per op. `name` indexes `names`, `device` indexes `devices`,
    `precision` PRECISIONS, `source` SOURCES; `bytes` is NaN where unknown."""

    names: List[str]
    devices: List[str]
    name: np.ndarray
    device: np.ndarray
    start_ns: np.ndarray
    duration_ns: np.ndarray
    flops: np.ndarray
    model_flops: np.ndarray
    bytes: np.ndarray
    precision: np.ndarray
    source: np.ndarray

    def __len__(self) -> int:
        return int(self.start_ns.shape[0])

    def rows(self) -> List[OpCost]:
        return [OpCost(self.names[n], self.devices[d], s, t, f, m, None if math.isnan(b) else b,
                       PRECISIONS[p], SOURCES[o])
                for n, d, s, t, f, m, b, p, o in zip(*(getattr(self, k).tolist() for k in _FIELDS))]


class _Columns:
    """Accumulates column pieces and interns names/devices while the readers' tables are walked."""

    def __init__(self) -> None:
        self.names: Dict[str, int] = {}
        self.devices: Dict[str, int] = {}
        self.pieces: Dict[str, List[np.ndarray]] = {k: [] for k in _FIELDS}

    def intern(self, table: Dict[str, int], key: str) -> int:
        return table.setdefault(key, len(table))

    def add(self, **columns: np.ndarray) -> None:
        for k in _FIELDS:
            self.pieces[k].append(np.asarray(columns[k], dtype=_FIELDS[k]))

    def finish(self) -> OpCosts:
        cols = {k: (np.concatenate(v) if v else np.zeros(0, _FIELDS[k])) for k, v in self.pieces.items()}
        order = np.argsort(cols["start_ns"], kind="stable")
        return OpCosts(names=list(self.names), devices=list(self.devices),
                       **{k: c[order] for k, c in cols.items()})


_FIELDS = {"name": np.int32, "device": np.int32, "start_ns": np.int64, "duration_ns": np.int64,
           "flops": np.float64, "model_flops": np.float64, "bytes": np.float64, "precision": np.int8,
           "source": np.int8}


def op_costs(profile: Profile) -> OpCosts:
    """Every op with a known FLOP count (or, for XLA, bytes) on every device of one host."""
    out = _Columns()
    if profile.framework == "pytorch":
        _torch_costs(profile, out)
    else:
        for device in profile.devices:
            if len(device.kernels):
                _xla_costs(device, out)
    return out.finish()


# ---------------------------------------------------------------------------------------------------
# XLA cost stats on device op events


def _numeric(line: Line, stat: str, pos: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Float stat values at event positions, NaN where absent or not a count."""
    column = line.stats.get(stat)
    out = np.full(pos.shape[0], np.nan)
    if column is None or column.kind == "str":
        return out
    present = column.present[pos] & ok
    out[present] = column.values[pos][present].astype(np.float64)
    out[~np.isfinite(out) | (out < 0)] = np.nan  # a negative or infinite count is a broken stat: absent
    return out


def _xla_costs(device: Device, out: _Columns) -> None:
    table = device.kernels
    view = None
    for line_index in unique_codes(table.line_index).tolist():
        line = device.plane.lines[int(line_index)]
        if len(line) == 0 or (XLA_FLOPS not in line.stats and XLA_BYTES not in line.stats):
            continue
        view = view or kernel_view(device)
        rows = np.nonzero(table.line_index == line_index)[0]
        starts = table.start_ns[rows]
        pos = np.clip(np.searchsorted(line.start_ns, starts), 0, len(line) - 1)
        ok = (line.start_ns[pos] == starts) & (line.metadata_index[pos] == table.name_index[rows])
        flops = _numeric(line, XLA_FLOPS, pos, ok)
        model = _numeric(line, XLA_MODEL_FLOPS, pos, ok)
        nbytes = _numeric(line, XLA_BYTES, pos, ok)
        keep = view.compute[rows] & ~(np.isnan(flops) & np.isnan(nbytes))
        if not keep.any():
            continue
        rows, flops, model, nbytes = rows[keep], flops[keep], model[keep], nbytes[keep]
        flops = np.where(np.isnan(flops), 0.0, flops)
        used, inverse = unique_inverse(table.name_index[rows])
        ids = np.array([out.intern(out.names, table.names[int(i)]) for i in used.tolist()], dtype=np.int32)
        device_id = out.intern(out.devices, device.name)
        out.add(name=ids[inverse.reshape(-1)], device=np.full(rows.size, device_id),
                start_ns=table.start_ns[rows], duration_ns=table.duration_ns[rows], flops=flops,
                model_flops=np.where(np.isnan(model), flops, model), bytes=nbytes,
                precision=view.precision[rows], source=np.zeros(rows.size))


# ---------------------------------------------------------------------------------------------------
# PyTorch: Kineto `flops`, or FLOPs from `Input Dims`

_MM = re.compile(r"^aten::(mm|addmm|_addmm_activation|bmm|baddbmm|matmul|linear)$")
# conv op → positions of stride, padding, dilation, transposed (-1: never), groups in `Concrete Inputs`
_CONV_ARGS = {
    "aten::conv1d": (3, 4, 5, -1, 6), "aten::conv2d": (3, 4, 5, -1, 6), "aten::conv3d": (3, 4, 5, -1, 6),
    "aten::convolution": (3, 4, 5, 6, 8), "aten::_convolution": (3, 4, 5, 6, 8),
}
_ATTENTION = re.compile(r"^aten::(scaled_dot_product_attention|_scaled_dot_product_\w+_attention\w*|"
                        r"_flash_attention_forward|_efficient_attention_forward)$")


def _prod(dims: List[int]) -> int:
    out = 1
    for d in dims:
        out *= int(d)
    return out


def _conv_cost(name: str, dims: List[List[int]], concrete: List[str]) -> Optional[Tuple[float, float]]:
    """Forward convolution: 2 · N · O · prod(output spatial) · C/groups · prod(kernel) FLOPs."""
    where = _CONV_ARGS[name]
    x, w = dims[0], dims[1]
    nd = len(x) - 2
    if nd < 1 or len(w) != len(x) or len(concrete) <= max(where):
        return None
    if where[3] >= 0 and concrete[where[3]] not in ("False", "0", "false"):
        return None  # transposed
    stride, padding, dilation = (json.loads(concrete[i]) for i in where[:3])
    groups = int(concrete[where[4]])
    stride, padding, dilation = ([v] * nd if isinstance(v, int) else v for v in (stride, padding, dilation))
    if not all(isinstance(v, list) and len(v) == nd for v in (stride, padding, dilation)):
        return None
    out = [(x[2 + i] + 2 * padding[i] - dilation[i] * (w[2 + i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    if min(out) <= 0 or groups <= 0:
        return None
    output = x[0] * w[0] * _prod(out)
    flops = 2.0 * output * (x[1] // groups) * _prod(w[2:])
    bias = _prod(dims[2]) if len(dims) > 2 and dims[2] else 0
    return flops, float(_prod(x) + _prod(w) + bias + output)


def _conv_backward_cost(tensors: List[List[int]], concrete: Optional[List[str]]
                        ) -> Optional[Tuple[float, float]]:
    """aten::convolution_backward(grad_output, input, weight, …, output_mask): each gradient asked for
    in output_mask (argument 10; both when not recorded) costs one forward convolution, whose output is
    grad_output — so no stride or padding is needed."""
    g, x, w = tensors[0], tensors[1], tensors[2]
    if len(g) < 3 or len(x) != len(g) or len(w) != len(g) or g[1] != w[0]:
        return None
    text = concrete[10] if concrete and len(concrete) > 10 else ""
    mask = [t == "True" for t in text.replace(" ", "").strip("[]").split(",")][:2] if text else [True, True]
    mask += [True] * (2 - len(mask))
    forward = 2.0 * _prod(g) * w[1] * _prod(w[2:])
    moved = _prod(g) + _prod(x) + _prod(w) + (_prod(x) if mask[0] else 0) + (_prod(w) if mask[1] else 0)
    return forward * sum(mask), float(moved)


def shape_cost(name: str, dims: List[List[int]], concrete: Optional[List[str]] = None
               ) -> Optional[Tuple[float, float]]:
    """(FLOPs, elements moved: inputs + output) of a matrix/attention/convolution op from its input
    dims (and, for convolutions, its concrete scalar inputs); None when not understood."""
    tensors = [d for d in dims if isinstance(d, list) and d and all(isinstance(x, int) for x in d)]
    try:
        if name == "aten::convolution_backward":
            return _conv_backward_cost(tensors, concrete)
        if name in _CONV_ARGS:
            return _conv_cost(name, dims, concrete) if concrete else None
        match = _MM.match(name)
        if match:
            op = match.group(1)
            if op in ("addmm", "_addmm_activation", "baddbmm"):
                bias, a, b = tensors[0], tensors[1], tensors[2]
                moved = _prod(bias)
            else:
                a, b = tensors[0], tensors[1]
                moved = _prod(tensors[2]) if op == "linear" and len(tensors) > 2 else 0
            if op == "linear":  # x[..., K] · w[N, K]ᵀ
                m, k, n, batch = _prod(a[:-1]), a[-1], b[0], 1
            else:
                a2 = [1] + a if len(a) == 1 else a
                b2 = b + [1] if len(b) == 1 else b
                m, k, n = a2[-2], a2[-1], b2[-1]
                batch = max(_prod(a2[:-2]), _prod(b2[:-2]))
            moved += _prod(a) + _prod(b) + batch * m * n
            return 2.0 * batch * m * k * n, float(moved)
        if _ATTENTION.match(name):
            q, k, v = tensors[0], tensors[1], tensors[2]
            heads = _prod(q[:-2])
            length, span, dim, vdim = q[-2], k[-2], q[-1], v[-1]
            flops = 2.0 * heads * length * span * (dim + vdim)
            return flops, float(_prod(q) + _prod(k) + _prod(v) + heads * length * vdim)
    except (IndexError, TypeError, ValueError, ZeroDivisionError):
        return None
    return None


def _dims(text: Optional[str]) -> Optional[List[List[int]]]:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def _host_owners(line: Line) -> Tuple[Dict[int, int], Dict[int, Tuple[float, Optional[float], str, str]]]:
    """external id → owning costed op (event index); the costed ops' (flops, bytes, precision, source).

    The owner of an event is its outermost ancestor (or itself) with a cost, so nested aten ops
    (linear → addmm) count once."""
    ext = line.stats.get("external_id")
    if ext is None or ext.kind == "str":
        return {}, {}
    flops_col = line.stats.get(TORCH_FLOPS)
    dims = line.stat_strings("input_dims") if "input_dims" in line.stats else [None] * len(line)
    types = line.stat_strings("input_type") if "input_type" in line.stats else [None] * len(line)
    concrete = (line.stat_strings("concrete_inputs") if "concrete_inputs" in line.stats
                else [None] * len(line))
    costs: Dict[int, Tuple[float, Optional[float], str, str]] = {}
    owners: Dict[int, int] = {}
    stack: List[Tuple[int, int]] = []  # (end, owner or -1)
    ext_values, ext_present = ext.values, ext.present
    for i in range(len(line)):
        start = int(line.start_ns[i])
        while stack and stack[-1][0] <= start:
            stack.pop()
        owner = stack[-1][1] if stack else -1
        if owner < 0:
            cost = _torch_cost(line, i, flops_col, dims[i], types[i], concrete[i])
            if cost is not None:
                costs[i] = cost
                owner = i
        stack.append((start + int(line.duration_ns[i]), owner))
        if owner >= 0 and ext_present[i]:
            owners[int(ext_values[i])] = owner
    return owners, costs


def _torch_cost(line: Line, i: int, flops_col, dims_text: Optional[str], types_text: Optional[str],
                concrete_text: Optional[str]) -> Optional[Tuple[float, Optional[float], str, str]]:
    precision = precision_of_input_types(types_text) or "unknown"
    width = PRECISION_BYTES.get(precision)
    scalars = _dims(concrete_text)
    concrete = [str(c) for c in scalars] if scalars else None
    shaped = shape_cost(line.name_of(i), _dims(dims_text) or [], concrete) if dims_text else None
    nbytes = shaped[1] * width if shaped and width else None
    if flops_col is not None and flops_col.kind != "str":
        value = flops_col.get(i)
        if value is not None and float(value) > 0:
            return float(value), nbytes, precision, "profile"
    if shaped is not None and shaped[0] > 0:
        return shaped[0], nbytes, precision, "shapes"
    return None


def _torch_costs(profile: Profile, out: _Columns) -> None:
    owners: Dict[int, Tuple[Line, int]] = {}
    costs: Dict[Tuple[int, int], Tuple[float, Optional[float], str, str]] = {}
    lines: List[Line] = []
    for plane in profile.host_planes:
        for line in plane.lines:
            if len(line) == 0 or not ({"input_dims", TORCH_FLOPS} & set(line.stats)):
                continue
            found, line_costs = _host_owners(line)
            key = len(lines)
            lines.append(line)
            for ext, event in found.items():
                owners[ext] = (line, event)
            costs.update({(key, i): c for i, c in line_costs.items()})
    if not owners:
        return
    line_key = {id(line): k for k, line in enumerate(lines)}
    owned = np.array(sorted(owners), dtype=np.int64)
    device_time: Dict[Tuple[str, int, int], List[int]] = {}  # (device, line key, event) → [start, ns]
    for device in profile.devices:
        for line in device.plane.lines:
            ext = line.stats.get("external_id")
            if ext is None or ext.kind == "str" or len(line) == 0:
                continue
            hits = ext.indices[np.isin(ext.data, owned)]  # only kernels of costed ops: few
            for i in hits.tolist():
                hit = owners[int(ext.values[i])]
                key = (device.name, line_key[id(hit[0])], hit[1])
                slot = device_time.setdefault(key, [int(line.start_ns[i]), 0])
                slot[0] = min(slot[0], int(line.start_ns[i]))
                slot[1] += int(line.duration_ns[i])
    cols: Dict[str, List] = {k: [] for k in _FIELDS}
    for (device, key, event), (start, ns) in device_time.items():
        flops, nbytes, precision, source = costs[(key, event)]
        for k, v in (("name", out.intern(out.names, lines[key].name_of(event))),
                     ("device", out.intern(out.devices, device)), ("start_ns", start), ("duration_ns", ns),
                     ("flops", flops), ("model_flops", flops),
                     ("bytes", math.nan if nbytes is None else nbytes),
                     ("precision", PRECISIONS.index(precision)), ("source", SOURCES.index(source))):
            cols[k].append(v)
    out.add(**{k: np.array(v) for k, v in cols.items()})
