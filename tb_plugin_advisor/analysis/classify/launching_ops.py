"""Which host op launched each kernel of a PyTorch trace, so kernel time is shown under the op a user
wrote (`aten::conv2d`, `aten::linear`, `aten::convolution_backward`) instead of a template signature.

Kineto links them: a kernel carries the `correlation` id of the runtime call that launched it
(`cudaLaunchKernel`, `hipLaunchKernel`, `cudaMemcpyAsync`), and that call runs inside the ops of one
host thread. The label is the outermost `aten::` op enclosing the call: ops nest (`aten::conv2d` >
`aten::convolution` > … > `aten::cudnn_convolution`) and the outermost is the one a model's code
called. XSpace kernels name their op themselves (`tf_op`, `hlo_op`); this fills the same role for
Kineto and is read by classify/kernel_view.py and step_time/ops.py through `device.derived`.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.enclosing_ops import host_ops
from tb_plugin_advisor.model import Profile

DERIVED_KEY = "launching_ops"  # device.derived[...] = (label id per kernel, -1 where unknown; labels)


def launching_ops(device) -> Optional[Tuple[np.ndarray, List[str]]]:
    """(label id per kernel of `device`, labels), or None where no kernel was tied to an op."""
    return device.derived.get(DERIVED_KEY)


def attach_launching_ops(profile: Profile) -> None:
    """Tie every kernel of a PyTorch trace's devices to its launching op (see module docstring);
    other profiles are left as they are."""
    if profile.framework != "pytorch" or not any(len(d.kernels) for d in profile.devices):
        return
    correlations, labels = _runtime_calls_in_ops(profile)
    if correlations.size == 0:
        return
    order = np.argsort(correlations, kind="stable")
    correlations, label_ids = correlations[order], np.asarray(labels[0], dtype=np.int32)[order]
    for device in profile.devices:
        kernels = device.kernels
        if not len(kernels) or DERIVED_KEY in device.derived:
            continue
        wanted = kernels.correlation_id.astype(np.int64)
        at = np.clip(np.searchsorted(correlations, wanted), 0, correlations.size - 1)
        found = (correlations[at] == wanted) & (wanted >= 0)
        per_kernel = np.where(found, label_ids[at], -1).astype(np.int32)
        if (per_kernel >= 0).any():
            device.derived[DERIVED_KEY] = (per_kernel, labels[1])


def _runtime_calls_in_ops(profile: Profile) -> Tuple[np.ndarray, Tuple[List[int], List[str]]]:
    """(correlation id of every runtime call inside an op, (its op's label id, the labels))."""
    found_correlations: List[np.ndarray] = []
    found_labels: List[int] = []
    label_of: Dict[str, int] = {}
    for ops in host_ops(profile):
        column = ops.line.stats.get("correlation_id")
        if column is None or column.kind != "int":
            continue
        calls = column.indices
        outer = ops.outermost(ops.line.start_ns[calls])
        inside = outer >= 0
        if not inside.any():
            continue
        op_names = ops.line.metadata_index[ops.events[outer[inside]]]
        lookup = {m: label_of.setdefault(ops.plane.event_names[m], len(label_of))
                  for m in np.unique(op_names).tolist()}
        found_labels.extend(lookup[m] for m in op_names.tolist())
        found_correlations.append(column.data[inside].astype(np.int64))
    labels = [""] * len(label_of)
    for text, index in label_of.items():
        labels[index] = text
    correlations = np.concatenate(found_correlations) if found_correlations else np.zeros(0, np.int64)
    return correlations, (found_labels, labels)
