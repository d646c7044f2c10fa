"""`python -m orchestrator resume op_dir`: continue the latest run (after a crash or a gate decision)."""

from __future__ import annotations

import argparse

from orchestrator.cli._common import console, drive, warn_without_sandbox


def register(sub) -> None:
    p = sub.add_parser("resume", help="continue the latest run of op_dir from its last checkpoint")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("--approve", choices=["prompt", "auto", "stop"], default=None,
                   help="approval mode for the rest of the run (default: the run's own)")
    p.add_argument("--run", dest="run_id", default=None, help="a specific run id (default: the latest)")
    p.set_defaults(func=_resume)


def _resume(args: argparse.Namespace) -> int:
    from orchestrator import api
    from orchestrator.ui.progress import Progress, ask

    progress = Progress(console)
    hooks = api.Hooks(prompt=ask(console, args.op_dir, progress), on_update=progress, on_start=progress.start)
    warn_without_sandbox()
    return drive(args.op_dir, lambda: api.resume(args.op_dir, approve=args.approve, run_id=args.run_id, hooks=hooks),
                 progress)
