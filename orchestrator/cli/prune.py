"""`python -m orchestrator prune op_dir [--keep N]`: bound checkpoint growth."""

from __future__ import annotations

import argparse

from orchestrator.cli._common import console, fail


def register(sub) -> None:
    p = sub.add_parser("prune", help="keep only the last N checkpoints per run (default 20)")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("--keep", type=int, default=20, help="checkpoints to keep per run thread")
    p.set_defaults(func=_prune)


def _prune(args: argparse.Namespace) -> int:
    from orchestrator import api
    from orchestrator.errors import ForgeError

    try:
        result = api.prune(args.op_dir, keep=args.keep)
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    if result.runs == 0:  # UX audit s44: "pruned 0 checkpoint(s) in 0 run(s)" for a folder that never ran, or a typo
        console.print(f"nothing to prune: no run under {args.op_dir}/.forge", soft_wrap=True, highlight=False)
        return 0
    console.print(f"pruned {result.deleted} checkpoint(s) in {result.runs} run(s); kept {result.kept}")
    return 0
