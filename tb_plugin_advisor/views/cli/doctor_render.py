"""`tb-advisor doctor`'s terminal output (the JSON is DoctorReport.to_json())."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tb_plugin_advisor.formatting import format_bytes
from tb_plugin_advisor.readers.formats.registry import is_analysed
from tb_plugin_advisor.sources.doctor.diagnose import DoctorReport


def validity_lines(found: Dict[str, Any]) -> List[str]:
    """What a run's trace supports ({`rows`}: its report's validity rows), or why it could not be read
    ({`error`}), as ReportDoor.validity gives them."""
    if "error" in found:
        return [f"      supports: unknown, the run could not be read: {found['error']}"]
    rows = found.get("rows") or []
    limited = [r for r in rows if r.get("status") in ("unsupported", "degraded")]
    if not limited:
        return [f"      supports: every one of the {len(rows)} analyses"] if rows else []
    limited.sort(key=lambda r: r.get("status") != "unsupported")
    out = []
    for r in limited:
        out.append(f"      {r.get('status')}: {r.get('analysis')} — {r.get('reason')}")
        if r.get("fix"):
            out.append(f"        fix: {r.get('fix')}")
    return out


def render_text(report: DoctorReport, validity: Optional[Dict[str, Any]] = None) -> str:
    """A line per session with its problems and fixes, and what its trace supports (`validity`: {rows}
    or {error} by run, from ReportDoor.validity; None: not measured); multi-line fixes (code) printed
    once at the end."""
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
        if validity is not None and s.run in validity:
            lines += validity_lines(validity[s.run])
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
