"""`python -m orchestrator lint`: the same command as `python -m runtime.lint`."""

from __future__ import annotations

import argparse

from orchestrator.command import cli_command


def register(sub) -> None:
    p = sub.add_parser("lint", help="lint kernel/design files (= python -m runtime.lint)", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from runtime.lint.__main__ import main

    return main(args.rest, prog=f"{cli_command()} lint")  # usage and messages name the command typed
