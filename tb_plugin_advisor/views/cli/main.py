"""`tb-advisor`: the Advisor for machines without a browser (HPC, CI pipelines).

Dispatch only: each subcommand lives in tb_plugin_advisor.views.cli.commands.<name> and only the chosen one is
imported, so `tb-advisor --help` stays fast and one command's imports never slow down another.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Optional, Sequence

from tb_plugin_advisor import __version__
from tb_plugin_advisor.errors import AdvisorError, error_line
from tb_plugin_advisor.views.export.markup import terminal_safe

# subcommand -> (module under tb_plugin_advisor.views.cli.commands, one-line help)
SUBCOMMANDS = {
    "doctor": ("doctor", "explain what TensorBoard will and won't show for a logdir, and how to fix it"),
    "fix-logdir": ("fix_logdir", "write the missing .profile-empty markers so TensorBoard lists every run"),
    "report": ("report", "diagnose one profile run: bottleneck, precision, Tensor Cores, recommendations"),
    "diff": ("diff", "compare two profile runs per step, per category and per op"),
    "trend": ("trend", "many captures of one job in order: where the series changed, and why"),
    "mcp": ("mcp", "serve the Advisor's answers to coding agents over the Model Context Protocol (stdio)"),
    "demo": ("demo", "start TensorBoard with the Advisor on the bundled sample logdir"),
}

# Commands whose work is done when main returns: the executable then ends without the interpreter's
# teardown, which frees every module and object one by one (45 ms after a report of a 100 MB profile,
# the time to read 10 MB of it). Not the servers (demo, mcp): TensorBoard's exit handlers remove its
# instance files.
ENDS_WITHOUT_TEARDOWN = frozenset({"report", "diff", "trend", "doctor", "fix-logdir"})


def build_parser(chosen: Optional[str] = None) -> argparse.ArgumentParser:
    """The parser; only `chosen`'s module is imported to add its arguments."""
    parser = argparse.ArgumentParser(
        prog="tb-advisor",
        description="Diagnose TensorFlow/JAX profiles: input pipeline vs compute, mixed precision, "
        "Tensor Cores, run-to-run diffs, and why TensorBoard does not show a profile.",
    )
    parser.add_argument("--version", action="version", version=f"tb-advisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            module = importlib.import_module(f"tb_plugin_advisor.views.cli.commands.{module_name}")
            module.add_arguments(sub_parser)
            sub_parser.add_argument(
                "--max-profile-mb",
                type=float,
                metavar="MB",
                help="largest profile read, in MB after decompression (default 512); larger files "
                "are refused with an error instead of exhausting memory",
            )
            sub_parser.set_defaults(_run=module.run)
    return parser


def _chosen_command(argv: Sequence[str]) -> Optional[str]:
    for token in argv:
        if not token.startswith("-"):
            return token if token in SUBCOMMANDS else None
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_chosen_command(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        if getattr(args, "max_profile_mb", None) is not None:
            _set_profile_cap(parser, args.max_profile_mb)
        return int(args._run(args) or 0)
    except AdvisorError as exc:  # bad input: one line that says what and where, no traceback
        print(terminal_safe(error_line(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tb-advisor report … | head`
        return 0


def console_main() -> None:
    """The `tb-advisor` executable: main(), then its exit status. A finished batch command's output is
    flushed and its process ends at once (os._exit); its files are closed and its worker pools shut
    down inside main."""
    argv = sys.argv[1:]
    code = main(argv)
    if _chosen_command(argv) not in ENDS_WITHOUT_TEARDOWN:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # the reader went away (`| head`), or a stream was closed
        pass
    os._exit(code)


def _set_profile_cap(parser: argparse.ArgumentParser, megabytes: float) -> None:
    from tb_plugin_advisor.readers import guarded_io

    try:
        guarded_io.configure(megabytes)
    except ValueError as exc:
        parser.error(str(exc))  # exit 2 with usage, like any bad option


if __name__ == "__main__":
    console_main()
