"""The command line: one module per subcommand, assembled by :mod:`orchestrator.cli.main`."""
