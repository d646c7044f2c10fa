"""`python -m orchestrator verify`: the same command as `python -m runtime.verify`."""

from __future__ import annotations

import argparse

from orchestrator.command import cli_command


def register(sub) -> None:
    p = sub.add_parser("verify", help="verify a stage file or the final kernel (= python -m runtime.verify)",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from runtime.verify.__main__ import main

    return main(args.rest, prog=f"{cli_command()} verify")  # usage and messages name the command typed
