"""`python -m orchestrator approve|reject op_dir`: record a human decision at the gate a run waits at."""

from __future__ import annotations

import argparse

from orchestrator.cli._common import console, fail
from orchestrator.command import cli_command, shell_path
from orchestrator.gates import GATES


def register(sub) -> None:
    p = sub.add_parser("approve", help="approve the gate the run waits at (blocked gate: --choice)")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("--gate", choices=list(GATES), help="expected gate (checked)")
    p.add_argument("--note", default="", help="a note for the agents")
    p.add_argument("--choice", choices=["hint", "raise_budget", "rollback", "abort"],
                   help="at the blocked gate: hint (needs --note), raise_budget, rollback to design, abort")
    p.add_argument("--budget", type=int, default=None, help="extra attempts for --choice raise_budget")
    p.set_defaults(func=_approve)
    r = sub.add_parser("reject", help="reject the gate the run waits at, with a note for the agents")
    r.add_argument("op_dir", help="operator directory")
    r.add_argument("--gate", choices=list(GATES), help="expected gate (checked)")
    r.add_argument("--note", default="", help="why (required; the agents read it)")
    r.set_defaults(func=_reject)


def _approve(args: argparse.Namespace) -> int:
    from orchestrator import decisions as api  # not orchestrator.api: the pipeline (~2.5 s, UX audit s46)
    from orchestrator.errors import ForgeError

    if args.choice == "hint" and not args.note.strip():
        return fail("--choice hint needs --note \"...\" (the hint the agents read)", 2)
    if args.budget is not None and args.choice != "raise_budget":  # UX audit s44: it was dropped without a word
        return fail("--budget is the number of extra attempts of `--choice raise_budget` (at the blocked gate); "
                    "nothing was recorded", 2)
    try:
        req = api.approve(args.op_dir, gate=args.gate, note=args.note, choice=args.choice, budget=args.budget)
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    what = args.choice or "approval"
    console.print(f"recorded {what} for gate {req.gate} #{req.seq} (applied once, to that gate only); continue with "
                  f"`{cli_command()} resume {shell_path(args.op_dir)}`", soft_wrap=True)
    return 0


def _reject(args: argparse.Namespace) -> int:
    from orchestrator import decisions as api  # not orchestrator.api: the pipeline (~2.5 s, UX audit s46)
    from orchestrator.errors import ForgeError

    if not args.note.strip():  # misuse (exit 2), like any missing required option
        return fail("reject needs --note \"...\" (the agents read it)", 2)
    try:
        req = api.reject(args.op_dir, gate=args.gate, note=args.note)
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    console.print(f"recorded rejection for gate {req.gate} #{req.seq} (applied once, to that gate only); continue with "
                  f"`{cli_command()} resume {shell_path(args.op_dir)}`", soft_wrap=True)
    return 0
