"""Helpers shared by the subcommand modules."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def not_built(what: str, issue: str):
    """A handler for a subcommand whose capability is not built yet: says so and exits with code 3."""

    def handler(args: argparse.Namespace) -> int:
        err_console.print(f"[yellow]not built yet:[/] {what} (tracked in {issue}).")
        return 3

    return handler


def fail(message: str, code: int = 1) -> int:
    """Print one clear error line and return the exit code (never a traceback for user mistakes)."""
    err_console.print(f"[red]error:[/] {message}")
    sys.stderr.flush()
    return code
