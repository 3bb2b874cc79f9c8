"""`tb-advisor doctor LOGDIR [--json]`: what TensorBoard will and won't show, and how to fix it.

Exit status: 0 when every session is fine, 1 when something is wrong (or no profile was found),
2 when LOGDIR cannot be read at all.
"""

from __future__ import annotations

import argparse
import json
import sys

from tb_plugin_advisor.views.cli.commands import require_logdir
from tb_plugin_advisor.views.export.markup import terminal_output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", metavar="LOGDIR", help="the directory you pass to tensorboard --logdir")
    parser.add_argument("--json", action="store_true", help="print doctor JSON (tb-advisor/doctor/1)")


def run(args: argparse.Namespace) -> int:
    from tb_plugin_advisor.sources.doctor import diagnose as doctor
    from tb_plugin_advisor.views.cli import doctor_render

    logdir = args.logdir
    require_logdir(logdir)
    report = doctor.diagnose(logdir)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        sys.stdout.write(terminal_output(doctor_render.render_text(report)))
    return 0 if report.ok else 1
