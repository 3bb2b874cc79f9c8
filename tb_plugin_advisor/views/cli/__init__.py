"""The tb-advisor command: argument parsing, one module per subcommand, terminal progress."""
