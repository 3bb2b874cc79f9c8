"""One module per `tb-advisor` subcommand: each exposes add_arguments(parser) and run(args) -> int."""

import os

from tb_plugin_advisor.errors import AdvisorError


def require_logdir(logdir: str) -> None:
    """LOGDIR must exist and be listable (s3:// / gs://: with a plain-words credentials error)."""
    if "://" in logdir:
        from tb_plugin_advisor.sources.remote import check_remote_logdir

        check_remote_logdir(logdir)
    elif not os.path.isdir(logdir):
        raise AdvisorError(f"LOGDIR {logdir} is not a directory")
