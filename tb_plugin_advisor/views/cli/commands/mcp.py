"""`tb-advisor mcp [LOGDIR]`: a Model Context Protocol server over stdio for coding agents, read-only.

    tb-advisor mcp [LOGDIR] [--cache-dir DIR | --no-cache] [--max-profile-mb MB]

Its tools (list_runs, report, diff, trend, doctor, evidence_spans) answer the same JSON as `report`,
`diff`, `trend` and `doctor --json`, cut to named sections; runs are found, read, capped and cached
exactly as the other commands do. An MCP client starts it as a subprocess and talks on its
stdin/stdout; notes go to stderr. Needs the `mcp` package: pip install 'tb-plugin-advisor[mcp]'.
"""

from __future__ import annotations

import argparse

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.views.cli.commands import require_logdir
from tb_plugin_advisor.views.cli.commands.report import add_cache_arguments, open_cli_cache

SDK_PACKAGES = ("mcp", "mcp_types", "pydantic", "anyio")  # what the `mcp` extra brings
INSTALL_HINT = "pip install 'tb-plugin-advisor[mcp]' (Python 3.10 or newer)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "logdir", metavar="LOGDIR", nargs="?", default=".",
        help="the directory you pass to tensorboard --logdir (default: the current directory); the "
        "tools only ever name runs found under it")
    add_cache_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        from tb_plugin_advisor.views.mcp.server import serve
    except ImportError as exc:  # the optional extra is not installed
        if (exc.name or "").split(".")[0] not in SDK_PACKAGES:
            raise
        raise AdvisorError(f"the MCP server needs the mcp package (no {exc.name}): {INSTALL_HINT}") from None
    from tb_plugin_advisor.views.mcp.tools import AdvisorTools

    require_logdir(args.logdir)
    serve(AdvisorTools(args.logdir, open_cli_cache(args, args.logdir)))
    return 0
