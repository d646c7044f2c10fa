"""`python -m orchestrator resume op_dir`: continue the latest run (after a crash or a gate decision)."""

from __future__ import annotations

import argparse
import logging

from orchestrator.cli._common import console, fail, print_result


def register(sub) -> None:
    p = sub.add_parser("resume", help="continue the latest run of op_dir from its last checkpoint")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("--approve", choices=["prompt", "auto", "stop"], default=None,
                   help="approval mode for the rest of the run (default: the run's own)")
    p.add_argument("--run", dest="run_id", default=None, help="a specific run id (default: the latest)")
    p.set_defaults(func=_resume)


def _resume(args: argparse.Namespace) -> int:
    from orchestrator import api
    from orchestrator.errors import ForgeError
    from orchestrator.progress import Progress, ask

    try:
        result = api.resume(args.op_dir, approve=args.approve, run_id=args.run_id, prompt=ask(console),
                            on_update=Progress(console))
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    except Exception as exc:  # infrastructure failure: the checkpoint keeps the run resumable
        logging.getLogger(__name__).debug("run failed", exc_info=True)
        return fail(f"internal error: {type(exc).__name__}: {exc} (rerun with -v for details; the run can be "
                    f"continued with `python -m orchestrator resume {args.op_dir}`)")
    return print_result(result, args.op_dir)
