"""`tb-advisor doctor`'s terminal output (the JSON is DoctorReport.to_json())."""

from __future__ import annotations

from typing import List

from tb_plugin_advisor.formatting import format_bytes
from tb_plugin_advisor.readers.formats.registry import is_analysed
from tb_plugin_advisor.sources.doctor.diagnose import DoctorReport


def render_text(report: DoctorReport) -> str:
    """A line per session with its problems and fixes; multi-line fixes (code) printed once at the end."""
    lines = [f"tb-advisor doctor: {report.logdir}", ""]
    for problem in report.general_problems:
        lines.append(f"  problem: {problem}")
    snippets: List[str] = []
    for r in report.sessions:
        s = r.session
        status = "ok " if not r.problems else "!! "
        hosts = f"{len(s.hosts)} host{'s' if len(s.hosts) != 1 else ''}"
        parts = [s.format, hosts, format_bytes(s.size_bytes)]
        if r.devices:
            parts.append(r.devices)
        if is_analysed(s.format):
            parts.append(f"steps: {r.step_markers}")
        if s.framework:
            parts.insert(0, s.framework)
        if s.layout == "loose":
            parts.append("loose file, not in a session directory")
        else:
            parts.append("in TensorBoard's run list" if r.visible else "not in TensorBoard's run list")
        lines.append(f"{status}{s.run}  [{', '.join(parts)}]")
        for problem in r.problems:
            lines.append(f"      problem: {problem}")
        for note in r.notes:
            lines.append(f"      note: {note}")
        for fix in r.fixes:
            if "\n" in fix:
                if fix not in snippets:
                    snippets.append(fix)
                lines.append(f"      fix: code change [{snippets.index(fix) + 1}] below")
            else:
                lines.append(f"      fix: {fix}")
    for i, snippet in enumerate(snippets, 1):
        lines += ["", f"[{i}]"] + [f"    {line}" for line in snippet.splitlines()]
    data = report.to_json()["summary"]
    formats = ", ".join(f"{n} {fmt}" for fmt, n in sorted(data["by_format"].items()))
    lines.append("")
    lines.append(
        f"{data['sessions']} session(s), {data['loose']} loose profile director(ies) ({formats or 'none'}); "
        f"{data['with_problems']} with problems. " + ("All good." if report.ok else "Fix the problems above.")
    )
    return "\n".join(lines)
