"""What doctor finds, as plain types with their JSON (`tb-advisor/doctor/1`, ARCHITECTURE.md §2): one
HostCheck per host file, one SessionReport per session, one DoctorReport per logdir.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from tb_plugin_advisor.readers.formats.registry import is_analysed, where_profiles_live
from tb_plugin_advisor.sources.doctor.findings import FINDINGS, STEP_SOURCE_ORDER
from tb_plugin_advisor.sources.session import Session

SCHEMA = "tb-advisor/doctor/1"


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
    events: int = 0  # host and device events read
    gpu_launches: int = 0  # host runtime calls that start GPU work (cudaLaunchKernel, hipMemcpy…)
    declared_gpus: int = 0  # GPUs the trace's header lists (Kineto deviceProperties)


@dataclass
class SessionReport:
    """The doctor's look at one profile session: can TensorBoard see it, and what is wrong."""

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
    def severity(self) -> str:
        """"problem" when the Advisor's view of the session suffers; "tip" when only TensorBoard's
        run list or built-in Profile tab does; "ok" otherwise."""
        found = [FINDINGS[k] for k, _ in self.findings if FINDINGS[k].is_problem]
        if not found:
            return "ok"
        return "tip" if all(f.profile_tab_only for f in found) else "problem"

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
        readable = any(not h.error for h in self.hosts)
        if not is_analysed(self.session.format) or not readable:
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
            "framework": s.framework,
            "size_bytes": s.size_bytes,
            "devices": self.devices,
            "step_count": sum(h.step_count for h in self.hosts) if self.step_markers != "unknown" else None,
            "findings": [k for k, _ in self.findings],
            "fixes": self.fixes,
            "notes": self.notes,
            "severity": self.severity,
            "host_files": [
                {"host": h.host, "path": h.path, "size_bytes": h.size_bytes, "error": h.error}
                for h in self.hosts
            ],
        }


@dataclass
class DoctorReport:
    """The doctor's look at a whole logdir: every session, and what the walk could not read."""

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
            f"no profile sessions under {self.logdir}{where}: profiles live in {where_profiles_live()}"
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
