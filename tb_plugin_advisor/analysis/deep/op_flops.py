"""FLOPs and bytes of each executed op, as the roofline needs them: from the profile, else from shapes.

XSpace (TF/JAX on XLA): the op events of an XLA device carry XLA's cost analysis as stats — `flops`
(what the hardware executes), `model_flops` (without rematerialisation and padding: what MFU counts)
and `bytes_accessed` — directly or through their event metadata; each such kernel row is one op.

Kineto (PyTorch): `flops` is an arg of some aten ops when the profiler ran with with_flops=True; with
record_shapes=True every op names its inputs' `Input Dims` and `Input type`, from which shape_flops.py
computes FLOPs and bytes. Ops nest (aten::conv2d > aten::convolution > aten::_convolution >
aten::cudnn_convolution; aten::linear > aten::addmm), so each microsecond is costed once: the owner of
an event is its outermost ancestor (or itself) that a rule costs — a `flops` arg or a shape rule, the
`flops` arg first — and nothing inside an owner is costed again. An owner's precision is the narrowest
of the matrix ops inside it (autocast casts inside aten::linear, whose own inputs are still fp32).
Its device time is the time of every kernel launched inside it (kernels name their op by
`External id`); its host time (`host_ns`, when it was issued) puts it in a step.

Device time no rule costs is kept too, as rows of source "none" named after the op that launched the
kernels: the roofline lists them and says which share of compute time its MFU covers. A profile
without an accelerator (PyTorch on the CPU) is costed by the ops' own host time instead: each
outermost aten op is a row, a costed owner with its wall time, an uncosted one with its time outside
costed ops.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.event_names import TORCH_ATEN_OP
from tb_plugin_advisor.analysis.classify.kernel_view import kernel_view
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.classify.torch_names import TORCH_NAMES
from tb_plugin_advisor.analysis.deep.shape_flops import (
    CONV_FORWARD,
    CONV_GRADIENT_CHILDREN,
    has_rule,
    shape_cost,
)
from tb_plugin_advisor.analysis.precision.cpu_torch import precision_of_input_types
from tb_plugin_advisor.lookup import unique_codes, unique_inverse
from tb_plugin_advisor.model import Device, Line, Profile

# Where an op's FLOPs come from; "none": device (or, on a CPU, op) time that no rule costs.
SOURCES = ("profile", "shapes", "none")
UNCOSTED = SOURCES.index("none")
FP32, TF32 = PRECISIONS.index("fp32"), PRECISIONS.index("tf32")
XLA_FLOPS, XLA_MODEL_FLOPS, XLA_BYTES = "flops", "model_flops", "bytes_accessed"
TORCH_FLOPS = "flops"
PRECISION_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
NO_HOST_OP = "(kernels whose host op was not recorded)"
# Events after a convolution searched for one whose input is the convolution's output (its size
# when the trace records no stride): the batch norm or activation that follows comes first.
NEXT_OP_LOOKAHEAD = 8
# Events the walk turns into Python values at a time: its per-event lists are this long, not as long
# as a line of a million events.
WALK_BLOCK = 1 << 16


class OpCost(NamedTuple):
    """One executed op on one device (the slow path: OpCosts.rows(), for tests and small traces)."""

    name: str
    device: str
    start_ns: int
    end_ns: int  # the end of its last kernel (of the op itself on a CPU)
    duration_ns: int  # device time (the sum of its kernels' durations for PyTorch)
    host_ns: int  # when it was issued (the host op's start; -1 unknown): what step it belongs to
    flops: float
    model_flops: float  # = flops unless the profile records model FLOPs apart
    bytes: Optional[float]
    precision: str
    source: str
    calls: int  # op instances the row stands for (the row of kernels without a host op: those kernels)


@dataclass
class OpCosts:
    """Every op as columns: a TPU profile costs every op event, a million of them in a long capture, so
    no Python object per op. `name` indexes `names`, `device` indexes `devices`, `precision`
    PRECISIONS, `source` SOURCES; `bytes` is NaN where unknown. `on_host`: the rows are host ops of a
    profile without device kernels (their time is CPU time)."""

    names: List[str]
    devices: List[str]
    name: np.ndarray
    device: np.ndarray
    start_ns: np.ndarray
    end_ns: np.ndarray
    duration_ns: np.ndarray
    host_ns: np.ndarray
    flops: np.ndarray
    model_flops: np.ndarray
    bytes: np.ndarray
    precision: np.ndarray
    source: np.ndarray
    calls: np.ndarray  # op instances a row stands for: 1, but the kernels whose host op was not recorded
    on_host: bool = False

    def __len__(self) -> int:
        return int(self.start_ns.shape[0])

    @property
    def costed(self) -> np.ndarray:
        """Rows whose FLOPs are known (the others are time no rule costs)."""
        return self.source != UNCOSTED

    def rows(self) -> List[OpCost]:
        return [OpCost(self.names[n], self.devices[d], s, e, t, h, f, m, None if math.isnan(b) else b,
                       PRECISIONS[p], SOURCES[o], c)
                for n, d, s, e, t, h, f, m, b, p, o, c in zip(*(getattr(self, k).tolist() for k in _FIELDS))]


_FIELDS = {"name": np.int32, "device": np.int32, "start_ns": np.int64, "end_ns": np.int64,
           "duration_ns": np.int64, "host_ns": np.int64, "flops": np.float64, "model_flops": np.float64,
           "bytes": np.float64, "precision": np.int8, "source": np.int8, "calls": np.int32}


class _Columns:
    """Accumulates column pieces and interns names/devices while the readers' tables are walked."""

    def __init__(self) -> None:
        self.names: Dict[str, int] = {}
        self.devices: Dict[str, int] = {}
        self.pieces: Dict[str, List[np.ndarray]] = {k: [] for k in _FIELDS}

    def intern(self, table: Dict[str, int], key: str) -> int:
        return table.setdefault(key, len(table))

    def add(self, calls: Any = 1, **columns: Any) -> None:
        """Columns of one batch of rows; a scalar stands for the same value on every row."""
        columns["calls"] = calls
        sizes = [np.size(v) for v in columns.values() if np.ndim(v) > 0]
        size = max(sizes) if sizes else 1
        for k in _FIELDS:
            self.pieces[k].append(np.broadcast_to(np.asarray(columns[k], dtype=_FIELDS[k]), (size,)))

    def finish(self, on_host: bool = False) -> OpCosts:
        """The rows by start time. A column at a time, its pieces let go once it is made: all of them
        joined and then reordered at once were 130 MB for a million uncosted kernels."""
        starts = self._joined("start_ns")
        order = np.argsort(starts, kind="stable")
        cols = {"start_ns": starts[order]}
        del starts
        self.pieces["start_ns"].clear()
        for k in _FIELDS:
            if k != "start_ns":
                cols[k] = self._joined(k)[order]
                self.pieces[k].clear()
        return OpCosts(names=list(self.names), devices=list(self.devices), on_host=on_host, **cols)

    def _joined(self, field: str) -> np.ndarray:
        pieces = self.pieces[field]
        return np.concatenate(pieces) if pieces else np.zeros(0, _FIELDS[field])


def op_costs(profile: Profile) -> OpCosts:
    """Every op with a known FLOP count (or, for XLA, bytes) on every device of one host; for PyTorch
    also the device time no rule costs (source "none")."""
    out = _Columns()
    if profile.framework == "pytorch":
        return _torch_costs(profile, out)
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
        starts, durations = table.start_ns[rows], table.duration_ns[rows]
        out.add(name=ids[inverse.reshape(-1)], device=out.intern(out.devices, device.name),
                start_ns=starts, end_ns=starts + durations, duration_ns=durations, host_ns=starts,
                flops=flops, model_flops=np.where(np.isnan(model), flops, model), bytes=nbytes,
                precision=view.precision[rows], source=SOURCES.index("profile"))


# ---------------------------------------------------------------------------------------------------
# PyTorch: Kineto `flops`, or FLOPs from `Input Dims`


@dataclass(slots=True)
class _Owner:
    """A costed op while the host lines are walked (one per costed op: slots, and its gradients as
    bits rather than a set of its own)."""

    name: str
    start: int
    end: int
    flops: float
    elements: Optional[float]
    precision: str
    source: str
    per_gradient: float = 0.0  # a convolution backward without output_mask: FLOPs of one gradient
    gradients: int = 0  # the gradients its child ops compute: bit g for CONV_GRADIENT_CHILDREN's g

    def final_flops(self) -> float:
        if self.per_gradient and self.gradients:
            return self.per_gradient * self.gradients.bit_count()
        return self.flops

    def bytes(self) -> float:
        width = PRECISION_BYTES.get(self.precision)
        return self.elements * width if self.elements is not None and width else math.nan


def _width(precision: Optional[str]) -> int:
    return PRECISION_BYTES.get(precision or "", 99)


class _LineView:
    """The stats of one host line that the walk reads, fetched once (strings parsed on demand)."""

    def __init__(self, line: Line) -> None:
        self.line = line
        self.names = line.plane.event_names
        self.meta = line.metadata_index
        self.ends = line.start_ns + line.duration_ns
        stats = line.stats
        self.dims = line.stat_strings("input_dims") if "input_dims" in stats else None
        self.types = line.stat_strings("input_type") if "input_type" in stats else None
        self.concrete = line.stat_strings("concrete_inputs") if "concrete_inputs" in stats else None
        self.profile_flops = _positive(line, TORCH_FLOPS)
        self.sequence = _ints(line, "sequence_number")
        self.external = _ints(line, "external_id")
        correlation = stats.get("correlation_id")
        self.runtime = correlation.present if correlation is not None else np.zeros(len(line), dtype=bool)
        self.candidate = line.name_mask(has_rule) | (self.profile_flops > 0)
        self.conv_forward = line.name_mask(CONV_FORWARD.__contains__)
        self.aten = line.name_mask(lambda n: bool(TORCH_ATEN_OP.compiled.match(n)))
        self.gradient = line.name_mask(lambda n: n.endswith(tuple(CONV_GRADIENT_CHILDREN)))

    def events(self, on_host: bool) -> np.ndarray:
        """The events the walk needs (in start order): ops a rule may cost, events that launch work
        (an `External id`), gradient children, and on a CPU every aten op. Containment among them is
        the same as among all events, so Python frames and annotations are skipped."""
        keep = self.candidate | (self.external >= 0) | self.gradient
        return np.flatnonzero(keep | self.aten if on_host else keep)

    def name(self, i: int) -> str:
        return self.names[int(self.meta[i])]

    def dims_at(self, i: int) -> Optional[List[Any]]:
        return _parse(self.dims[i]) if self.dims is not None else None

    def concrete_at(self, i: int) -> Optional[List[str]]:
        value = _parse(self.concrete[i]) if self.concrete is not None else None
        return [str(v) for v in value] if value else None

    def precision_at(self, i: int) -> Optional[str]:
        return precision_of_input_types(self.types[i]) if self.types is not None else None


PARSED_CACHE_SIZE = 100_000  # distinct `Input Dims` / `Concrete Inputs` texts kept parsed
_PARSED: Dict[str, Optional[List[Any]]] = {}


def _parse(text: Optional[str]) -> Optional[List[Any]]:
    """A JSON list arg (`Input Dims`, `Concrete Inputs`), parsed once per distinct text."""
    if not text:
        return None
    found = _PARSED.get(text, _PARSED)
    if found is not _PARSED:
        return found  # type: ignore[return-value]
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    parsed = value if isinstance(value, list) else None
    if len(_PARSED) > PARSED_CACHE_SIZE:
        _PARSED.clear()
    _PARSED[text] = parsed
    return parsed


def _positive(line: Line, stat: str) -> np.ndarray:
    """A numeric stat per event, 0 where absent, negative or not finite (read only: a line without
    the stat gets one zero seen at every event, not a column of them)."""
    column = line.stats.get(stat)
    if column is None or column.kind == "str":
        return np.broadcast_to(np.float64(0.0), (len(line),))
    out = np.zeros(len(line))
    values = column.data.astype(np.float64)
    good = np.isfinite(values) & (values > 0)
    out[column.indices[good]] = values[good]
    return out


def _ints(line: Line, stat: str) -> np.ndarray:
    """An integer stat per event, -1 where absent (or not a finite number); read only, and one -1
    seen at every event for a line without the stat."""
    column = line.stats.get(stat)
    if column is None or column.kind == "str":
        return np.broadcast_to(np.int64(-1), (len(line),))
    out = np.full(len(line), -1, dtype=np.int64)
    data = column.data
    good = np.isfinite(data) if data.dtype.kind == "f" else np.ones(data.shape, dtype=bool)
    out[column.indices[good]] = data[good].astype(np.int64)
    return out


def _conv_output_hints(profile: Profile) -> Dict[int, List[int]]:
    """Sequence number → grad_output shape of each convolution's autograd node: the forward's output
    shape (the node's `Sequence number` is the forward op's)."""
    hints: Dict[int, List[int]] = {}
    for plane in profile.host_planes:
        for line in plane.lines:
            if "sequence_number" not in line.stats or "input_dims" not in line.stats or not len(line):
                continue
            nodes = np.flatnonzero(line.name_mask(_is_conv_backward_node))
            if not nodes.size:
                continue
            for i in nodes.tolist():
                seq, dims = line.stat_value("sequence_number", i), _parse(line.stat_value("input_dims", i))
                if isinstance(seq, int) and dims and isinstance(dims[0], list) and len(dims[0]) >= 3:
                    hints[seq] = dims[0]
    return hints


class _TorchWalk:
    """One walk over the host lines: the owners (costed ops) and what each external id maps to."""

    def __init__(self, profile: Profile, on_host: bool) -> None:
        self.hints = _conv_output_hints(profile)
        self.on_host = on_host
        self.owners: List[_Owner] = []
        self.owner_of: Dict[int, int] = {}  # external id → owner
        # The op that launched each external id (its name and start: uncosted time), as columns per
        # line walked (external id, start, name code: the order of launch_code); the last event of
        # an id walked is its launcher. Every launching event has one, so these are never Python
        # objects per event.
        self._launch_parts: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.launch_code: Dict[str, int] = {}
        self._launches: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None
        # CPU only: (plane, name, start, end, ns outside costed ops, owner or -1)
        self.host_rows: List[Tuple[str, str, int, int, int, int]] = []

    def walk(self, plane_name: str, line: Line) -> None:
        view = _LineView(line)
        events = view.events(self.on_host)
        self._note_launches(view, events)
        stack: List[Tuple[int, int, int]] = []  # (end, owner or -1, outermost op row or -1)
        for begin in range(0, events.size, WALK_BLOCK):
            self._walk_block(plane_name, view, events[begin:begin + WALK_BLOCK], stack)

    def _walk_block(self, plane_name: str, view: _LineView, events: np.ndarray,
                    stack: List[Tuple[int, int, int]]) -> None:
        """Events of one line in start order, with the stack of those still open before them."""
        line = view.line
        for i, start, end, candidate, aten, ext in zip(
                events.tolist(), line.start_ns[events].tolist(), view.ends[events].tolist(),
                view.candidate[events].tolist(), view.aten[events].tolist(), view.external[events].tolist()):
            while stack and stack[-1][0] <= start:
                stack.pop()
            owner, outer = (stack[-1][1], stack[-1][2]) if stack else (-1, -1)
            if owner < 0 and candidate:
                owner = self._own(view, i)
                if owner >= 0 and self.on_host:
                    self._host_row(plane_name, view.name(i), start, end, owner, outer)
            elif owner >= 0:
                self._refine(self.owners[owner], view, i)
            if self.on_host and owner < 0 and outer < 0 and aten:
                outer = self._host_row(plane_name, view.name(i), start, end, -1, -1)
            stack.append((end, owner, outer))
            if ext >= 0 and owner >= 0:
                self.owner_of[ext] = owner

    def _note_launches(self, view: _LineView, events: np.ndarray) -> None:
        """Each walked event with an external id that is not a runtime call launches that id's work."""
        rows = events[(view.external[events] >= 0) & ~view.runtime[events]]
        if not rows.size:
            return
        metas, which = unique_inverse(view.meta[rows])
        codes = np.array([self.launch_code.setdefault(view.names[int(m)], len(self.launch_code))
                          for m in metas.tolist()], dtype=np.int64)
        starts = view.line.start_ns[rows].astype(np.int64, copy=False)
        self._launch_parts.append((view.external[rows], starts, codes[which]))
        self._launches = None

    def launches(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(external ids sorted, each one's launcher's start, its name code): the last walked of an id."""
        if self._launches is None:
            if not self._launch_parts:
                empty = np.zeros(0, dtype=np.int64)
                self._launches = (empty, empty, empty)
            else:
                ids, starts, codes = (np.concatenate(c) for c in zip(*self._launch_parts))
                order = np.argsort(ids, kind="stable")
                last = np.ones(order.size, dtype=bool)
                last[:-1] = ids[order[1:]] != ids[order[:-1]]
                keep = order[last]
                self._launches = (ids[keep], starts[keep], codes[keep])
        return self._launches

    def launcher_rows(self, ext: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(whether a walked op launched it, its row in `launches()`) per external id."""
        ids = self.launches()[0]
        if not ids.size:
            return np.zeros(ext.size, dtype=bool), np.zeros(ext.size, dtype=np.int64)
        pos = np.clip(np.searchsorted(ids, ext), 0, ids.size - 1)
        return ids[pos] == ext, pos

    def _own(self, view: _LineView, i: int) -> int:
        """Cost event i; its owner index, or -1 when nothing costs it."""
        name = view.name(i)
        precision = view.precision_at(i) or "unknown"
        dims = view.dims_at(i) or []
        concrete = view.concrete_at(i)
        shaped = shape_cost(name, dims, concrete) if dims else None
        if shaped is None and dims and view.conv_forward[i]:
            shaped = shape_cost(name, dims, concrete, self._output_hint(view, i, dims))
        flops = float(view.profile_flops[i])
        start, end = int(view.line.start_ns[i]), int(view.ends[i])
        if flops > 0:
            owner = _Owner(name, start, end, flops, shaped.elements if shaped else None, precision, "profile")
        elif shaped is not None and shaped.flops > 0:
            owner = _Owner(name, start, end, shaped.flops, shaped.elements, precision, "shapes",
                           per_gradient=shaped.per_gradient)
        else:
            return -1
        self.owners.append(owner)
        return len(self.owners) - 1

    def _refine(self, owner: _Owner, view: _LineView, i: int) -> None:
        """An event inside an owner: a ruled op's narrower precision (autocast) and, for a convolution
        backward without output_mask, which gradient the event computes."""
        if view.candidate[i]:
            precision = view.precision_at(i)
            if precision and _width(precision) < _width(owner.precision):
                owner.precision = precision
        if owner.per_gradient and view.gradient[i]:
            name = view.name(i)
            for suffix, g in CONV_GRADIENT_CHILDREN.items():
                if name.endswith(suffix):
                    owner.gradients |= 1 << g

    def _output_hint(self, view: _LineView, i: int, dims: List[Any]) -> Optional[List[int]]:
        """A convolution's output shape when no stride is recorded: its autograd node's grad_output,
        else the input of the op that follows it on its thread."""
        x, w = dims[0], dims[1] if len(dims) > 1 else None
        if not isinstance(x, list) or not isinstance(w, list) or not x or not w:
            return None
        hint = self.hints.get(int(view.sequence[i]))
        if hint is not None and len(hint) == len(x) and hint[:2] == [x[0], w[0]]:
            return hint
        j = int(np.searchsorted(view.line.start_ns, view.ends[i], side="left"))
        for k in range(j, min(j + NEXT_OP_LOOKAHEAD, len(view.line))):
            following = view.dims_at(k)
            first = following[0] if following else None
            if isinstance(first, list) and len(first) == len(x) and first[:2] == [x[0], w[0]]:
                return first
        return None

    def _host_row(self, plane: str, name: str, start: int, end: int, owner: int, outer: int) -> int:
        """A CPU row: a costed owner, or an outermost op (its time outside costed ops)."""
        if owner >= 0 and outer >= 0:
            row = self.host_rows[outer]
            self.host_rows[outer] = row[:4] + (row[4] - (end - start),) + row[5:]
        self.host_rows.append((plane, name, start, end, end - start, owner))
        return len(self.host_rows) - 1


def _torch_costs(profile: Profile, out: _Columns) -> OpCosts:
    # CPU only: no accelerator at all. A GPU trace that recorded no kernels (CPU activity only: its
    # deviceProperties still list the GPUs) has no device time to cost, and its host op times are
    # launch times, not compute.
    on_host = not profile.devices and not profile.properties.get("device_properties")
    if not on_host and not any(len(device.kernels) for device in profile.devices):
        return out.finish(on_host=on_host)  # no device time to cost: the walk would find nothing to keep
    walk = _TorchWalk(profile, on_host)
    for plane in profile.host_planes:
        for line in plane.lines:
            if len(line) and ({"input_dims", TORCH_FLOPS, "external_id"} & set(line.stats)):
                walk.walk(plane.name, line)
    if on_host:
        _host_columns(walk, out)
    else:
        for device in profile.devices:
            if len(device.kernels):
                _device_columns(walk, device, out)
    return out.finish(on_host=on_host)


def _owner_columns(walk: _TorchWalk, owners: np.ndarray, out: _Columns) -> Dict[str, np.ndarray]:
    """Name, FLOPs, bytes, precision, source and issue time of the given owners."""
    picked = [walk.owners[o] for o in owners.tolist()]
    flops = np.array([o.final_flops() for o in picked], dtype=np.float64)
    return {"name": np.array([out.intern(out.names, o.name) for o in picked], dtype=np.int32),
            "host_ns": np.array([o.start for o in picked], dtype=np.int64), "flops": flops,
            "model_flops": flops, "bytes": np.array([o.bytes() for o in picked], dtype=np.float64),
            "precision": np.array([PRECISIONS.index(o.precision) for o in picked], dtype=np.int8),
            "source": np.array([SOURCES.index(o.source) for o in picked], dtype=np.int8)}


def _host_columns(walk: _TorchWalk, out: _Columns) -> None:
    """CPU-only: one row per costed owner and per outermost uncosted op, timed by the host."""
    if not walk.host_rows:
        return
    plane, name, start, end, ns, owner = (list(c) for c in zip(*walk.host_rows))
    owner_a = np.array(owner, dtype=np.int64)
    costed = owner_a >= 0
    cols = {"name": np.array([out.intern(out.names, n) for n in name], dtype=np.int32),
            "device": np.array([out.intern(out.devices, p) for p in plane], dtype=np.int32),
            "start_ns": np.array(start, dtype=np.int64), "end_ns": np.array(end, dtype=np.int64),
            "duration_ns": np.maximum(np.array(ns, dtype=np.int64), 0),
            "host_ns": np.array(start, dtype=np.int64), "flops": np.zeros(len(name)),
            "model_flops": np.zeros(len(name)), "bytes": np.full(len(name), math.nan),
            "precision": np.full(len(name), PRECISIONS.index("unknown"), dtype=np.int8),
            "source": np.full(len(name), UNCOSTED, dtype=np.int8)}
    if costed.any():
        for key, values in _owner_columns(walk, owner_a[costed], out).items():
            if key != "host_ns":
                cols[key][costed] = values
    out.add(**cols)


def _kernel_external_ids(device: Device) -> np.ndarray:
    """The `External id` of each kernel row of the device (-1 where none)."""
    table = device.kernels
    ext = np.full(len(table), -1, dtype=np.int64)
    for line_index in unique_codes(table.line_index).tolist():
        line = device.plane.lines[int(line_index)]
        column = line.stats.get("external_id")
        if column is None or column.kind == "str" or not len(line):
            continue
        rows = np.flatnonzero(table.line_index == line_index)
        pos = np.clip(np.searchsorted(line.start_ns, table.start_ns[rows]), 0, len(line) - 1)
        ok = (line.start_ns[pos] == table.start_ns[rows]) & column.present[pos]
        ok &= line.metadata_index[pos] == table.name_index[rows]
        ext[rows[ok]] = column.values[pos[ok]].astype(np.int64)
    return ext


def _spans(keys: np.ndarray, starts: np.ndarray, ends: np.ndarray, durations: np.ndarray
           ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key: first start, last end, summed duration."""
    unique, group = unique_inverse(keys)
    first = np.full(unique.size, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(unique.size, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(first, group, starts)
    np.maximum.at(last, group, ends)
    total = np.bincount(group, weights=durations.astype(np.float64), minlength=unique.size)
    return unique, first, last, total.astype(np.int64)


def _device_columns(walk: _TorchWalk, device: Device, out: _Columns) -> None:
    """One row per costed owner (its kernels on this device) and per uncosted op instance."""
    table = device.kernels
    ext = _kernel_external_ids(device)
    starts = table.start_ns.astype(np.int64)
    ends = starts + table.duration_ns
    owned_ext = np.array(sorted(walk.owner_of), dtype=np.int64)
    owner_of_row = np.full(len(table), -1, dtype=np.int64)
    if owned_ext.size:
        pos = np.clip(np.searchsorted(owned_ext, ext), 0, owned_ext.size - 1)
        hit = (ext >= 0) & (owned_ext[pos] == ext)
        owners = np.array([walk.owner_of[int(e)] for e in owned_ext.tolist()], dtype=np.int64)
        owner_of_row[hit] = owners[pos[hit]]
    device_id = out.intern(out.devices, device.name)
    view = kernel_view(device)
    rows = np.flatnonzero(owner_of_row >= 0)
    if rows.size:
        owners, first, last, total = _spans(owner_of_row[rows], starts[rows], ends[rows],
                                            table.duration_ns[rows])
        columns = _owner_columns(walk, owners, out)
        _tf32_from_kernels(columns, owners, owner_of_row[rows], view.precision[rows], table.duration_ns[rows],
                           total)
        out.add(device=device_id, start_ns=first, end_ns=last, duration_ns=total, **columns)
    _uncosted_columns(walk, ext, (owner_of_row < 0) & view.compute, table, device_id, out)


def _tf32_from_kernels(columns: Dict[str, np.ndarray], owners: np.ndarray, owner_of_row: np.ndarray,
                       precision: np.ndarray, durations: np.ndarray, total: np.ndarray) -> None:
    """An fp32 op whose kernels spend most of its time in TF32 ran as TF32: a math mode, not a dtype,
    so `Input type` cannot say it (cuDNN convolutions use TF32 by default since PyTorch 1.7)."""
    group = np.searchsorted(owners, owner_of_row)
    tf32 = np.bincount(group, weights=np.where(precision == TF32, durations, 0).astype(np.float64),
                       minlength=owners.size)
    ran_tf32 = (columns["precision"] == FP32) & (tf32 * 2 > total)
    columns["precision"][ran_tf32] = TF32


def _uncosted_columns(walk: _TorchWalk, ext: np.ndarray, mask: np.ndarray, table, device_id: int,
                      out: _Columns) -> None:
    """Compute kernels no owner holds: one row per launching op instance, and one for all the kernels
    whose host op was not recorded (a row per such kernel was 70 bytes each for a million of them;
    issued at no known time, they belong to no step, and the roofline reads only their time and
    count)."""
    rows = np.flatnonzero(mask)
    if not rows.size:
        return
    known, _ = walk.launcher_rows(ext[rows])
    orphans = rows[~known]
    if orphans.size:
        starts = table.start_ns[orphans].astype(np.int64)
        durations = table.duration_ns[orphans]
        out.add(name=out.intern(out.names, NO_HOST_OP), device=device_id, start_ns=starts.min(),
                end_ns=(starts + durations).max(), duration_ns=durations.sum(dtype=np.int64),
                host_ns=-1, flops=0.0, model_flops=0.0, bytes=math.nan,
                precision=PRECISIONS.index("unknown"), source=UNCOSTED, calls=orphans.size)
        del starts, durations
    rows = rows[known]
    if not rows.size:
        return
    starts = table.start_ns[rows].astype(np.int64)
    durations = table.duration_ns[rows]
    unique, first, last, total = _spans(ext[rows], starts, starts + durations, durations)
    _, at = walk.launcher_rows(unique)
    _, launch_ns, launch_code = walk.launches()
    launch_names = list(walk.launch_code)
    # each row's launching op's name, interned once per distinct name, in the order the rows first name
    # it (as interning row by row would)
    distinct, seen_at, inverse = np.unique(launch_code[at], return_index=True, return_inverse=True)
    ids = np.empty(distinct.size, dtype=np.int32)
    for k in np.argsort(seen_at, kind="stable").tolist():
        ids[k] = out.intern(out.names, launch_names[int(distinct[k])])
    out.add(name=ids[inverse.reshape(-1)], device=device_id,
            start_ns=first, end_ns=last, duration_ns=total,
            host_ns=launch_ns[at], flops=0.0, model_flops=0.0,
            bytes=math.nan, precision=PRECISIONS.index("unknown"), source=UNCOSTED)


def _is_conv_backward_node(name: str) -> bool:
    return bool(TORCH_NAMES["conv_backward_node"].search(name))
