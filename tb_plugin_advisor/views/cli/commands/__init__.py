"""One module per `tb-advisor` subcommand: each exposes add_arguments(parser) and run(args) -> int."""

import os

from tb_plugin_advisor.errors import AdvisorError


def require_logdir(logdir: str) -> None:
    """LOGDIR must exist and be listable (s3:// / gs://: with a plain-words credentials error). A file
    given here is a profile to a command that reads folders, or one no format claims (an xprof tool's
    output beside a capture, an HLO proto, a `.profile-empty` marker): the error says which, and what
    to give instead."""
    if "://" in logdir:
        from tb_plugin_advisor.sources.remote import check_remote_logdir

        check_remote_logdir(logdir)
    elif os.path.isfile(logdir):
        from tb_plugin_advisor.readers.formats.registry import file_patterns
        from tb_plugin_advisor.sources.runs import is_profile_file

        if is_profile_file(logdir):
            raise AdvisorError(f"{logdir} is a profile file, and this command reads a folder: give the "
                               "folder it lies in")
        raise AdvisorError(f"{logdir} is a file the Advisor does not read (it reads {file_patterns()}): "
                           "give the folder it lies in, and the Advisor finds the profiles under it")
    elif not os.path.isdir(logdir):
        raise AdvisorError(f"LOGDIR {logdir} is not a directory")
