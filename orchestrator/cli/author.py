"""`python -m orchestrator author op_dir`: re-record an op's shipped trace from its authoring script.

For maintainers: run it after changing a prompt, a skill, the roles or the orchestrator, because a shipped
trace replays only while every request the agents build is byte-identical to the recorded one.
"""

from __future__ import annotations

import argparse

from orchestrator.cli._common import console, fail


def register(sub) -> None:
    p = sub.add_parser("author", help="(maintainers) re-record <op_dir>/traces/<name> from authoring/script.yaml")
    p.add_argument("op_dir", help="operator directory with authoring/script.yaml")
    p.add_argument("--script", default=None, help="script file (default <op_dir>/authoring/script.yaml)")
    p.add_argument("--name", default="default", help="trace name under <op_dir>/traces/ (default 'default')")
    p.add_argument("--no-check", action="store_true",
                   help="ship without the portability check (replays under simulated other machines)")
    p.set_defaults(func=_author)


def _author(args: argparse.Namespace) -> int:
    from orchestrator.adapters.authoring import author_trace
    from orchestrator.errors import ForgeError

    try:
        result = author_trace(args.op_dir, script=args.script, name=args.name, check=not args.no_check,
                              on_check=lambda r: console.print(f"  portability: {'ok' if r.ok else 'FAIL'} "
                                                               f"{r.variant.name} ({r.seconds:.0f} s)"))
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    console.print(f"recorded {result.trace_dir}: run {result.status}, {result.llm_calls} model call(s), "
                  f"{result.tool_calls} tool call(s), {result.decisions} human decision(s)")
    return 0
