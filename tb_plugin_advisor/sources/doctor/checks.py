"""`doctor`'s checks: what one host file says (a HostCheck) and which findings a session gets.

The texts live in findings.py; this module only decides which entries apply, for
XSpace sessions (TensorFlow, JAX) and PyTorch (Kineto) captures alike.
"""

from __future__ import annotations

import shlex
import time
from typing import Callable, Dict, List, Sequence

import numpy as np

from tb_plugin_advisor.readers.kineto.tables import handler_name
from tb_plugin_advisor.sources.doctor.findings import STEP_SOURCE_ORDER
from tb_plugin_advisor.sources.doctor.results import HostCheck, SessionReport
from tb_plugin_advisor.sources.session import Session

# Host runtime calls that start GPU work: seeing them without device events means the GPU tracer
# was off (PyTorch without ProfilerActivity.CUDA) or failed.
GPU_LAUNCH_PREFIXES = ("cudaLaunch", "cudaMemcpy", "cudaMemset", "hipLaunch", "hipMemcpy", "hipMemset",
                       "hipExtLaunch", "cuLaunch")


def _device_summary(profile) -> str:
    groups: Dict[str, int] = {}
    for d in profile.devices:
        if d.kind == "gpu":
            label = f"GPU ({d.model or d.vendor or 'unknown model'})"
        elif d.kind == "tpu":
            label = d.model or "TPU"
        else:
            continue
        groups[label] = groups.get(label, 0) + 1
    if not groups:
        return "CPU only"
    return ", ".join(f"{n}x {label}" for label, n in sorted(groups.items()))


def check_host(host: str, path: str, size: int, read: Callable) -> HostCheck:
    """Read one host file and record what doctor needs from it."""
    from tb_plugin_advisor.errors import ProfileReadError

    check = HostCheck(host, path, size)
    try:
        profile = read(path)
    except ProfileReadError as e:
        check.error = getattr(e, "problem", None) or str(e)
        return check
    except Exception as e:  # noqa: BLE001 - a reader bug must not stop the other sessions
        check.error = f"cannot read profile {path}: {type(e).__name__}: {e}"
        return check
    # A root event (_r=1) only makes a step for the built-in tab when it carries a step number: TF's
    # own `FunctionRun` events are roots too (many per step, Keras 3 included) and count for nothing.
    markers = [m for m in profile.step_markers if m.source != "root_marker" or m.step_num is not None]
    sources = {m.source for m in markers}
    check.step_sources = tuple(s for s in STEP_SOURCE_ORDER if s in sources)
    if check.step_sources:
        best = check.step_sources[0]
        check.step_count = sum(1 for m in markers if m.source == best)
    gpus = profile.gpus
    check.gpus = len(gpus)
    check.gpus_with_kernels = sum(1 for d in gpus if len(d.kernels) > 0)
    check.gpus_active = sum(1 for d in gpus if d.has_activity)
    check.gpu_vendor = next((d.vendor for d in gpus if d.vendor), "")
    check.devices = _device_summary(profile)
    check.loop_iterations = any(
        "iter_num" in line.stats or "group_id" in line.stats
        for plane in profile.host_planes
        for line in plane.lines
    )
    check.events = sum(plane.event_count for plane in profile.planes)
    check.gpu_launches = _gpu_launches(profile)
    devices = profile.properties.get("device_properties") if profile.properties else None
    check.declared_gpus = len(devices) if isinstance(devices, dict) else 0
    check.profiler_errors = tuple(profile.errors) + tuple(
        w for w in profile.warnings if "cupti" in w.lower() or "CUPTI" in w
    )
    return check


def _gpu_launches(profile) -> int:
    host = profile.host_plane
    if host is None:
        return 0
    launches = host.event_names
    wanted = [i for i, name in enumerate(launches) if name.startswith(GPU_LAUNCH_PREFIXES)]
    if not wanted:
        return 0
    return sum(int(np.isin(line.metadata_index, wanted).sum()) for line in host.lines)


def _hosts_note(session: Session, affected: Sequence[str]) -> str:
    if len(session.hosts) <= 1:
        return ""
    if len(affected) == len(session.hosts):
        return " (all hosts)"
    return " (hosts: " + ", ".join(affected) + ")"


def session_findings(report: SessionReport, logdir: str) -> None:
    s = report.session
    add = report.findings.append
    all_unreadable = bool(report.hosts) and all(h.error for h in report.hosts)
    # moving a corrupt file helps nobody; PyTorch exports get their own finding below
    if s.layout == "loose" and s.format != "kineto" and not all_unreadable:
        names = (h.path.replace("\\", "/").rsplit("/", 1)[-1] for h in s.hosts)
        args = {
            "dir_q": shlex.quote(s.path),
            "session_q": shlex.quote(f"plugins/profile/{_session_stamp(s)}"),
            "files_q": " ".join(shlex.quote(n) for n in names),
        }
        add(("loose_file", args))
    elif s.layout == "session" and not report.visible:
        add(("not_visible", {"run_dir": s.run_dir_rel or ".", "logdir_q": shlex.quote(logdir)}))
    if s.format == "legacy":
        add(("legacy_format", {"files": ", ".join(s.files[:4]) + (", ..." if len(s.files) > 4 else "")}))
        return
    if s.format == "kineto" and s.layout == "loose":
        moves = " && ".join(
            f"mv {shlex.quote(n)} {shlex.quote(handler_name(n, h.mtime_ns))}"
            for h in s.hosts for n in [h.path.replace("\\", "/").rsplit("/", 1)[-1]]
        )
        add(("torch_outside_handler", {"files": ", ".join(s.host_names), "dir_q": shlex.quote(s.path),
                                        "moves": moves}))
    if s.format == "unknown":
        note = f" (only {', '.join(s.files[:4])})" if s.files else ""
        add(("empty_session", {"files_note": note}))
        return
    readable = [h for h in report.hosts if not h.error]
    for h in report.hosts:
        if h.error:
            add(("corrupt", {"file": h.path.replace("\\", "/").rsplit("/", 1)[-1], "error": h.error}))
    if not readable:
        return
    keras_only = [h.host for h in readable if h.step_sources and h.step_sources[0] == "keras3_marker"]
    unmarked = [h.host for h in readable if not h.step_sources and not h.loop_iterations]
    loops = [h.host for h in readable if not h.step_sources and h.loop_iterations]
    if s.format == "kineto":
        _torch_findings(report, readable)
        return
    if keras_only:
        add(("keras3_markers_only", {"hosts_note": _hosts_note(s, keras_only)}))
    if unmarked:
        add(("no_step_markers", {"hosts_note": _hosts_note(s, unmarked)}))
    if loops:
        add(("loop_steps", {"hosts_note": _hosts_note(s, loops)}))
    errors = [e for h in readable for e in h.profiler_errors]
    privileges = [e for e in errors if "INSUFFICIENT_PRIVILEGES" in e.upper()]
    cupti = [e for e in errors if "cupti" in e.lower() and e not in privileges]
    if privileges:
        add(("cupti_privileges", {"message": privileges[0][:300]}))
    elif cupti:
        add(("cupti_error", {"message": cupti[0][:300]}))
    other = [e for e in errors if e not in privileges and e not in cupti]
    if other:
        add(("profiler_errors", {"message": "; ".join(other[:3])[:300]}))
    no_kernels = [h for h in readable if h.gpus and not h.gpus_with_kernels]
    if no_kernels and not privileges:
        gpus = str(sum(h.gpus for h in no_kernels))
        note = _hosts_note(s, [h.host for h in no_kernels])
        amd = all(h.gpu_vendor.upper() == "AMD" for h in no_kernels)
        add(("no_kernels_amd" if amd else "no_kernels", {"gpus": gpus, "hosts_note": note}))
    idle = [h for h in readable if h.gpus_with_kernels and h.gpus_active < h.gpus]
    if idle:
        add(
            (
                "idle_gpus",
                {
                    "idle": str(sum(h.gpus - h.gpus_active for h in idle)),
                    "gpus": str(sum(h.gpus for h in idle)),
                    "hosts_note": _hosts_note(s, [h.host for h in idle]),
                },
            )
        )


def _session_stamp(session: Session) -> str:
    """A session name like the profiler's (`YYYY_MM_DD_HH_MM_SS`) from the newest file's mtime."""
    mtimes = [h.mtime_ns for h in session.hosts if h.mtime_ns]
    when = max(mtimes) / 1e9 if mtimes else time.time()
    return time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(when))


def _torch_findings(report: SessionReport, readable: List[HostCheck]) -> None:
    """What goes wrong with PyTorch profiler traces (ARCHITECTURE.md §10)."""
    s = report.session
    add = report.findings.append
    empty = [h for h in readable if h.events == 0]
    for h in empty:
        add(("torch_empty_trace", {"file": h.path.replace("\\", "/").rsplit("/", 1)[-1],
                                   "hosts_note": ""}))
    working = [h for h in readable if h.events > 0]
    unmarked = [h.host for h in working if "profiler_step" not in h.step_sources]
    if unmarked:
        add(("torch_no_profiler_steps", {"hosts_note": _hosts_note(s, unmarked)}))
    silent = [h for h in working if (h.gpu_launches or h.declared_gpus) and not h.gpus_active]
    if silent:
        launches = sum(h.gpu_launches for h in silent)
        what = (f"the host made {launches} GPU runtime call(s)" if launches
                else f"the trace lists {max(h.declared_gpus for h in silent)} GPU(s)")
        add(("torch_no_gpu_events", {"what": what, "hosts_note": _hosts_note(s, [h.host for h in silent])}))
