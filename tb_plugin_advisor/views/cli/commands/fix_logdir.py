"""`tb-advisor fix-logdir LOGDIR [--dry-run]`: write the missing `.profile-empty` markers.

A run directory holding `plugins/profile/` but no events file is invisible in TensorBoard's run
list; one small marker file (markers.py) fixes that. Nothing else is written. Exit status: 0 when
every such directory has (or, with --dry-run, would get) a marker, 1 when a write failed,
2 when LOGDIR cannot be read.
"""

from __future__ import annotations

import argparse
import sys
import time

from tb_plugin_advisor.readers.formats.registry import FORMATS
from tb_plugin_advisor.sources.discovery import join, scan_logdir
from tb_plugin_advisor.views.cli.commands import require_logdir
from tb_plugin_advisor.views.export.markup import terminal_safe


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", metavar="LOGDIR", help="the directory you pass to tensorboard --logdir")
    parser.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")


def run(args: argparse.Namespace) -> int:
    from tb_plugin_advisor.sources import markers

    logdir = args.logdir
    require_logdir(logdir)
    scan = scan_logdir(logdir)
    missing = markers.missing_markers(scan)
    if not missing:
        print(f"Nothing to do: every run directory with profiles under {scan.logdir} has an events file.")
    failed = 0
    now = time.time()
    host = markers.marker_host()
    for run_dir in missing:
        sessions = f"{len(run_dir.runs)} profile session{'s' if len(run_dir.runs) != 1 else ''}"
        if args.dry_run:
            target = join(run_dir.path, markers.marker_name(now, host))
            print(terminal_safe(f"would write {target}  ({sessions})"))
            continue
        try:
            path = markers.write_marker(run_dir.path, now, host, logdir=scan.logdir)
        except Exception as e:  # noqa: BLE001 - report every directory, then fail
            failed += 1
            print(terminal_safe(f"cannot write a marker into {run_dir.path}: {e}"), file=sys.stderr)
            continue
        print(terminal_safe(f"wrote {path}  ({sessions})"))
    for fmt in FORMATS:  # files no tab lists where they lie: the format says what they are
        outside = fmt.outside_layout
        count = sum(1 for s in scan.loose if s.format == fmt.id)
        if outside is not None and count:
            print(f"note: {count} director{'ies hold' if count != 1 else 'y holds'} {outside.what}; "
                  f"`tb-advisor doctor` shows how to {outside.fix} them.")
    return 1 if failed else 0
