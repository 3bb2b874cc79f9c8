"""Profile-wide signals the recommendation rules need and no other analysis computes: which framework
wrote the profile, whether the step is compiled (tf.function / XLA), how many eager ops and kernels a
step runs, and CUPTI problems the profiler recorded. (Transposes and TF32 come from tensor_cores.py.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify.kernel_view import used_kernel_names
from tb_plugin_advisor.analysis.intervals import in_windows, outermost
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.lookup import sums_by_code
from tb_plugin_advisor.model import Profile


@dataclass
class Signals:
    """Facts about the run that the advice rules read (framework, device, launch pattern)."""

    framework: str = "unknown"  # tf | jax | pytorch | unknown
    device_kind: str = ""  # GPU | TPU | "" (CPU only)
    compute_capability: Optional[Tuple[int, int]] = None
    gpu_planes: int = 0
    active_devices: int = 0
    kernels_per_step: float = 0.0
    mean_kernel_us: float = 0.0
    median_kernel_us: float = 0.0
    host_offload_copy_pct: float = 0.0  # of device copy time: XLA copies to/from host memory (S(5))
    xla_compiled: bool = False
    eager_ops_per_step: float = 0.0
    compiled_step: bool = False
    cupti_problem: str = ""
    cupti_message: str = ""


def collect_signals(profile: Profile, steps: Steps, breakdown: Breakdown) -> Signals:
    lo = breakdown.window_start_ns[breakdown.steady]
    hi = breakdown.window_end_ns[breakdown.steady]
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    n = max(int(lo.size), 1)
    out = Signals(framework=_framework(profile))
    gpus = [d for d in profile.devices if d.kind == "gpu"]
    out.gpu_planes = len(gpus)
    active = [d for d in profile.devices if d.has_activity]
    out.active_devices = len(active)
    kinds = {d.kind for d in active} or {d.kind for d in profile.devices}
    out.device_kind = "GPU" if "gpu" in kinds else "TPU" if "tpu" in kinds else ("Device" if kinds else "")
    capabilities = sorted({d.compute_capability for d in gpus if d.compute_capability})
    out.compute_capability = capabilities[0] if capabilities else None
    _kernel_signals(profile, lo, hi, n, out)
    _host_signals(profile, steps, lo, hi, n, out)
    _cupti(profile, out)
    return out


def _framework(profile: Profile) -> str:
    if profile.framework:  # the reader knows (Kineto traces: "pytorch")
        return profile.framework
    tf = jax = False
    for plane in profile.host_planes:
        # one search per hint over all the names joined (no hint holds the separator)
        joined = "\n".join(plane.event_names)
        tf = tf or any(h in joined for h in names.TF_NAME_HINTS)
        jax = jax or any(h in joined for h in names.JAX_NAME_HINTS)
    if jax and not tf:
        return "jax"
    if tf:
        return "tf"
    for device in profile.devices:  # device-only evidence: TF annotates kernels with tf_op
        if len(device.kernels) and (device.kernels.tf_op >= 0).any():
            return "tf"
        if len(device.kernels) and (device.kernels.hlo_module >= 0).any():
            return "jax"
    return "unknown"


def _kernel_signals(profile: Profile, lo, hi, n: int, out: Signals) -> None:
    busiest_count, total_ns, total_count, module_ns = 0, 0, 0, 0
    durations_all = []
    for device in profile.devices:
        k = device.kernels
        if not len(k):
            continue
        inside = in_windows(lo, hi, k.start_ns) if lo.size else np.ones(len(k), bool)
        count = int(inside.sum())
        busiest_count = max(busiest_count, count)
        # sums read in place (`where=`), the durations copied only for the median, and only if some
        # kernel is outside the steps: each copy is 8 bytes per kernel, 24 MB for a 300 MB profile
        durations_all.append(k.duration_ns if count == len(k) else k.duration_ns[inside])
        total_ns += int(np.sum(k.duration_ns, where=inside))
        total_count += count
        module_ns += int(np.sum(k.duration_ns, where=inside & (k.hlo_module >= 0)))
    out.kernels_per_step = busiest_count / n
    out.mean_kernel_us = total_ns / total_count / 1e3 if total_count else 0.0
    _host_offload(profile, lo, hi, out)
    if total_count:  # the median: a few long kernels hide thousands of tiny ones in the mean
        joined = durations_all[0] if len(durations_all) == 1 else np.concatenate(durations_all)
        out.median_kernel_us = float(np.median(joined)) / 1e3
    out.xla_compiled = total_ns > 0 and module_ns >= 0.5 * total_ns


def _host_offload(profile: Profile, lo, hi, out: Signals) -> None:
    """Share of device copy-op time (XLA copy-start/done) that moves data to or from host memory."""
    copy_ns = offload_ns = 0
    for device in profile.devices:
        k = device.kernels
        if not len(k):
            continue
        used, listed = used_kernel_names(device)  # the names whose batch the kernel view made
        copies = used[names.first_matches(names.DEVICE_MEMCPY, names.short_names(listed)) >= 0]
        if not copies.size:
            continue
        # the copy names' time only: a sum per name of a million-name table was 8 MB per chunk
        slot = np.full(len(k.names) + 1, copies.size, dtype=np.int32)
        slot[copies] = np.arange(copies.size)
        inside = in_windows(lo, hi, k.start_ns) if lo.size else None
        per_copy = sums_by_code(lambda part, slot=slot, codes=k.name_index: slot[codes[part]],
                                copies.size + 1, k.duration_ns, inside)
        for i, ns in zip(copies.tolist(), per_copy.tolist()):
            copy_ns += int(ns)
            if ns and names.HOST_OFFLOAD_COPY.compiled.search(k.names[i]):
                offload_ns += int(ns)
    out.host_offload_copy_pct = 100.0 * offload_ns / copy_ns if copy_ns else 0.0


_FUNCTION_LAUNCHES = names.STEP_LAUNCHES[:2]  # one table object: its prefilter is built once


def _host_signals(profile: Profile, steps: Steps, lo, hi, n: int, out: Signals) -> None:
    """Eager op dispatches and compiled-function calls on the step's own threads, per step."""
    if not steps.count or not lo.size:
        return
    eager = 0
    for p, i in steps.step_lines:
        plane = profile.planes[p]
        line = plane.lines[i]
        is_eager = np.append(names.matching((names.EAGER_OP,), plane.event_names), False)
        is_jax_call = np.append(names.starting_with(plane.event_names, "PjitFunction("), False)
        is_function = np.append(names.matching(_FUNCTION_LAUNCHES, plane.event_names), False)
        inside = in_windows(lo, hi, line.start_ns)
        eager += int((is_eager[line.metadata_index] & inside).sum())
        calls = is_jax_call[line.metadata_index] & inside
        if calls.any():
            eager += int(outermost(line.start_ns[calls], line.end_ns[calls]).sum())
        out.compiled_step = out.compiled_step or bool((is_function[line.metadata_index] & inside).any())
    out.eager_ops_per_step = eager / n


def _cupti(profile: Profile, out: Signals) -> None:
    for text in list(profile.errors) + list(profile.warnings):
        pattern = names.first_match(names.CUPTI_PROBLEMS, text)
        if pattern is not None:
            out.cupti_problem = pattern.id
            out.cupti_message = text.strip()[:300]
            return
