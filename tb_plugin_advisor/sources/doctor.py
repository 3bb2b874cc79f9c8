"""`doctor`: for every profile under a logdir, what TensorBoard will and won't show, and the fix.

People's first question is rarely "why is my step slow" but "why is my profile not there" or "why
does the Profile tab say 0 steps". For each session doctor reports what it holds (hosts, sizes,
format), whether TensorBoard's run list shows it, whether the built-in Profile tab's step analysis
can work (step markers), whether a GPU profile actually recorded kernels (CUPTI), whether a file is
corrupt, and the exact command or code change that fixes it. Files lying outside the
`plugins/profile/<session>/` layout are reported too ("loose"): no tab will ever list them.

Every finding is one entry of FINDINGS (doctor_findings.py: text and fix in one place); the checks
only decide which entries apply. Doctor reads files (the Advisor's reader) but writes nothing;
fix-logdir writes the markers.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, MutableMapping, Optional, Sequence, Tuple

from tb_plugin_advisor.sources.discovery import Scan, Session, scan_logdir
from tb_plugin_advisor.sources.doctor_findings import FINDINGS, Finding  # noqa: F401 - re-exported
from tb_plugin_advisor.sources.markers import refused_marker_writes

SCHEMA = "tb-advisor/doctor/1"

STEP_SOURCE_ORDER = ("root_marker", "keras3_marker", "legacy_marker")


@dataclass
class HostCheck:
    """What one host file says (filled from the reader's Profile, or the read error)."""

    host: str
    path: str
    size_bytes: int
    error: Optional[str] = None
    step_sources: Tuple[str, ...] = ()  # distinct StepMarker sources present
    step_count: int = 0  # markers of the best source
    gpus: int = 0
    gpus_with_kernels: int = 0
    gpus_active: int = 0
    gpu_vendor: str = ""
    devices: str = ""  # "8x GPU (Nvidia)", "4x TPU v6 Lite", "CPU only"
    profiler_errors: Tuple[str, ...] = ()
    loop_iterations: bool = False  # TF executor events with iter_num/group_id (older TF graph steps)


@dataclass
class SessionReport:
    session: Session
    visible: bool
    has_marker: bool
    hosts: List[HostCheck] = field(default_factory=list)
    findings: List[Tuple[str, Dict[str, str]]] = field(default_factory=list)

    @property
    def problems(self) -> List[str]:
        return [FINDINGS[k].problem.format(**args) for k, args in self.findings if FINDINGS[k].is_problem]

    @property
    def notes(self) -> List[str]:
        return [FINDINGS[k].problem.format(**args) for k, args in self.findings if not FINDINGS[k].is_problem]

    @property
    def fixes(self) -> List[str]:
        out: List[str] = []
        for key, args in self.findings:
            fix = FINDINGS[key].fix.format(**args) if FINDINGS[key].fix else ""
            if fix and fix not in out:
                out.append(fix)
        return out

    @property
    def step_markers(self) -> str:
        if self.session.format != "xplane" or not self.hosts or all(h.error for h in self.hosts):
            return "unknown"
        present = {s for h in self.hosts for s in h.step_sources}
        for source in STEP_SOURCE_ORDER:
            if source in present:
                return source
        return "none"

    @property
    def devices(self) -> str:
        kinds = sorted({h.devices for h in self.hosts if h.devices})
        return "; ".join(kinds)

    def to_json(self) -> Dict:
        s = self.session
        return {
            "run": s.run,
            "path": s.path,
            "hosts": s.host_names,
            "format": s.format,
            "visible_in_tensorboard_runs": self.visible,
            "has_marker": self.has_marker,
            "step_markers": self.step_markers,
            "problems": self.problems,
            "fix": "\n".join(self.fixes),
            # additions (DESIGN §2: add keys freely)
            "layout": s.layout,
            "size_bytes": s.size_bytes,
            "devices": self.devices,
            "step_count": sum(h.step_count for h in self.hosts) if self.step_markers != "unknown" else None,
            "findings": [k for k, _ in self.findings],
            "fixes": self.fixes,
            "notes": self.notes,
            "host_files": [
                {"host": h.host, "path": h.path, "size_bytes": h.size_bytes, "error": h.error}
                for h in self.hosts
            ],
        }


@dataclass
class DoctorReport:
    logdir: str
    sessions: List[SessionReport]
    scan_errors: Tuple[str, ...] = ()
    elapsed_s: float = 0.0
    # what the walk skipped on purpose (special files, links leaving the logdir, refused writes)
    # and why it stopped early, if it did
    walk_problems: Tuple[str, ...] = ()

    @property
    def general_problems(self) -> List[str]:
        problems = list(self.walk_problems)
        if self.sessions:
            return problems
        where = f" ({self.scan_errors[0]})" if self.scan_errors else ""
        return problems + [
            f"no profile sessions under {self.logdir}{where}: profiles live in "
            "<logdir>/**/plugins/profile/<session>/<host>.xplane.pb"
        ]

    @property
    def ok(self) -> bool:
        return not self.general_problems and not any(r.problems for r in self.sessions)

    def to_json(self) -> Dict:
        by_format: Dict[str, int] = {}
        for r in self.sessions:
            by_format[r.session.format] = by_format.get(r.session.format, 0) + 1
        return {
            "schema": SCHEMA,
            "ok": self.ok,
            "sessions": [r.to_json() for r in self.sessions],
            "logdir": self.logdir,
            "problems": self.general_problems,
            "summary": {
                "sessions": sum(1 for r in self.sessions if r.session.layout == "session"),
                "loose": sum(1 for r in self.sessions if r.session.layout == "loose"),
                "with_problems": sum(1 for r in self.sessions if r.problems),
                "by_format": by_format,
            },
            "scan_errors": list(self.scan_errors),
        }


# ---------------------------------------------------------------------------------------------------
# Checks


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
    check.profiler_errors = tuple(profile.errors) + tuple(
        w for w in profile.warnings if "cupti" in w.lower() or "CUPTI" in w
    )
    return check


def _hosts_note(session: Session, affected: Sequence[str]) -> str:
    if len(session.hosts) <= 1:
        return ""
    if len(affected) == len(session.hosts):
        return " (all hosts)"
    return " (hosts: " + ", ".join(affected) + ")"


def _session_findings(report: SessionReport, logdir: str) -> None:
    s = report.session
    add = report.findings.append
    all_unreadable = bool(report.hosts) and all(h.error for h in report.hosts)
    if s.layout == "loose" and not all_unreadable:  # moving a corrupt file helps nobody
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


def diagnose_scan(
    scan: Scan, read: Optional[Callable] = None, memo: Optional[MutableMapping[Tuple, HostCheck]] = None
) -> DoctorReport:
    """Doctor over an existing scan (the plugin passes its cached one).

    `memo` maps HostFile.cache_key -> HostCheck across calls, so a server re-reads only files that
    are new or changed when the logdir grows.
    """
    if read is None:
        from tb_plugin_advisor.readers.xplane import read_xplane as read
    started = time.monotonic()
    reports = []
    for session in list(scan.sessions) + list(scan.loose):
        run_dir = scan.run_dir_of(session) if session.layout == "session" else None
        report = SessionReport(
            session,
            visible=bool(run_dir and run_dir.visible_in_tensorboard),
            has_marker=bool(run_dir and run_dir.has_marker),
        )
        if session.format == "xplane":
            for h in session.hosts:
                check = memo.get(h.cache_key) if memo is not None else None
                if check is None:
                    check = check_host(h.host, h.path, h.size_bytes, read)
                    if memo is not None:
                        memo[h.cache_key] = check
                report.hosts.append(check)
        _session_findings(report, scan.logdir)
        reports.append(report)
    walk_problems = scan.warnings + scan.problems + refused_marker_writes(scan)
    return DoctorReport(scan.logdir, reports, scan.errors, time.monotonic() - started, walk_problems)


def diagnose(logdir: str, read: Optional[Callable] = None) -> DoctorReport:
    return diagnose_scan(scan_logdir(logdir), read)
