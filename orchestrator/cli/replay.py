"""`python -m orchestrator replay op_dir --trace DIR`: run again with a recorded trace's decisions."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.adapters.script_check import script_problem
from orchestrator.cli._common import console, drive, fail, given, golden_process_early, warn_without_sandbox


def register(sub) -> None:
    p = sub.add_parser("replay", help="run op_dir again, taking gate decisions (and model calls) from a trace")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("--trace", default=None,
                   help="recorded trace directory (default: <op_dir>/traces/default)")
    p.add_argument("--fresh", action="store_true", help="move an earlier run's artifacts to .forge/previous/")
    p.add_argument("--agents", default=None, help="scripted:<script.yaml> (default: the configured agents)")
    p.add_argument("--budget", type=int, default=None, help="attempts per module (default: the recording's)")
    p.add_argument("--no-module-gate", action="store_true",
                   help="no module gate (default: as the recording; a trace from before run options were recorded "
                        "had one unless it says otherwise)")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to run where the kernels would run without the OS sandbox (bubblewrap)")
    p.set_defaults(func=_replay)


def _replay(args: argparse.Namespace) -> int:
    with golden_process_early():  # boots while orchestrator.api (LangGraph) is imported: intake does not wait
        return _replay_now(args)


def _replay_now(args: argparse.Namespace) -> int:
    from orchestrator import api
    from orchestrator.ui.progress import Progress

    source = args.trace or str(Path(args.op_dir) / api.DEFAULT_TRACE)
    if Path(source).is_dir():  # else the replay says what is missing, without announcing it first
        console.print(f"replaying {source}: recorded agent answers and human decisions, verification live")
    progress = Progress(console)
    if args.budget is not None and args.budget < 1:
        return fail("--budget must be at least 1", 2)
    if args.agents and (problem := script_problem(args.agents)):  # before any run state exists
        return fail(problem, 2)
    options = api.RunOptions(agents=args.agents, fresh=args.fresh, require_sandbox=args.require_sandbox,
                             **given(budget=args.budget, module_gate=False if args.no_module_gate else None))
    hooks = api.Hooks(on_update=progress, on_start=progress.start,
                      on_notice=progress.notice)
    warn_without_sandbox(args.require_sandbox)
    return drive(args.op_dir, lambda: api.replay(args.op_dir, source, options, hooks=hooks), progress)
