"""Helpers shared by the subcommand modules."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.markup import escape

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
    err_console.print(f"[red]error:[/] {escape(message)}")
    sys.stderr.flush()
    return code


def print_result(result, op_dir: str) -> int:
    """Summary table plus what to do next; exit 0 delivered/waiting, 1 aborted/interrupted."""
    from orchestrator.progress import summary_table

    console.print(summary_table(result))
    for divergence in getattr(result, "divergences", []):
        console.print(f"[red]divergence:[/] {escape(divergence)}")
    if getattr(result, "divergences", []):
        console.print("[red]the replay diverged from its recording[/] (the live verdicts above decided the run)")
        return 1
    if result.status == "waiting" and result.gate is not None:
        g = result.gate
        if result.message:
            console.print(escape(result.message))
        console.print(f"[yellow]waiting at gate '{g.gate}'[/]: {escape(g.title)}")
        if g.gate == "blocked":
            console.print(f"  decide with `python -m orchestrator approve {op_dir} --choice "
                          "hint|raise_budget|rollback|abort [--note ...]`, then `resume`")
        else:
            console.print(f"  decide with `python -m orchestrator approve {op_dir}` or "
                          f"`python -m orchestrator reject {op_dir} --note \"...\"`, then "
                          f"`python -m orchestrator resume {op_dir}`")
        return 0
    if result.status == "delivered":
        console.print(f"[green]delivered[/] {result.final.get('file')} + README.md "
                      f"(final report {str(result.final.get('report_hash'))[:12]})")
        if result.message:
            console.print(escape(result.message))
        return 0
    console.print(f"[red]{result.status}[/] {escape(result.message)}")
    return 1


def drive(op_dir: str, start) -> int:
    """Run ``start()`` (an api call returning a RunResult) and print its result; the one error policy of
    run/replay/resume: a user mistake is one line, an infrastructure failure says how to continue."""
    import logging

    from orchestrator.errors import ForgeError

    try:
        result = start()
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    except Exception as exc:  # infrastructure failure: the checkpoint keeps the run resumable
        logging.getLogger(__name__).debug("run failed", exc_info=True)
        return fail(f"internal error: {type(exc).__name__}: {exc} (rerun with -v for details; the run can be "
                    f"continued with `python -m orchestrator resume {op_dir}`)")
    return print_result(result, op_dir)
