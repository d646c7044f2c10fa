"""``python -m runtime.verify op_dir target``: exit 0 on PASS, 1 on any other verdict (ERROR included), 2 on
misuse, 3 when not even an ERROR report could be made (e.g. the reports directory cannot be written)."""

from __future__ import annotations

import argparse
import logging
import sys

from runtime.cli_io import Parser, kernel_path_problem, output_console, run_main
from runtime.verdicts import Verdict

__all__ = ["build_parser", "main"]

NAME = "runtime.verify"
"""How messages name the command; ``python -m orchestrator verify`` passes its own (:func:`main`'s ``prog``)."""


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 1 << 63:
        raise argparse.ArgumentTypeError(f"must be in [0, 2**63), got {value}")
    return value


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command line; ``prog``: the command the user typed (``python -m orchestrator verify``), else this
    module's. Usage and the error line name it (UX audit s47: ``orchestrator verify --help`` said
    ``python -m runtime.verify``)."""
    p = Parser(prog=prog or f"python -m {NAME}", name=prog or NAME, usage_on_error=True,
                description="Verify a stage file or <op>_impl.py of an operator directory (the only authority "
                            "that can advance a module). Exit 0 PASS, 1 failing verdict, 2 misuse.")
    p.add_argument("op_dir", help="operator directory (SPEC.md, golden.py, ...)")
    p.add_argument("target", help="modules/<op>_module<sfx>_impl.py or <op>_impl.py (relative to op_dir or cwd)")
    p.add_argument("--case", metavar="NAME", help="verify a single case by name")
    p.add_argument("--json", action="store_true", help="print the JSON report instead of the table")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse (ERROR, nothing runs) when the OS sandbox (bubblewrap) is not available and only "
                        "process-only isolation could be used")
    p.add_argument("--previous-stage", metavar="FILE", help="verified stage file of module k-1 (frozen check)")
    p.add_argument("--reports-dir", metavar="DIR", help="also write <report_hash>.json here")
    p.add_argument("--unseen-seed", metavar="N", type=_seed,
                   help="seed of the unseen cases and call order (default: a fresh one, printed in the report); "
                        "give the report's seed to verify on the same cases again")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    return p


def main(argv: list[str] | None = None, *, prog: str | None = None) -> int:
    """Verify, print the report, return the exit code; ``prog`` is the command's name in usage and messages."""
    who = prog or NAME
    try:
        return _main(argv, prog, who)
    except KeyboardInterrupt:  # Ctrl-C: one line, as the orchestrator and the emulator say it (newcomer audit s30)
        print(f"{who}: interrupted (no verdict; the candidate's processes were stopped)", file=sys.stderr)
        return 130


def _main(argv: list[str] | None, prog: str | None, who: str) -> int:
    args = build_parser(prog).parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    from runtime.verify import VerifyUsageError, verify

    problem = kernel_path_problem(args.op_dir, args.target)  # as verify says it, with the closest name (UX s49)
    if problem:
        print(f"{who}: {problem}", file=sys.stderr)
        return 2
    try:
        report = verify(args.op_dir, args.target, previous_stage=args.previous_stage, case=args.case,
                        require_sandbox=args.require_sandbox, reports_dir=args.reports_dir,
                        unseen_seed=args.unseen_seed)
    except VerifyUsageError as exc:
        print(f"{who}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - e.g. the reports dir cannot be written: one line, never a traceback
        print(f"{who}: ERROR: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    if report.sandbox.isolation == "process-only":  # the one line that says the OS sandbox was not used
        print(f"{who}: candidate isolation is process-only ({report.sandbox.isolation_note}); "
              f"--require-sandbox refuses this", file=sys.stderr)
    if args.json:
        sys.stdout.write(report.to_json() + "\n")
    else:
        from runtime.verify._render import render_report

        console = output_console()  # piped: unwrapped, the panel as wide as its content (UX audit s47)
        console.print(render_report(report, fit=not console.is_terminal))
    return 0 if report.verdict == Verdict.PASS else 1


if __name__ == "__main__":
    sys.exit(run_main(main))
