"""`python -m orchestrator status op_dir`: modules, attempts, verdicts, costs, where the run waits."""

from __future__ import annotations

import argparse

from rich.markup import escape

from orchestrator.cli._common import console, fail
from orchestrator.command import cli_command, shell_path


def register(sub) -> None:
    p = sub.add_parser("status", help="show the latest run of op_dir")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_status)


def _status(args: argparse.Namespace) -> int:
    from orchestrator import readonly  # not orchestrator.api: that loads the pipeline (~2 s, UX audit s45)
    from orchestrator.errors import ForgeError
    from orchestrator.ui.summary import attempt_lines, calls_line, summary_table

    try:
        result = readonly.status(args.op_dir)
    except ForgeError as exc:
        return fail(exc.message, exc.code, json_out=args.json)
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    console.print(summary_table(result))
    console.print(f"phase: {result.phase}   last node: {result.node}")
    cost = f"${result.cost_usd:.4f}" if result.cost_usd is not None else "n/a (no priced model calls)"
    console.print(f"agent dispatches: {escape(calls_line(result))}   model cost: {cost}")
    failed = attempt_lines(result)
    if failed:
        console.print("failed attempts:")
        for line in failed:
            console.print(f"  {escape(line)}", highlight=False)
    if result.gate:
        console.print(f"[yellow]waiting at gate '{result.gate.gate}' #{result.gate.seq}[/]: "
                      f"{escape(result.gate.title)} (choices: {', '.join(result.gate.choices)})")
    pend = result.pending_decision
    if pend is not None:
        console.print(f"pending decision: [bold]{escape(pend.decision)}[/] for gate {escape(pend.for_gate.label())}"
                      + (f" (note: {escape(pend.note)})" if pend.note else "")
                      + f"; `{cli_command()} resume {escape(shell_path(args.op_dir))}` applies it", soft_wrap=True)
    if result.cause:
        console.print(f"[red]{result.status}[/]: {escape(result.cause)}")
    if result.message:
        console.print(escape(result.message), soft_wrap=True)  # a command in it stays on one line
    return 0
