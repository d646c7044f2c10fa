"""`python -m runtime.lint PATH... [--stage S] [--op-dir D] [--previous-stage F] [--json]`.

Exit status: 2 when any S0/S1 finding fails, or on misuse (one clear message on stderr); 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys

from runtime.cli_io import run_main

EXIT_OK = 0
EXIT_BLOCKING = 2
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, exit 2 (argparse's default is usage + exit 2)
        print(f"runtime.lint: {message} (see --help)", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m runtime.lint",
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from runtime.lint import LintUsageError, blocking, lint_paths, render_json, render_skill, render_text

    if args.list_rules:
        sys.stdout.write(render_skill())
        return EXIT_OK
    if not args.paths:
        print("runtime.lint: no paths given (see --help)", file=sys.stderr)
        return EXIT_USAGE
    stage = "module" if args.stage == "auto" else args.stage
    try:
        findings = lint_paths(args.paths, stage=stage, op_dir=args.op_dir, previous_stage=args.previous_stage,
                              include_passes=args.all, auto_stage=args.stage == "auto")
    except LintUsageError as exc:
        print(f"runtime.lint: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(render_json(findings) if args.json else render_text(findings))
    return EXIT_BLOCKING if blocking(findings) else EXIT_OK


if __name__ == "__main__":
    sys.exit(run_main(main))
