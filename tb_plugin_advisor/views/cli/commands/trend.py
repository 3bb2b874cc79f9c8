"""`tb-advisor trend LOGDIR`: many captures of one job in capture order, where the series changed
and why.

    tb-advisor trend LOGDIR [--run PATTERN ...] [--order time|given] [--format text|md|json]
                     [--output FILE] [--fail-on-regression PCT] [--cache-dir DIR | --no-cache]

Exit status: 0 trend made (gate passed); 1 when `--fail-on-regression PCT` trips (the newest
significant change of a series is a slowdown by more than PCT); 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys

from tb_plugin_advisor.formatting import format_pct, plain, significant
from tb_plugin_advisor.views.cli.commands import require_logdir
from tb_plugin_advisor.views.cli.commands.report import (
    add_cache_arguments,
    add_parallel_arguments,
    cache_note,
    check_parallel_arguments,
    open_cli_cache,
)
from tb_plugin_advisor.views.export.json_text import indented_json

EPILOG = """\
Series: without --run, every run directory is a series (PyTorch captures in one directory, TF/JAX
sessions of one run). --run PATTERN picks runs: a run directory or run name (`ctl` is the directory
ctl, not ctl_slow), a unique start of a name, or a shell glob across directories ('resnet50_*');
give --run several times to join runs into one series (--order given keeps that order).

A change point needs both: a t-test on the captures' log median step times, against the spread
between captures of the series, p < {alpha_captures} (Bonferroni over the splits tried), and the
Mann-Whitney test on the steady steps of both sides, p < {alpha_steps}; and a shift of at least
{min_effect_pct} %. Same-config noise between captures is therefore not flagged.

Analysed reports are kept in $TB_ADVISOR_CACHE_DIR, else $XDG_CACHE_HOME/tb-plugin-advisor, else
~/.cache/tb-plugin-advisor (never the logdir); TB_ADVISOR_CACHE_DIR=off or --no-cache turns it off.

exit status: 0 trend made (gate passed); 1 --fail-on-regression tripped; 2 bad input.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tb_plugin_advisor.trend.rules import CHANGE

    parser.epilog = EPILOG.format(**{k: plain(v) for k, v in CHANGE.items()})
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("logdir", metavar="LOGDIR", help="the directory you pass to tensorboard --logdir")
    parser.add_argument(
        "--run", action="append", default=[], metavar="PATTERN",
        help="runs of the series: a run directory or name, a unique start of one, or a glob; repeatable")
    parser.add_argument("--order", choices=("time", "given"), default="time",
                        help="captures in capture-time order (default) or in the order of --run")
    parser.add_argument("--format", choices=("text", "md", "json"), default="text", help="output format")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the trend to FILE instead of stdout")
    parser.add_argument(
        "--fail-on-regression", type=float, metavar="PCT",
        help="exit 1 when the newest significant change of a series is a slowdown by more than PCT %%")
    add_cache_arguments(parser)
    add_parallel_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from tb_plugin_advisor.report.door import ReportDoor
    from tb_plugin_advisor.sources.discovery import scan_logdir
    from tb_plugin_advisor.trend.build import is_regression, trend_of
    from tb_plugin_advisor.trend.select import select_series
    from tb_plugin_advisor.views.cli.progress import ProgressBar
    from tb_plugin_advisor.views.export.trend import render

    check_parallel_arguments(args)
    require_logdir(args.logdir)
    scan = scan_logdir(args.logdir)
    series = select_series(scan.sessions, args.run, args.order, args.logdir)
    cache = open_cli_cache(args, args.logdir)
    sessions = list({s.run: s for _, group in series for s in group}.values())
    bar = ProgressBar()
    try:
        door = ReportDoor(cache, scheduler=args.scheduler, workers=args.workers)
        outcomes, from_cache = door.reports(sessions, bar.callback(f"reading {len(sessions)} captures"))
    finally:
        bar.close()
    trend = trend_of(series, outcomes)
    trend["cache"] = dict(cache.stats(), served=from_cache, captures=len(sessions))
    cache_note(cache, "trend")
    text = indented_json(trend, indent=1) + "\n" if args.format == "json" else render(
        trend, args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.fail_on_regression is None:
        return 0
    tripped = is_regression(trend, args.fail_on_regression)
    for cp in tripped:
        allowed = plain(args.fail_on_regression)
        print(
            f"tb-advisor trend: regression in {cp['run']}: step time {format_pct(cp['delta_pct'])} slower "
            f"(significant, p = {significant(cp['p_value'], 2)}) is worse than the allowed {allowed} %",
            file=sys.stderr,
        )
    return 1 if tripped else 0
