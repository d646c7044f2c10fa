"""`python -m orchestrator import TASK.py DEST` for a KernelBench-format task file (see docs/kernelbench.md).

The ``import`` command's parser lives in :mod:`orchestrator.cli.gym_import`; it hands task files here.
"""

from __future__ import annotations

import argparse

from rich.markup import escape

from orchestrator.cli._common import console, fail
from orchestrator.command import cli_command, shell_path


def run_task_import(args: argparse.Namespace) -> int:
    from orchestrator.adapters.kernelbench import TaskImportError, import_task

    try:
        report = import_task(args.source, args.dest, force=args.force, timeout=args.timeout)
    except TaskImportError as exc:
        return fail(f"{args.source}: {exc}")
    for line in report.unmapped:
        console.print(f"[yellow]not mapped:[/] {escape(line)}", soft_wrap=True)
    for line in report.notes:
        console.print(f"[dim]note:[/] {escape(line)}", soft_wrap=True)
    shapes = "; ".join(", ".join(f"{k}={v}" for k, v in p.items()) for p in report.p0_shapes) or "the task's own"
    console.print(f"[green]imported[/] {escape(report.op_name)} into {escape(str(args.dest))}: "
                  f"{', '.join(report.written)} ({report.cases} cases; P0 shapes {escape(shapes)})", soft_wrap=True)
    dest = escape(shell_path(str(args.dest)))
    console.print(f"next: {cli_command()} intake {dest}; {cli_command()} run {dest}", soft_wrap=True)
    return 0
