"""`tb-advisor doctor LOGDIR [--json] [--no-validity]`: what TensorBoard will and won't show, how to fix
it, and per run what its trace can support (the report's validity matrix, docs/ARCHITECTURE.md §2).

The files alone are cheap to check; the matrix needs each run's report, which comes through the one
door for reports (report/door.py): from the analysis cache when the run was analysed before, else by
reading every profile once (and keeping the report for `report`, `diff`, `trend` and TensorBoard).
`--no-validity` skips it.

Exit status: 0 when every session is fine, 1 when something is wrong (or no profile was found),
2 when LOGDIR cannot be read at all. What a trace cannot support is said, not an error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict

from tb_plugin_advisor.views.cli.commands import require_logdir
from tb_plugin_advisor.views.cli.commands.report import add_cache_arguments, open_cli_cache
from tb_plugin_advisor.views.export.json_text import indented_json
from tb_plugin_advisor.views.export.markup import terminal_output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", metavar="LOGDIR", help="the directory you pass to tensorboard --logdir")
    parser.add_argument("--json", action="store_true", help="print doctor JSON (tb-advisor/doctor/1)")
    parser.add_argument(
        "--no-validity", action="store_true",
        help="only check the files: skip what each run's trace can support, which reads every profile not "
        "yet in the analysis cache (as long as `tb-advisor report` on each run; the reports are kept)")
    add_cache_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from tb_plugin_advisor.sources.doctor import diagnose as doctor
    from tb_plugin_advisor.views.cli import doctor_render

    logdir = args.logdir
    require_logdir(logdir)
    report = doctor.diagnose(logdir)
    matrices = None if args.no_validity else _matrices(report, args)
    if args.json:
        out = report.to_json()
        if matrices is not None:
            for session in out["sessions"]:
                session["validity"] = matrices.get(session["run"])
        print(indented_json(out, indent=2))
    else:
        sys.stdout.write(terminal_output(doctor_render.render_text(report, matrices)))
    return 0 if report.ok else 1


def _matrices(report: Any, args: argparse.Namespace) -> Dict[str, Dict[str, Any]]:
    """Each analysed run's validity rows, through the report door (cache, else built and kept)."""
    from tb_plugin_advisor.report.door import ReportDoor

    return ReportDoor(open_cli_cache(args, args.logdir)).validity([r.session for r in report.sessions])

