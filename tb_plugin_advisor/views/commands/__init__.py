"""One module per `tb-advisor` subcommand: each exposes add_arguments(parser) and run(args) -> int."""

import os

from tb_plugin_advisor.errors import AdvisorError


def require_logdir(logdir: str) -> None:
    """A local LOGDIR must exist (remote ones are checked by reading them); AdvisorError → exit 2."""
    if "://" not in logdir and not os.path.isdir(logdir):
        raise AdvisorError(f"LOGDIR {logdir} is not a directory")
