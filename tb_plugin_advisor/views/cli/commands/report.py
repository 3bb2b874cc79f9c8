"""`tb-advisor report LOGDIR`: diagnose one profile run in a terminal, or export it.

    tb-advisor report LOGDIR [--run RUN] [--host H] [--format text|md|json|html] [--output FILE]
    tb-advisor report LOGDIR [--run RUN] --section memory|kernels|collectives|roofline|validity [--section …]
    tb-advisor report LOGDIR --list
    tb-advisor report TRACE_FILE [--format …]      (a *.pt.trace.json[.gz] or *.xplane.pb file)
    tb-advisor report LOGDIR [--workers N | --scheduler tcp://HOST:PORT]
    tb-advisor report LOGDIR [--cache-dir DIR | --no-cache]

The hosts of a multi-host run are analysed in parallel (a process pool sized by cores and by the
memory each host needs), or on an existing Dask cluster with --scheduler (its workers must see the
logdir: a shared path, s3:// or gs://). The report is the same JSON whichever way it ran.

Runs are found the way the Advisor tab finds them (tb_plugin_advisor.sources.discovery); RUN is a run name
as `--list`, `tb-advisor doctor` and the tab show it, a unique prefix of it, or its run directory's
name (`run1_naive`). Without --run the newest run is reported (and
the others are listed on stderr). Exit status: 0 on success, 2 when the logdir, run or host is unknown
or a profile cannot be read (one line on stderr says which).

A run analysed before (by this command, `diff`, `trend` or TensorBoard) whose files are unchanged is
read from the analysis cache (report/disk_cache.py) instead of its profile.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.readers.formats.registry import file_patterns, is_analysed
from tb_plugin_advisor.views.cli.commands import require_logdir
from tb_plugin_advisor.views.export.json_text import indented_json
from tb_plugin_advisor.views.export.markup import terminal_line, terminal_safe

if TYPE_CHECKING:
    from tb_plugin_advisor.report.disk_cache import ReportCache


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "logdir", metavar="LOGDIR",
        help=f"the directory you pass to tensorboard --logdir, or one profile file ({file_patterns()})")
    parser.add_argument(
        "--run", metavar="RUN",
        help="the run to report: its name, a unique prefix, or its directory name (default: the newest)")
    parser.add_argument("--host", metavar="H", help="only this host of a multi-host run")
    parser.add_argument(
        "--format",
        choices=("text", "md", "json", "html"),
        default="text",
        help="output format (default text)",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--list", action="store_true", help="list the runs found under LOGDIR and exit")
    parser.add_argument(
        "--section",
        action="append",
        choices=_SectionViews(),
        metavar="NAME",
        help="show only this deeper view, or what the trace supports (%(choices)s); repeat for several",
    )
    add_parallel_arguments(parser)
    add_cache_arguments(parser)


class _SectionViews:
    """The names `--section` takes (report/sections.py's VIEWS), looked up only when argparse asks:
    the sections module imports every analysis, which a report imports while its profile is read
    (report/hostpool.py), not before."""

    def __iter__(self) -> Iterator[str]:
        from tb_plugin_advisor.report.sections import VIEWS

        return iter(VIEWS)

    def __contains__(self, name: object) -> bool:
        return name in tuple(self)


def add_parallel_arguments(parser: argparse.ArgumentParser) -> None:
    """--workers / --scheduler, shared by `report` and `diff`."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="analyse at most N hosts at once here (default: by cores and free memory; 1 = sequential)",
    )
    group.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="analyse the hosts on this dask.distributed cluster (pip install 'tb-plugin-advisor[dask]')",
    )


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    """--cache-dir / --no-cache, shared by `report`, `diff` and `trend`: one cache for the CLI and
    TensorBoard, so a run analysed by any of them is not read again by the others."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--cache-dir", metavar="DIR",
        help="where analysed reports are kept (default: $TB_ADVISOR_CACHE_DIR, else "
        "$XDG_CACHE_HOME/tb-plugin-advisor, else ~/.cache/tb-plugin-advisor; never the logdir)")
    group.add_argument("--no-cache", action="store_true", help="read every profile, keep nothing")


def open_cli_cache(args: argparse.Namespace, *inputs: Optional[str]) -> ReportCache:
    """The analysis cache the command's --cache-dir / --no-cache / environment choose, never inside
    the logdir or the directory of a profile file given instead (`inputs`)."""
    from tb_plugin_advisor.report.disk_cache import ReportCache, open_cache
    from tb_plugin_advisor.sources.runs import is_profile_file

    if getattr(args, "no_cache", False):
        return ReportCache(None)
    roots = [os.path.dirname(os.path.abspath(p)) if is_profile_file(p) else p for p in inputs if p]
    cache = open_cache(getattr(args, "cache_dir", None), logdirs=roots)
    if cache.note:  # where the cache went instead of a directory that holds others' files
        print(f"tb-advisor: note: {cache.note}", file=sys.stderr)
    return cache


def cache_note(cache: ReportCache, command: str) -> None:
    """Say on stderr when the cache directory could not be used (entries then live in memory)."""
    if cache.degraded:
        print(f"tb-advisor {command}: note: {cache.degraded}", file=sys.stderr)


def check_parallel_arguments(args: argparse.Namespace) -> None:
    if args.workers is not None and args.workers < 1:
        raise AdvisorError(f"--workers must be at least 1, not {args.workers}")
    if args.scheduler is not None and "://" not in args.scheduler:
        raise AdvisorError(
            f"--scheduler wants a Dask scheduler address like tcp://HOST:8786, not {args.scheduler!r}"
        )


def run(args: argparse.Namespace) -> int:
    from tb_plugin_advisor.sources.discovery import scan_logdir
    from tb_plugin_advisor.sources.runs import is_profile_file, resolve_run, session_for_file

    check_parallel_arguments(args)
    if is_profile_file(args.logdir) and not args.list:
        return _emit(_build(session_for_file(args.logdir), args.host, args.scheduler, args.workers,
                            open_cli_cache(args, args.logdir)), args)
    require_logdir(args.logdir)
    scan = scan_logdir(args.logdir)
    sessions = [s for s in scan.sessions if is_analysed(s.format)]
    if args.list:
        for session in sessions:
            line = f"{session.run}\t{', '.join(session.host_names)}\t{session.size_bytes} bytes"
            print(terminal_line(line))
        return 0
    if not sessions:
        others = [s.run for s in scan.sessions]
        hint = f" (runs it cannot read: {', '.join(others)})" if others else ""
        raise AdvisorError(
            f"no profile ({file_patterns()}) found under {args.logdir}{hint}; "
            f"try `tb-advisor doctor {args.logdir}`"
        )
    if args.run is None:
        session = newest(sessions)
        if len(sessions) > 1:
            print(
                f"tb-advisor report: {len(sessions)} runs in {args.logdir}; reporting the newest, "
                f"{terminal_safe(repr(session.run))} (choose with --run; list with --list)",
                file=sys.stderr,
            )
    else:
        session = resolve_run(sessions, args.run, args.logdir)
    cache = open_cli_cache(args, args.logdir)
    return _emit(_build(session, args.host, args.scheduler, args.workers, cache), args)


def _emit(report, args: argparse.Namespace) -> int:
    text = _format(report, args.format, getattr(args, "section", None))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"tb-advisor report: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def newest(sessions):
    """The session whose files were written last (session names are capture timestamps otherwise)."""

    def key(session):
        mtimes = [h.mtime_ns for h in session.hosts if h.mtime_ns is not None]
        return (max(mtimes) if mtimes else -1, session.name, session.run)

    return max(sessions, key=key)


def _build(session, host, scheduler: Optional[str], workers: Optional[int], cache: ReportCache
           ) -> Dict[str, Any]:
    from tb_plugin_advisor.report.door import ReportDoor
    from tb_plugin_advisor.views.cli.progress import ProgressBar

    bar = ProgressBar()  # draws only when stderr is a terminal, and only while a profile is read
    try:
        report, _cached = ReportDoor(cache, scheduler, workers).report(
            session, host, on_progress=bar.callback(f"reading {session.run}"))
    finally:
        bar.close()
    cache_note(cache, "report")
    return report


def _format(report, fmt: str, sections=None) -> str:
    if sections:
        from tb_plugin_advisor.views.export.sections import render_sections

        return render_sections(report, fmt, list(dict.fromkeys(sections)))
    if fmt == "json":
        return indented_json(report, indent=1) + "\n"
    from tb_plugin_advisor.views.export.render import render

    return render(report, fmt)
