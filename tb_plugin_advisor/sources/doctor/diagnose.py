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

Every finding is one entry of FINDINGS (findings.py: text and fix in one place); the checks
(checks.py) only decide which entries apply; results.py holds what they find, as JSON;
views/cli/doctor_render.py prints it.
Doctor reads files (the Advisor's readers) but writes nothing; fix-logdir writes the markers.
"""

from __future__ import annotations

import time
from typing import Callable, Mapping, MutableMapping, Optional, Tuple

from tb_plugin_advisor.model import Profile
from tb_plugin_advisor.readers.formats.registry import format_named
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.doctor.checks import check_host, session_findings
from tb_plugin_advisor.sources.doctor.results import DoctorReport, HostCheck, SessionReport
from tb_plugin_advisor.sources.markers import refused_marker_writes
from tb_plugin_advisor.sources.session import Scan

ReadFile = Callable[[str], Profile]


def diagnose_scan(
    scan: Scan,
    readers: Optional[Mapping[str, ReadFile]] = None,
    memo: Optional[MutableMapping[Tuple, HostCheck]] = None,
) -> DoctorReport:
    """Doctor over an existing scan (the plugin passes its cached one).

    Each host file is read by its format's reader (readers/formats/), or by `readers[format id]`
    where given (tests count the reads). `memo` maps HostFile.cache_key -> HostCheck across calls, so
    a server re-reads only files that are new or changed when the logdir grows.
    """
    started = time.monotonic()
    reports = []
    for session in list(scan.sessions) + list(scan.loose):
        run_dir = scan.run_dir_of(session) if session.layout == "session" else None
        report = SessionReport(
            session,
            visible=bool(run_dir and run_dir.visible_in_tensorboard),
            has_marker=bool(run_dir and run_dir.has_marker),
        )
        reader = _reader(session.format, readers or {})
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


def _reader(format_id: str, given: Mapping[str, ReadFile]) -> Optional[ReadFile]:
    """What reads a host file of the format for doctor; None for a format the Advisor does not read."""
    if format_id in given:
        return given[format_id]
    fmt = format_named(format_id)
    if fmt is None or fmt.read is None:
        return None
    read = fmt.read
    return lambda path: read(path, None, None)


def diagnose(logdir: str, readers: Optional[Mapping[str, ReadFile]] = None) -> DoctorReport:
    return diagnose_scan(scan_logdir(logdir), readers)
