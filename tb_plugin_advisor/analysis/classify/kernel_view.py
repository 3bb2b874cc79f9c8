"""Applying the pattern tables (patterns.py) to a device's kernels, vectorised: one classification
per distinct kernel name, then numpy gathers per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.architectures import Architecture, architecture
from tb_plugin_advisor.analysis.classify.kernel_batch import classify_kernel_codes
from tb_plugin_advisor.analysis.classify.launching_ops import launching_ops
from tb_plugin_advisor.analysis.classify.patterns import (
    FAMILIES,
    MATRIX_FAMILIES,
    PRECISIONS,
    KernelClass,
    dtype_in_text,
    ops_eligible,
)
from tb_plugin_advisor.lookup import among, row_chunks, unique_codes

# Stats that name the op a kernel belongs to when neither `tf_op` nor `hlo_op` is recorded (older TF
# GPU profiles annotate kernels with `level 0` = "scope/op:Type").
OP_NAME_LINE_STATS = ("level 0",)


@dataclass
class KernelView:
    """Per-kernel numpy columns derived from the tables for one device.

    `precision` indexes PRECISIONS, `family` indexes FAMILIES; `op` indexes `op_labels` (-1: no op
    recorded); `compute` is False for collectives and runtime copies.
    """

    arch: Architecture
    duration_ns: np.ndarray
    name_index: np.ndarray
    names: List[str]
    class_of: np.ndarray  # per name index: its class's position in `class_list` (-1: name not used)
    class_list: List[KernelClass]  # the distinct classes (shared objects: few, whatever the names)
    precision: np.ndarray
    family: np.ndarray
    tensor_cores: np.ndarray
    compute: np.ndarray
    op: np.ndarray
    op_labels: List[str]
    op_eligible: np.ndarray
    eligible: np.ndarray
    precision_from_shape: int  # how many kernels got their precision from a `shape` stat

    def __len__(self) -> int:
        return int(self.duration_ns.shape[0])


def line_stat_strings(device, stat: str, rows: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
    """String ids (into the plane's `strings`) of a string stat for kernel rows, -1 where absent.

    The KernelTable keeps only the common annotation columns; other stats (`shape`, `level 0`) stay
    on the plane's lines. Kernels are found on their line by start time (lines are sorted by start).
    Returns None when no line of the device carries the stat.
    """
    table = device.kernels
    rows = np.arange(len(table)) if rows is None else np.asarray(rows, dtype=np.int64)
    out = np.full(rows.shape[0], -1, dtype=np.int64)
    found = False
    line_of = table.line_index[rows]
    for line_index in unique_codes(line_of).tolist():
        line = device.plane.lines[int(line_index)]
        column = line.stats.get(stat)
        if column is None or column.kind != "str" or len(line) == 0:
            continue
        found = True
        sel = np.nonzero(line_of == line_index)[0]
        starts = table.start_ns[rows[sel]]
        pos = np.clip(np.searchsorted(line.start_ns, starts), 0, len(line) - 1)
        same = (line.start_ns[pos] == starts) & (line.metadata_index[pos] == table.name_index[rows[sel]])
        values, present = column.at(pos)  # (no dense copy of the line's column, kept with it)
        out[sel] = np.where(same & present, values, -1)
    return out if found else None


def _op_columns(device, count: int):
    """Op label per kernel: `hlo_module/hlo_op` (XLA), else `tf_op`, else the PyTorch op that launched
    it, else an older `level 0` stat."""
    table = device.kernels
    strings = table.strings
    n_strings = len(strings) + 1
    op = np.full(count, -1, dtype=np.int32)  # (labels are distinct ops: far fewer than 2**31)
    labels: List[str] = []
    eligible: List[bool] = []

    def add(mask: np.ndarray, keys_of, label_of) -> None:
        """Label the kernels in `mask`; `keys_of(rows)`: the keys of rows (a slice of the table). The
        keys are found, then coded, a chunk of rows at a time (lookup.row_chunks): at once, their
        ranks and temporaries were 16 MB of a 100 MB profile's analysis peak."""
        parts = [(part, chosen) for part in row_chunks(count) if (chosen := mask[part]).any()]
        if not parts:
            return
        unique = unique_codes(np.concatenate([unique_codes(keys_of(part)[chosen]) for part, chosen in parts]))
        base = len(labels)
        made = [label_of(key) for key in unique.tolist()]
        labels.extend(label for label, _ in made)
        eligible.extend(ops_eligible([name for _, name in made]))  # the HLO op's or the TF op's name
        for part, chosen in parts:
            op[part][chosen] = base + np.searchsorted(unique, keys_of(part)[chosen])

    def hlo_label(key: int):
        hlo, module = divmod(key, n_strings)
        hlo_name = strings[hlo]
        label = f"{strings[module - 1]}/{hlo_name}" if module > 0 else hlo_name
        return label, hlo_name

    has_hlo = table.hlo_op >= 0
    add(has_hlo, lambda rows: table.hlo_op[rows].astype(np.int64) * n_strings + (table.hlo_module[rows] + 1),
        hlo_label)
    has_tf = ~has_hlo & (table.tf_op >= 0)
    add(has_tf, lambda rows: table.tf_op[rows], lambda key: (strings[key], strings[key]))
    launched = launching_ops(device)
    if launched is not None:  # PyTorch: the aten op that launched the kernel
        per_kernel, op_names = launched
        add((op < 0) & (per_kernel >= 0), per_kernel.__getitem__, lambda key: (op_names[key], op_names[key]))
    rest = op < 0
    if rest.any():
        for stat in OP_NAME_LINE_STATS:
            ids = line_stat_strings(device, stat, np.nonzero(rest)[0])
            if ids is None:
                continue
            keys = np.full(count, -1, dtype=np.int64)
            keys[np.nonzero(rest)[0]] = ids
            add(rest & (keys >= 0), keys.__getitem__, lambda key: (strings[key], strings[key]))
            rest = op < 0
    return op, labels, np.array(eligible, dtype=bool)


def kernel_view(device) -> KernelView:
    """Classify every kernel of one device: each distinct name once, then numpy gathers.

    Six analyses ask for it; it is built once per device and its columns are read-only.
    """
    view = device.derived.get("kernel_view")
    if view is None:
        view = device.derived["kernel_view"] = _build_view(device)
    return view


def used_kernel_names(device) -> Tuple[np.ndarray, List[str]]:
    """The codes of the names a device's kernels use (ascending) and those names: the table's own list
    when every name is used (the usual case), else a list made once per device. One list, so that the
    name batch classify_kernels builds over it (prefilter.text_batch knows a list by its identity) is
    the one the breakdown reads again: two batches of 600,000 names were 60 MB."""
    found = device.derived.get("used_kernel_names")
    if found is None:
        table = device.kernels
        names = table.names
        used = unique_codes(table.name_index) if len(table) else np.zeros(0, dtype=np.int64)
        listed = names if used.size == len(names) else [names[i] for i in used.tolist()]
        found = device.derived["used_kernel_names"] = (used, listed)
    return found


def _build_view(device) -> KernelView:
    table = device.kernels
    arch = architecture(device.vendor, device.model, device.compute_capability, device.kind)
    count = len(table)
    names = table.names
    used, listed = used_kernel_names(device)
    codes, classes = classify_kernel_codes(listed)  # aligned with `used`: a few distinct classes
    size = len(names) + 1
    prec_of = np.full(size, PRECISIONS.index("unknown"), dtype=np.int8)
    fam_of = np.full(size, FAMILIES.index("other"), dtype=np.int8)
    tc_of = np.zeros(size, dtype=bool)
    class_of = np.full(size, -1, dtype=np.int32)
    class_list: List[KernelClass] = []
    if codes.size:  # each distinct class resolved once
        class_list = classes
        class_of[used] = codes
        of_rows = codes
        prec_of[used] = np.array([PRECISIONS.index(c.precision) for c in class_list], dtype=np.int8)[of_rows]
        fam_of[used] = np.array([FAMILIES.index(c.family) for c in class_list], dtype=np.int8)[of_rows]
        tc_of[used] = np.array([c.uses_tensor_cores(arch) for c in class_list], dtype=bool)[of_rows]
    name_index = table.name_index
    precision = prec_of[name_index]
    family = fam_of[name_index]
    tensor_cores = tc_of[name_index]
    compute = (family != FAMILIES.index("comm")) & (family != FAMILIES.index("copy"))

    # Kernels whose name has no type: TF's `shape` stat lists the op's input types.
    from_shape = 0
    unknown = np.nonzero(compute & (precision == PRECISIONS.index("unknown")))[0]
    if unknown.size:
        shape_ids = line_stat_strings(device, "shape", unknown)
        if shape_ids is not None:
            known = shape_ids >= 0
            distinct = unique_codes(shape_ids[known]).tolist()
            code_of = {s: PRECISIONS.index(dtype_in_text(table.strings[s])[0]) for s in distinct}
            if distinct:
                lookup_keys = np.array(distinct, dtype=np.int64)
                lookup_vals = np.array([code_of[s] for s in distinct], dtype=np.int8)
                rows = unknown[known]
                codes = lookup_vals[np.searchsorted(lookup_keys, shape_ids[known])]
                precision[rows] = codes
                from_shape = int((codes != PRECISIONS.index("unknown")).sum())
                # A kernel that may use Tensor Cores only for low-precision inputs follows its new type
                # (that verdict depends on the precision alone: one answer per precision code).
                follows = [k for k, cls in enumerate(class_list) if cls.tensor_cores == "if_low_precision"]
                if follows:
                    resolver = class_list[follows[0]]
                    by_code = np.array([resolver.uses_tensor_cores(arch, p) for p in PRECISIONS], dtype=bool)
                    low_of = np.isin(class_of, follows)  # per name: its class follows the precision
                    sel = rows[low_of[name_index[rows]]]
                    tensor_cores[sel] = by_code[precision[sel]]

    op, op_labels, op_eligible = _op_columns(device, count)
    matrix = among(family, [FAMILIES.index(f) for f in MATRIX_FAMILIES])
    op_ok = np.zeros(count, dtype=bool)
    has_op = op >= 0
    if op_eligible.size:
        op_ok[has_op] = op_eligible[op[has_op]]
    eligible = compute & (matrix | op_ok)
    if arch.matrix_ops_always:
        tensor_cores = eligible.copy()
    columns = [precision, family, tensor_cores & compute, compute, op, op_eligible, eligible]
    for column in columns:
        column.flags.writeable = False
    precision, family, tensor_cores, compute, op, op_eligible, eligible = columns
    return KernelView(
        arch=arch, duration_ns=table.duration_ns, name_index=name_index, names=names,
        class_of=class_of, class_list=class_list,
        precision=precision, family=family, tensor_cores=tensor_cores, compute=compute, op=op,
        op_labels=op_labels, op_eligible=op_eligible, eligible=eligible, precision_from_shape=from_shape,
    )
