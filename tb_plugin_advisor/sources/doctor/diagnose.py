"""`doctor`: for every profile under a logdir, what TensorBoard will and won't show, and the fix.

People's first question is rarely "why is my step slow" but "why is my profile not there" or "why
does the Profile tab say 0 steps". For each session doctor reports what it holds (hosts, sizes,
format), whether TensorBoard's run list shows it, whether the built-in Profile tab's step analysis
can work (step markers), whether a GPU profile actually recorded kernels (CUPTI), whether a file is
corrupt, and the exact command or code change that fixes it. Files lying outside the
`plugins/profile/<session>/` layout are reported too ("loose"): no tab will ever list them.

PyTorch (Kineto) captures get their own checks: an empty trace, no GPU events because CUDA activity
was not requested, no `ProfilerStep#N` because `prof.step()` was never called, traces written by
`export_chrome_trace` outside the handler's naming.

Every finding is one entry of FINDINGS (sources/doctor_findings.py: text and fix in one place);
the checks (sources/doctor_checks.py) only decide which entries apply; views/doctor_render.py prints.
Doctor reads files (the Advisor's readers) but writes nothing; fix-logdir writes the markers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, MutableMapping, Optional, Tuple

from tb_plugin_advisor.readers.kineto import read_kineto
from tb_plugin_advisor.readers.xplane import read_xplane
from tb_plugin_advisor.sources.discovery import FRAMEWORK_OF_FORMAT, Scan, Session, scan_logdir
from tb_plugin_advisor.sources.doctor_checks import HostCheck, check_host, session_findings
from tb_plugin_advisor.sources.doctor_findings import FINDINGS, STEP_SOURCE_ORDER
from tb_plugin_advisor.sources.kineto_runs import KINETO_FORMAT
from tb_plugin_advisor.sources.markers import refused_marker_writes

SCHEMA = "tb-advisor/doctor/1"
__all__ = ["FINDINGS", "DoctorReport", "HostCheck", "SessionReport", "diagnose", "diagnose_scan"]


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
        if self.session.format not in ("xplane", KINETO_FORMAT) or not readable:
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
            "framework": s.framework or FRAMEWORK_OF_FORMAT.get(s.format),
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
            "<logdir>/**/plugins/profile/<session>/<host>.xplane.pb (TensorFlow, JAX) or "
            "<logdir>/**/<worker>.<timestamp>.pt.trace.json[.gz] (PyTorch)"
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


def diagnose_scan(
    scan: Scan, read: Optional[Callable] = None, memo: Optional[MutableMapping[Tuple, HostCheck]] = None
) -> DoctorReport:
    """Doctor over an existing scan (the plugin passes its cached one).

    `memo` maps HostFile.cache_key -> HostCheck across calls, so a server re-reads only files that
    are new or changed when the logdir grows.
    """
    readers: Dict[str, Callable] = {"xplane": read or read_xplane, KINETO_FORMAT: read_kineto}
    started = time.monotonic()
    reports = []
    for session in list(scan.sessions) + list(scan.loose):
        run_dir = scan.run_dir_of(session) if session.layout == "session" else None
        report = SessionReport(
            session,
            visible=bool(run_dir and run_dir.visible_in_tensorboard),
            has_marker=bool(run_dir and run_dir.has_marker),
        )
        reader = readers.get(session.format)
        if reader is not None:
            for h in session.hosts:
                check = memo.get(h.cache_key) if memo is not None else None
                if check is None:
                    check = check_host(h.host, h.path, h.size_bytes, reader)
                    if memo is not None:
                        memo[h.cache_key] = check
                report.hosts.append(check)
        session_findings(report, scan.logdir)
        reports.append(report)
    walk_problems = scan.warnings + scan.problems + refused_marker_writes(scan)
    return DoctorReport(scan.logdir, reports, scan.errors, time.monotonic() - started, walk_problems)


def diagnose(logdir: str, read: Optional[Callable] = None) -> DoctorReport:
    return diagnose_scan(scan_logdir(logdir), read)
