"""`tb-advisor diff LOGDIR BASELINE CANDIDATE`: what changed between two profile runs, and is it real.

    tb-advisor diff LOGDIR BASELINE CANDIDATE [--baseline-host H] [--candidate-host H]
                    [--format text|md|json|html] [--output FILE] [--fail-if-slower PCT]
                    [--cache-dir DIR | --no-cache]

BASELINE and CANDIDATE are run names as `tb-advisor doctor` and the Advisor tab list them; give the
same run twice with two hosts to compare hosts of one run.

Exit status: 0 when the diff was made (and the gate, if any, passed); 1 when `--fail-if-slower PCT`
trips (the candidate's step time is significantly slower, mean and median both by more than PCT);
2 when a run or host is unknown or a profile cannot be read.
"""

from __future__ import annotations

import argparse
import sys

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.formatting import plain, signed
from tb_plugin_advisor.readers.formats.registry import file_patterns
from tb_plugin_advisor.views.cli.commands import require_logdir
from tb_plugin_advisor.views.cli.commands.report import (
    add_cache_arguments,
    add_parallel_arguments,
    cache_note,
    check_parallel_arguments,
    open_cli_cache,
)

EPILOG = """\
Run names are those `tb-advisor doctor LOGDIR` lists (e.g. `train/2024_05_01_12_00_00`); a unique
prefix of one, or the run's directory name (`run1_naive`), will do. Give the same
run twice with --baseline-host/--candidate-host to compare two hosts of one run.

A change is "significant" when a test on the per-step times gives p < {alpha} and the shift is at
least {rank_effect} % of the baseline step: Mann-Whitney U when each run has at least {rank_steps} steps;
Welch's t on the log step times with {welch_steps} to {few_steps} steps, which then only calls a change
of at least {welch_effect} % either way (two runs of one configuration drift apart by tens of percent,
and so few steps cannot tell that from a change); with fewer steps no test can decide.

exit status: 0 diff made (gate passed); 1 --fail-if-slower tripped; 2 unknown run or host, or a
profile that cannot be read.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tb_plugin_advisor.diff.stats import SIGNIFICANCE, STEP_TESTS

    rank, welch = STEP_TESTS
    parser.epilog = EPILOG.format(
        alpha=plain(SIGNIFICANCE["alpha"]), rank_steps=rank["min_steps"],
        rank_effect=plain(rank["min_effect_pct"]), welch_steps=welch["min_steps"],
        few_steps=rank["min_steps"] - 1, welch_effect=plain(welch["min_effect_pct"]),
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "logdir", metavar="LOGDIR",
        help="the directory you pass to tensorboard --logdir (leave it out to compare two files)")
    parser.add_argument(
        "baseline", metavar="BASELINE",
        help=f"the run to compare against: a run name, or a profile file ({file_patterns()})")
    parser.add_argument(
        "candidate", metavar="CANDIDATE", nargs="?",
        help="the run to judge: a run name or a profile file")
    parser.add_argument("--baseline-host", metavar="H", help="only this host of the baseline run")
    parser.add_argument("--candidate-host", metavar="H", help="only this host of the candidate run")
    parser.add_argument(
        "--format", choices=("text", "md", "json", "html"), default="text", help="output format"
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write the diff to FILE instead of stdout")
    parser.add_argument("--top", type=int, default=15, metavar="N", help="ops and kernels listed (text, md)")
    parser.add_argument(
        "--fail-if-slower",
        type=float,
        metavar="PCT",
        help="exit 1 when the candidate's step time is significantly slower by more than PCT percent "
        "(a regression gate for CI)",
    )
    add_parallel_arguments(parser)
    add_cache_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from tb_plugin_advisor.diff.compare import diff_reports, is_regression
    from tb_plugin_advisor.report.door import ReportDoor
    from tb_plugin_advisor.sources.discovery import scan_logdir
    from tb_plugin_advisor.sources.runs import find_run, is_profile_file, session_for_file
    from tb_plugin_advisor.views.cli.progress import ProgressBar
    from tb_plugin_advisor.views.export.diff import render

    check_parallel_arguments(args)
    if args.candidate is None:  # `diff BASELINE_FILE CANDIDATE_FILE`
        args.logdir, args.baseline, args.candidate = None, args.logdir, args.baseline
    scan = None

    def session(name: str, role: str):
        nonlocal scan
        if is_profile_file(name):
            return session_for_file(name)
        if args.logdir is None:
            raise AdvisorError(
                f"{role} '{name}' is not a profile file ({file_patterns()}); to compare "
                "runs, give the LOGDIR first: tb-advisor diff LOGDIR BASELINE CANDIDATE")
        if scan is None:
            require_logdir(args.logdir)
            scan = scan_logdir(args.logdir)
        return find_run(scan, name, role)

    # each side from the analysis cache when `report`, `trend`, TensorBoard or an earlier diff read it
    cache = open_cli_cache(args, args.logdir, args.baseline, args.candidate)
    door = ReportDoor(cache, scheduler=args.scheduler, workers=args.workers)
    bar = ProgressBar()  # both runs' progress, one after the other; only when stderr is a terminal
    sides = []
    try:
        for role, name, host in (
            ("baseline", args.baseline, args.baseline_host),
            ("candidate", args.candidate, args.candidate_host),
        ):
            chosen = session(name, role)
            report, _cached = door.report(chosen, host, role=role,
                                          on_progress=bar.callback(f"reading {role} {chosen.run}"))
            sides.append(report)
    finally:
        bar.close()
    cache_note(cache, "diff")
    diff = diff_reports(sides[0], sides[1])
    text = render(diff, args.format, top=max(1, args.top))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")

    if args.fail_if_slower is None:
        return 0
    st = diff["step_time"]
    if is_regression(diff, args.fail_if_slower):
        print(
            f"tb-advisor diff: regression: step time {signed(st['delta_pct'], 1)} % "
            f"(median {signed(st['median_delta_pct'], 1)} %, significant) "
            f"is worse than the allowed {plain(args.fail_if_slower)} %",
            file=sys.stderr,
        )
        return 1
    if not st["significant"] and st["delta_pct"] is not None and st["delta_pct"] > args.fail_if_slower:
        print(
            f"tb-advisor diff: note: step time {signed(st['delta_pct'], 1)} % "
            f"but not significant ({st['reason']}); the gate passes",
            file=sys.stderr,
        )
    return 0
