"""`python -m orchestrator audit op_dir`: prove every verified commit is backed by a matching PASS report."""

from __future__ import annotations

import argparse

from rich.markup import escape

from orchestrator.cli._common import console, fail


def register(sub) -> None:
    p = sub.add_parser("audit", help="check the op dir's audit history (.forge/git) against the stored reports")
    p.add_argument("op_dir", help="operator directory")
    p.set_defaults(func=_audit)


def _audit(args: argparse.Namespace) -> int:
    from orchestrator import readonly  # not orchestrator.api: that loads the pipeline (~2.5 s, UX audit s46)
    from orchestrator.errors import ForgeError

    try:
        result = readonly.audit(args.op_dir)
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    if result.ok:
        console.print(f"[green]audit OK[/]: {result.checked} check(s); every verified transition is committed and "
                      "every verified commit matches its PASS report")
        return 0
    for p in result.problems:
        console.print(f"[red]commit {p.commit[:12]}[/] ({escape(p.subject)}): {escape(p.message)}")
    return fail(f"audit FAILED: {len(result.problems)} problem(s); first offending commit {result.problems[0].commit}")
