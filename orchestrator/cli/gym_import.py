"""`python -m orchestrator import <gym op folder | test_<op>.py> <new op dir>`: bring a gym operator in.

Writes SPEC.md (PTO Forge format), golden.py (the gym's torch golden + an adapter), ``<op>_impl.py`` (the
gym impl + ``<op>_wrapper``) and IMPORT.md, and prints line by line what it could not map. Never overwrites
existing files unless ``--force``. See docs/gym.md.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from rich.markup import escape

from orchestrator.cli._common import console, fail
from orchestrator.command import cli_command, shell_path


def register(sub) -> None:
    p = sub.add_parser("import", help="import a PyPTO gym operator or a KernelBench task file into a new operator "
                                      "directory",
                       description="Read a gym operator (SPEC.md, <op>_golden.py, test_<op>.py, <op>_impl.py) or a "
                                   "KernelBench-format task file (class Model, get_inputs) and write a PTO Forge "
                                   "operator directory; report what could not be mapped.")
    p.add_argument("source", help="gym operator folder, or its test_<op>.py, or a KernelBench task .py")
    p.add_argument("dest", help="operator directory to create")
    p.add_argument("--force", action="store_true", help="replace files that already exist in DEST")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds for running the gym golden / test (default 300)")
    p.add_argument("--run", metavar="COMMAND",
                   help="real gym layout: what a gym user types after `python` to run the operator's test, e.g. "
                        "\"test_rms_norm.py case_002\" or \"-m pytest tests/ops/...\" (default: its test script)")
    p.add_argument("--cwd", help="real gym layout: the folder to run --run from, relative to the operator folder")
    p.add_argument("--flags", default="", help="real gym layout: emulator switches for the run, e.g. "
                                               "\"--npuarch DAV_3510\"")
    p.set_defaults(func=_run)


def _missing_source(source: str) -> str | None:
    """One line for a source that does not exist, naming the closest file or folder next to it (``rms_nrm``:
    ``did you mean '.../rms_norm'?``), or None. Why: it said only "does not exist (give a gym op folder or its
    test_<op>.py)", also for a mistyped KernelBench task file (UX audit s47)."""
    from runtime.opdir import closest_dir_hint

    path = Path(source)
    if path.exists():
        return None
    return (f"{source} does not exist (give a gym op folder, its test_<op>.py or a KernelBench task .py)"
            + closest_dir_hint(path, dirs_only=False))


def _run(args: argparse.Namespace) -> int:
    from orchestrator.adapters.kernelbench import is_task_file

    if (missing := _missing_source(args.source)) is not None:
        return fail(missing)
    if is_task_file(args.source):  # a KernelBench-format task file (class Model + get_inputs): docs/kernelbench.md
        from orchestrator.cli.task_import import run_task_import

        return run_task_import(args)
    from orchestrator.adapters.gym import GymImportError, import_gym_op

    try:
        report = import_gym_op(args.source, args.dest, force=args.force, timeout=args.timeout, command=args.run,
                               cwd=args.cwd, flags=shlex.split(args.flags))
    except GymImportError as exc:
        return fail(str(exc))
    if report.test_rc is not None:
        console.print(f"[dim]the gym test ran on the emulator: exit status {report.test_rc}[/]", soft_wrap=True)
    for line in report.unmapped:
        console.print(f"[yellow]not mapped:[/] {escape(line)}", soft_wrap=True)
    for line in report.notes:
        console.print(f"[dim]note:[/] {escape(line)}", soft_wrap=True)
    console.print(f"[green]imported[/] {escape(report.op_name)} into {escape(str(args.dest))}: "
                  f"{', '.join(report.written)}", soft_wrap=True)
    dest = escape(shell_path(str(args.dest)))
    console.print(f"next: {cli_command()} intake {dest}; {cli_command()} verify {dest} "
                  f"{escape(shell_path(str(Path(args.dest) / f'{report.op_name}_impl.py')))}", soft_wrap=True)
    return 0
