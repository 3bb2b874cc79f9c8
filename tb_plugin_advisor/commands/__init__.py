"""One module per `tb-advisor` subcommand: each exposes add_arguments(parser) and run(args) -> int."""
