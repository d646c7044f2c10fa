"""`python -m orchestrator intake op_dir`: parse and check an operator directory, write nothing.

Prints the parsed contract, the verification cases, the golden inventory and module markers, the
complexity decision and what golden.py produced (shapes only) -- or the list of problems, with exit code 1.
``--json`` prints the :class:`runtime.opdir.IntakeReport` as JSON instead.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from orchestrator.cli._common import console, err_console, fail
from runtime.limits import GOLDEN_CASE_TIMEOUT_S

if TYPE_CHECKING:
    from runtime.opdir import IntakeReport

# (runtime.opdir and the progress display load when the command runs: building the parser imports every
# subcommand module, and `--help` of any command took seconds with them at the top; runtime.limits is a leaf)

EXIT_OK = 0
EXIT_PROBLEMS = 1
SAME_FIELD_SHOWN = 3
"""Problems shown of one file, line and field (the rest are counted; ``--json`` has them all)."""


def register(sub) -> None:
    p = sub.add_parser("intake", help="check an operator directory and print its contract (writes nothing)",
                       description="Check SPEC.md and golden.py of an operator directory; print the contract, "
                                   "cases, inventory and complexity decision, or the problems (exit 1).")
    p.add_argument("op_dir", help="operator directory (holds SPEC.md and golden.py)")
    p.add_argument("--json", action="store_true", help="print the intake report as JSON")
    p.add_argument("--no-golden", action="store_true", help="do not execute golden.py (static checks only)")
    p.add_argument("--timeout", type=float, default=GOLDEN_CASE_TIMEOUT_S,
                   help=f"seconds per case for golden.py; the first case over it stops intake (default {GOLDEN_CASE_TIMEOUT_S:g})")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from orchestrator.ui.progress import working
    from runtime.opdir import intake

    if not args.timeout > 0:  # -1 was accepted: "did not finish within 9 s (6 case(s) x -1 s + 15 s to start)"
        return fail(f"--timeout must be a positive number of seconds (got {args.timeout:g})", 2)
    what = ("checking SPEC.md and running golden.py on every case" if not args.no_golden
            else "checking SPEC.md and golden.py")
    with working(err_console, f"{what} (up to {args.timeout:g} s a case)" if not args.no_golden else what):
        report = intake(args.op_dir, timeout=args.timeout, run_golden=not args.no_golden)
    if args.json:
        console.print_json(report.model_dump_json())
        return EXIT_OK if report.ok else EXIT_PROBLEMS
    if report.spec is not None:
        render(report)
    for note in report.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    if report.problems:
        _render_problems(report)
        return EXIT_PROBLEMS
    console.print(f"[green]intake ok:[/] {escape(report.op_dir)} is a valid operator directory (nothing was written).",
                  soft_wrap=True)
    return EXIT_OK


def _render_problems(report: IntakeReport) -> None:
    n = len(report.problems)
    err_console.print(f"[red]intake failed:[/] {escape(report.op_dir)}: {n} problem{'s' if n != 1 else ''}",
                      soft_wrap=True)
    groups: dict[tuple[str, int | None, str | None], list[Any]] = {}
    for p in report.problems:
        groups.setdefault((p.file, p.line, p.field), []).append(p)
    for (file, line, field_name), same in groups.items():
        where = file if line is None else f"{file}:{line}"
        field = f" [bold]{escape(field_name)}[/]:" if field_name else ""
        # one mistake of golden() is refused once per case: 12 identical lines for a 12-case SPEC (UX audit s47)
        shown = same if len(same) <= SAME_FIELD_SHOWN + 1 else same[:SAME_FIELD_SHOWN]
        for p in shown:
            err_console.print(f"  {escape(where)}:{field} {escape(p.message)}", highlight=False, soft_wrap=True)
        if len(shown) < len(same):
            err_console.print(f"  {escape(where)}:{field} ... and {len(same) - len(shown)} more like these "
                              "(`--json` lists every one)", highlight=False, soft_wrap=True)


def render(report: IntakeReport) -> None:
    """Rich tables for a (possibly partial) intake report."""
    spec = report.spec
    assert spec is not None
    t = Table(title=f"contract: {spec.op_name}", show_header=True)
    for col in ("io", "name", "shape", "dtype", "range", "distribution"):
        t.add_column(col)
    for io, group in (("in", spec.inputs), ("out", spec.outputs)):
        for ts in group:
            rng = "" if ts.range is None else f"[{ts.range[0]:g}, {ts.range[1]:g}]"
            t.add_row(io, ts.name, "[" + ", ".join(str(d) for d in ts.shape) + "]", ts.dtype, rng,
                      ts.distribution if io == "in" else "")
    console.print(t)
    tol = ", ".join(f"{k}: atol={v.atol:g} rtol={v.rtol:g}" for k, v in spec.tolerance.items())
    console.print(f"dynamic axes: {', '.join(spec.dynamic_axes) or '-'}   dtypes: {', '.join(spec.supported_dtypes)}"
                  f"   seeds: {spec.seeds}   tolerance: {tol}", highlight=False, soft_wrap=True)
    if spec.attrs:
        console.print("attributes: " + ", ".join(f"{k}={v!r}" for k, v in spec.attrs.items()), highlight=False, soft_wrap=True)
    if report.has_make_inputs:
        console.print("inputs: from golden.py make_inputs(case, rng)")

    ct = Table(title=f"cases ({len(report.cases)})")
    for col in ("#", "name", "dims", "dtype", "seed", "band", "tail"):
        ct.add_column(col)
    for i, c in enumerate(report.cases, 1):
        ct.add_row(str(i), c.name, ", ".join(f"{k}={v}" for k, v in c.dims.items()), c.dtype, str(c.seed), c.band,
                   "yes" if c.tail else "")
    console.print(ct)

    it = Table(title="golden function inventory")
    for col in ("#", "operation", "shape transformation", "module", "line"):
        it.add_column(col)
    for r in report.inventory:
        it.add_row(str(r.index), r.operation, r.shape, "-" if r.module is None else f"M{r.module}", str(r.line))
    console.print(it)
    if report.markers:
        console.print("module markers: " + "; ".join(f"M{m.module} {m.role} (line {m.line})" for m in report.markers),
                      highlight=False, soft_wrap=True)

    c = report.complexity
    if c is not None:
        xt = Table(title="complexity decision (docs/opdir.md, Complexity decision)")
        xt.add_column("signal")
        xt.add_column("value", justify="right")
        for label, value in (
            ("effective lines (L = lines/30)", f"{c.effective_lines}  (L={c.line_signal:.2f})"),
            ("matmuls", str(c.matmul_count)),
            ("cross-tile reductions", str(c.cross_tile_reduce_count)),
            ("O = (matmuls + reductions)/3", f"{c.op_signal:.2f}"),
            ("state groups (S)", str(c.state_groups)),
            ("total complexity", f"{c.total_complexity:.2f}"),
            ("module_count", str(c.module_count)),
            ("level", c.level),
        ):
            xt.add_row(label, value)
        console.print(xt)
    if report.golden:
        g = report.golden[0]
        console.print(f"golden ran on {len(report.golden)} case(s); first case {g.case}: outputs "
                      + ", ".join(f"{k} {v}" for k, v in g.outputs.items())
                      + "; intermediates " + (", ".join(f"{k} {v}" for k, v in g.intermediates.items()) or "-"),
                      highlight=False, soft_wrap=True)
