"""The tb-advisor command: argument parsing, one module per subcommand (commands/), terminal progress
and doctor's rendering.

It owns the command line: flags, exit codes, one-line errors on stderr and what a terminal shows. It
gets reports through report/door.py and renders them with views/export/; it analyses nothing itself.
"""
