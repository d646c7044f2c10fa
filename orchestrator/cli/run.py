"""`python -m orchestrator run op_dir`: start a run (design, module loop, cleanup, final gate)."""

from __future__ import annotations

import argparse
import logging

from orchestrator.cli._common import console, fail, print_result


def register(sub) -> None:
    p = sub.add_parser("run", help="develop the operator in op_dir (design -> modules -> final kernel)")
    p.add_argument("op_dir", help="operator directory (SPEC.md + golden.py)")
    p.add_argument("--approve", choices=["prompt", "auto", "stop"], default="prompt",
                   help="gates: ask interactively, approve automatically, or stop and exit (default prompt)")
    p.add_argument("--agents", default=None,
                   help="scripted:<script.yaml> for deterministic scripted agents (default: configured model)")
    p.add_argument("--budget", type=int, default=10, help="attempts per module before the blocked gate")
    p.add_argument("--no-module-gate", action="store_true", help="do not stop at the gate after each module")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from orchestrator import api
    from orchestrator.errors import ForgeError
    from orchestrator.progress import Progress, ask

    if args.budget < 1:
        return fail("--budget must be at least 1", 2)
    try:
        result = api.run(args.op_dir, agents_spec=args.agents, approve=args.approve, budget=args.budget,
                         module_gate=not args.no_module_gate, prompt=ask(console),
                         on_update=Progress(console))
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    except Exception as exc:  # infrastructure failure: the checkpoint keeps the run resumable
        logging.getLogger(__name__).debug("run failed", exc_info=True)
        return fail(f"internal error: {type(exc).__name__}: {exc} (rerun with -v for details; the run can be "
                    f"continued with `python -m orchestrator resume {args.op_dir}`)")
    return print_result(result, args.op_dir)
