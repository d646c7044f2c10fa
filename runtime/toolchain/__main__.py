"""``python -m runtime.toolchain op_dir kernel``: compile with the real pypto (SIM) and print the cost figures.

Exit codes: 0 accepted, 1 rejected by the real compiler, 2 misuse, 3 toolchain unavailable or broken.
"""

from __future__ import annotations

import argparse
import logging
import sys

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, exit 2
        self.print_usage(sys.stderr)
        print(f"runtime.toolchain: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m runtime.toolchain",
                description="Second opinion: compile a kernel of an operator directory with the real pypto "
                            "0.2.0 (RunMode.SIM) and print its cost-model figures. Exit 0 accepted, 1 "
                            "rejected, 2 misuse, 3 toolchain unavailable.")
    p.add_argument("op_dir", help="operator directory (SPEC.md, golden.py, ...)")
    p.add_argument("kernel", help="<op>_impl.py or modules/<op>_module<sfx>_impl.py (relative to op_dir or cwd)")
    p.add_argument("--pypto-python", metavar="PYTHON",
                   help="interpreter of a venv with pypto==0.2.0, torch, sympy (default: $PTO_FORGE_PYPTO_PYTHON, "
                        "else this interpreter when it has pypto)")
    p.add_argument("--case", metavar="NAME", help="compile for one case only (default: every distinct shape/dtype)")
    p.add_argument("--max-shapes", type=int, metavar="N", help="compile for the first N distinct shapes only")
    p.add_argument("--keep", metavar="DIR", help="keep the cost-model report, Perfetto trace and logs here")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    from runtime.toolchain import ToolchainUsageError, compile_kernel

    try:
        res = compile_kernel(args.op_dir, args.kernel, python=args.pypto_python, case=args.case,
                             max_shapes=args.max_shapes, keep_dir=args.keep)
    except ToolchainUsageError as exc:
        print(f"runtime.toolchain: {exc}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(res.model_dump_json(indent=2) + "\n")
    else:
        _render(res)
    return {"accepted": 0, "rejected": 1}.get(res.status, 3)


def _render(res: object) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from runtime.toolchain import ToolchainResult

    assert isinstance(res, ToolchainResult)
    console = Console()
    console.print(escape(res.summary()))
    if res.shapes:
        table = Table("case", "status", "total cycles", "e2e time", "utilisation", "tasks", "vector", "mte_in",
                      "mte_out", "cube", "s")
        for s in res.shapes:
            c = s.cost

            def pipe(n: str, c: object = c) -> str:
                return f"{c.pipes[n].percent:.1f}%" if c is not None and n in c.pipes else ""  # type: ignore[attr-defined]

            table.add_row(s.case, s.status, str(c.total_cycles) if c else "",
                          f"{c.e2e_time:g}" if c and c.e2e_time is not None else "",
                          f"{c.utilization_percent:.2f}%" if c and c.utilization_percent is not None else "",
                          str(c.task_count or "") if c else "", pipe("vector"), pipe("mte_in"), pipe("mte_out"),
                          pipe("cube"), f"{s.duration_s:.2f}")
        console.print(table)
    if res.error is not None:
        console.print(escape(f"error ({res.error.stage}{', line inferred' if not res.error.line_exact else ''}): "
                             f"{res.error.one_line()}"))
        for d in res.error.detail[:6]:
            console.print(escape(f"  {d}"))
    layers = ", ".join(k for k, v in res.layers.items() if v)
    if res.python:
        console.print(escape(f"{res.duration_s:.1f} s (import {res.import_s or 0:.1f} s, compile+simulate "
                             f"{res.compile_s or 0:.1f} s); sandbox: {layers or 'none'}"), style="dim")


if __name__ == "__main__":
    sys.exit(main())
