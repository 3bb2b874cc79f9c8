"""`doctor`'s checks: what one host file says (a HostCheck) and which findings a session gets.

The texts live in findings.py; this module only decides which entries apply. What applies to every
session (where it lies, what cannot be read) is decided here; what is particular to a format is a
check in FORMAT_CHECKS, and each format's descriptor (readers/formats/) names the ones it gets, so a
new format picks from these checks without a branch on its name here.
"""

from __future__ import annotations

import shlex
import time
from typing import Callable, Dict, List, Sequence

import numpy as np

from tb_plugin_advisor.readers.formats.registry import format_named
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
    """The findings of one session: where it lies and whether TensorBoard lists it, what cannot be
    read, then the checks its format's descriptor names (readers/formats/), in their order."""
    s = report.session
    fmt = format_named(s.format)
    add = report.findings.append
    readable = [h for h in report.hosts if not h.error]
    if s.layout == "loose":
        if fmt is not None and fmt.outside_layout is not None:
            FORMAT_CHECKS[fmt.outside_layout.finding](report, readable)
    elif s.layout == "session" and not report.visible:
        add(("not_visible", {"run_dir": s.run_dir_rel or ".", "logdir_q": shlex.quote(logdir)}))
    if fmt is None:
        note = f" (only {', '.join(s.files[:4])})" if s.files else ""
        add(("empty_session", {"files_note": note}))
        return
    if fmt.analysed:
        for h in report.hosts:
            if h.error:
                add(("corrupt", {"file": _file_name(h.path), "error": h.error}))
        if not readable:
            return
    for check in fmt.doctor_checks:
        FORMAT_CHECKS[check](report, readable)


def _file_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


# ---------------------------------------------------------------------------------------------------
# Checks a format's descriptor names (`outside_layout.finding`, `doctor_checks`): each adds the
# finding of its name (or a variant of it) when it applies. `readable`: the hosts read without error.


def _loose_file(report: SessionReport, readable: List[HostCheck]) -> None:
    """Files outside plugins/profile/<session>/: how to move them there (not when none can be read:
    moving a corrupt file helps nobody)."""
    s = report.session
    if report.hosts and not readable:
        return
    args = {
        "dir_q": shlex.quote(s.path),
        "session_q": shlex.quote(f"plugins/profile/{_session_stamp(s)}"),
        "files_q": " ".join(shlex.quote(_file_name(h.path)) for h in s.hosts),
    }
    report.findings.append(("loose_file", args))


def _torch_outside_handler(report: SessionReport, readable: List[HostCheck]) -> None:
    """Traces saved under other names: the names the handler would have given them."""
    s = report.session
    moves = " && ".join(
        f"mv {shlex.quote(n)} {shlex.quote(handler_name(n, h.mtime_ns))}"
        for h in s.hosts for n in [_file_name(h.path)]
    )
    report.findings.append(("torch_outside_handler", {"files": ", ".join(s.host_names),
                                                      "dir_q": shlex.quote(s.path), "moves": moves}))


def _legacy_format(report: SessionReport, readable: List[HostCheck]) -> None:
    files = report.session.files
    listed = ", ".join(files[:4]) + (", ..." if len(files) > 4 else "")
    report.findings.append(("legacy_format", {"files": listed}))


def _keras3_markers_only(report: SessionReport, readable: List[HostCheck]) -> None:
    hosts = [h.host for h in readable if h.step_sources and h.step_sources[0] == "keras3_marker"]
    if hosts:
        report.findings.append(("keras3_markers_only", {"hosts_note": _hosts_note(report.session, hosts)}))


def _no_step_markers(report: SessionReport, readable: List[HostCheck]) -> None:
    hosts = [h.host for h in readable if not h.step_sources and not h.loop_iterations]
    if hosts:
        report.findings.append(("no_step_markers", {"hosts_note": _hosts_note(report.session, hosts)}))


def _loop_steps(report: SessionReport, readable: List[HostCheck]) -> None:
    hosts = [h.host for h in readable if not h.step_sources and h.loop_iterations]
    if hosts:
        report.findings.append(("loop_steps", {"hosts_note": _hosts_note(report.session, hosts)}))


def _privilege_errors(readable: List[HostCheck]) -> List[str]:
    return [e for h in readable for e in h.profiler_errors if "INSUFFICIENT_PRIVILEGES" in e.upper()]


def _profiler_errors(report: SessionReport, readable: List[HostCheck]) -> None:
    """What the profiler itself recorded: GPU tracing refused, a GPU tracer error, anything else."""
    add = report.findings.append
    errors = [e for h in readable for e in h.profiler_errors]
    privileges = _privilege_errors(readable)
    cupti = [e for e in errors if "cupti" in e.lower() and e not in privileges]
    if privileges:
        add(("cupti_privileges", {"message": privileges[0][:300]}))
    elif cupti:
        add(("cupti_error", {"message": cupti[0][:300]}))
    other = [e for e in errors if e not in privileges and e not in cupti]
    if other:
        add(("profiler_errors", {"message": "; ".join(other[:3])[:300]}))


def _no_kernels(report: SessionReport, readable: List[HostCheck]) -> None:
    """GPU planes without kernels (not when tracing was refused: that finding says why already)."""
    no_kernels = [h for h in readable if h.gpus and not h.gpus_with_kernels]
    if not no_kernels or _privilege_errors(readable):
        return
    gpus = str(sum(h.gpus for h in no_kernels))
    note = _hosts_note(report.session, [h.host for h in no_kernels])
    amd = all(h.gpu_vendor.upper() == "AMD" for h in no_kernels)
    report.findings.append(("no_kernels_amd" if amd else "no_kernels", {"gpus": gpus, "hosts_note": note}))


def _idle_gpus(report: SessionReport, readable: List[HostCheck]) -> None:
    idle = [h for h in readable if h.gpus_with_kernels and h.gpus_active < h.gpus]
    if idle:
        report.findings.append((
            "idle_gpus",
            {
                "idle": str(sum(h.gpus - h.gpus_active for h in idle)),
                "gpus": str(sum(h.gpus for h in idle)),
                "hosts_note": _hosts_note(report.session, [h.host for h in idle]),
            },
        ))


def _session_stamp(session: Session) -> str:
    """A session name like the profiler's (`YYYY_MM_DD_HH_MM_SS`) from the newest file's mtime."""
    mtimes = [h.mtime_ns for h in session.hosts if h.mtime_ns]
    when = max(mtimes) / 1e9 if mtimes else time.time()
    return time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(when))


# What goes wrong with PyTorch profiler traces (ARCHITECTURE.md §10).


def _torch_empty_trace(report: SessionReport, readable: List[HostCheck]) -> None:
    for h in readable:
        if h.events == 0:
            report.findings.append(("torch_empty_trace", {"file": _file_name(h.path), "hosts_note": ""}))


def _torch_no_profiler_steps(report: SessionReport, readable: List[HostCheck]) -> None:
    hosts = [h.host for h in readable if h.events > 0 and "profiler_step" not in h.step_sources]
    if hosts:
        note = _hosts_note(report.session, hosts)
        report.findings.append(("torch_no_profiler_steps", {"hosts_note": note}))


def _torch_no_gpu_events(report: SessionReport, readable: List[HostCheck]) -> None:
    working = [h for h in readable if h.events > 0]
    silent = [h for h in working if (h.gpu_launches or h.declared_gpus) and not h.gpus_active]
    if silent:
        launches = sum(h.gpu_launches for h in silent)
        what = (f"the host made {launches} GPU runtime call(s)" if launches
                else f"the trace lists {max(h.declared_gpus for h in silent)} GPU(s)")
        report.findings.append(("torch_no_gpu_events", {
            "what": what, "hosts_note": _hosts_note(report.session, [h.host for h in silent])}))


SessionCheck = Callable[[SessionReport, List[HostCheck]], None]

# Every check a format's descriptor may name, by the finding it adds (tests/readers/test_formats.py holds
# each descriptor to this table, and FINDINGS has the words).
FORMAT_CHECKS: Dict[str, SessionCheck] = {
    "loose_file": _loose_file,
    "torch_outside_handler": _torch_outside_handler,
    "legacy_format": _legacy_format,
    "keras3_markers_only": _keras3_markers_only,
    "no_step_markers": _no_step_markers,
    "loop_steps": _loop_steps,
    "profiler_errors": _profiler_errors,
    "no_kernels": _no_kernels,
    "idle_gpus": _idle_gpus,
    "torch_empty_trace": _torch_empty_trace,
    "torch_no_profiler_steps": _torch_no_profiler_steps,
    "torch_no_gpu_events": _torch_no_gpu_events,
}
