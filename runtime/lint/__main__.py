"""`python -m runtime.lint PATH... [--stage S] [--op-dir D] [--previous-stage F] [--json]`.

Exit status: 2 when any S0/S1 finding fails, or on misuse (one clear message on stderr); 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys

from runtime.cli_io import Parser, run_main

EXIT_OK = 0
EXIT_BLOCKING = 2
EXIT_USAGE = 2

NAME = "runtime.lint"
"""How messages name the command; ``python -m orchestrator lint`` passes its own (:func:`main`'s ``prog``)."""


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command line (one error line naming the closest option, exit 2); ``prog``: the command the user typed."""
    p = Parser(prog=prog or f"python -m {NAME}", name=prog or NAME,
                description="Lint PyPTO kernel stage files, final kernels and design documents (OLxx/PFxx rules).")
    p.add_argument("paths", nargs="*", help="files, or op directories (= the files of --stage inside them)")
    p.add_argument("--stage", default="auto", choices=["auto", "design", "module", "final", "performance"],
                   help="gate to lint for; auto (default) picks per file from its name")
    p.add_argument("--op-dir", help="operator directory for cross-file rules (default: inferred)")
    p.add_argument("--previous-stage", help="verified stage file of module k-1 (frozen-module check PF05)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--all", action="store_true", help="also list PASS and SKIP results")
    p.add_argument("--list-rules", action="store_true", help="print the rule table (skills/lint-rules.md)")
    return p


def main(argv: list[str] | None = None, *, prog: str | None = None) -> int:
    """Lint, print the findings, return the exit code; ``prog`` is the command's name in usage and messages."""
    who = prog or NAME
    args = build_parser(prog).parse_args(argv)
    from runtime.lint import LintUsageError, blocking, lint_paths, render_json, render_skill, render_text

    if args.list_rules:
        sys.stdout.write(render_skill())
        return EXIT_OK
    if not args.paths:
        print(f"{who}: no paths given (see --help)", file=sys.stderr)
        return EXIT_USAGE
    stage = "module" if args.stage == "auto" else args.stage
    try:
        findings = lint_paths(args.paths, stage=stage, op_dir=args.op_dir, previous_stage=args.previous_stage,
                              include_passes=args.all, auto_stage=args.stage == "auto")
    except LintUsageError as exc:
        print(f"{who}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(render_json(findings) if args.json else render_text(findings))
    return EXIT_BLOCKING if blocking(findings) else EXIT_OK


if __name__ == "__main__":
    sys.exit(run_main(main))
