"""Rich renderings of gate views (:mod:`orchestrator.ui.views`) and stored verify reports, for the terminal."""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from orchestrator.command import cli_command
from orchestrator.gates import GateRequest, answer_hint
from orchestrator.ui.views import MAX_DIFF_LINES, CaseRow, GateView, case_rows
from runtime.verdicts import Verdict

if TYPE_CHECKING:
    from runtime.verify import VerifyReport


class FitPanel(Panel):
    """A panel as wide as the terminal, or as its content where the output is not a terminal.

    Why: piped, the console is laid out very wide so that nothing is wrapped (orchestrator.cli._common._Console);
    a panel that fills the width would draw a border of a thousand columns. Piped, it fits its content instead
    (its longest line), and a long line stays one line."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.is_terminal or not self.expand:
            yield from super().__rich_console__(console, options)
            return
        fitted = copy.copy(self)
        fitted.expand = False
        yield from Panel.__rich_console__(fitted, console, options)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isinf(x) or math.isnan(x):
        return str(x)
    return f"{x:.3g}"


def case_table(rows: list[CaseRow], title: str = "cases") -> Table:
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for col in ("case", "dims", "dtype", "seed", "max diff", "out-of-tol", "pass"):
        t.add_column(col, justify="right" if col in ("seed", "max diff", "out-of-tol") else "left")
    for r in rows:
        mark = "[green]yes[/]" if r.passed else f"[red]{escape(r.status)}[/]"
        t.add_row(escape(r.case), escape(r.dims), r.dtype, str(r.seed if r.seed is not None else "-"),
                  _fmt(r.max_diff), _fmt(r.oot_ratio), mark)
        if r.error:
            t.add_row("", f"[red]{escape(r.error)}[/]", "", "", "", "", "")
    return t


def _dict_table(rows: list[dict[str, str]], title: str) -> Table:
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for col in rows[0].keys() if rows else []:
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(*(escape(str(v)) for v in r.values()))
    return t


def diff_block(lines: list[str], title: str) -> Panel:
    shown = lines[:MAX_DIFF_LINES]
    more = len(lines) - len(shown)
    body = "\n".join(shown) + (f"\n... {more} more diff line(s) (`{cli_command()} report` shows all)"
                                if more > 0 else "")
    return FitPanel(Syntax(body or "(no change)", "diff", theme="ansi_dark", word_wrap=True), title=escape(title),
                 title_align="left", expand=True)


def gate_renderables(view: GateView, req: GateRequest | None = None) -> list:
    """The sections of a gate screen, in reading order (empty sections are left out)."""
    out: list = []
    head = req.title if req else view.title
    seq = req.seq if req else view.seq
    label = f" #{seq}" if seq else ""
    out.append(Text.from_markup(f"\n[bold yellow]gate {view.gate}{label}[/]"
                                + (f" (module {view.module})" if view.module else "") + f": {escape(head)}"))
    if view.facts:
        facts = Table.grid(padding=(0, 2))
        facts.add_column(style="dim")
        facts.add_column()
        for k, v in view.facts:
            facts.add_row(escape(k), escape(v))
        out.append(facts)
    if view.cause:
        out.append(FitPanel("\n".join(escape(c) for c in view.cause), title=f"cause ({view.cause_source})",
                         title_align="left", border_style="red"))
    if view.decomposition:
        out.append(_dict_table(view.decomposition, "decomposition"))
    if view.interfaces:
        out.append(_dict_table(view.interfaces, "interfaces (module_interfaces.yaml)"))
    if view.rationale:
        out.append(FitPanel(escape(view.rationale), title="rationale (DESIGN.md)", title_align="left"))
    if view.design_diff:
        out.append(diff_block(view.design_diff, f"diff against {view.design_diff_against}"))
    if view.cases:
        out.append(case_table(view.cases))
    if view.code_diff:
        out.append(diff_block(view.code_diff, f"code: {view.code_diff_label}"))
    if view.diagnosis:
        out.append(FitPanel(escape(view.diagnosis), title="debugger's diagnosis", title_align="left"))
    if view.coverage:
        out.append(_dict_table(view.coverage, "golden coverage audit"))
    elif view.coverage_note:
        out.append(Text(view.coverage_note, style="dim"))
    if view.counters:
        c = Table(title="cost counters (emulator, all cases)", title_justify="left", show_edge=False)
        c.add_column("counter")
        c.add_column("value", justify="right")
        for k, v in sorted(view.counters.items()):
            c.add_row(escape(k), f"{v:,}" if isinstance(v, int) else f"{v:,.4g}")
        out.append(c)
    if view.notes:
        out.append(FitPanel("\n".join(escape(n) for n in view.notes), title="more", title_align="left"))
    if req is not None:
        if req.gate == "blocked":
            out.append(Text("choices: hint (a note for the agents, retry) · raise_budget (N more attempts) · "
                            "rollback (back to design) · abort (end the run)"))
        out.append(Text(f"answer: {answer_hint(req.gate)}", style="bold"))
    return out


def print_gate(console: Console, view: GateView, req: GateRequest | None = None) -> None:
    for r in gate_renderables(view, req):
        console.print(r)


def report_renderable(report: VerifyReport) -> Group:
    """A stored verify report for ``show``: header, reasons, case table, lint findings, counters."""
    parts: list = []
    verdict = report.verdict.value
    color = "green" if verdict == Verdict.PASS else "red"
    parts.append(Text.from_markup(f"[bold {color}]{escape(verdict)}[/] {escape(report.target)} "
                                  f"({escape(report.kind)}"
                                  + (f" M{report.module}" if report.module else "") + ")  report "
                                  + escape(report.report_hash[:16])))
    if report.reasons:
        parts.append(FitPanel("\n".join(escape(str(r)) for r in report.reasons[:12]), title="reasons",
                           title_align="left", border_style=color))
    rows = case_rows(report)
    if rows:
        parts.append(case_table(rows))
    lint = report.lint.model_dump() if report.lint is not None else {}
    if lint.get("findings"):
        t = Table(title="lint findings", title_justify="left", show_edge=False)
        for col in ("rule", "severity", "where", "message"):
            t.add_column(col, overflow="fold")
        for f in lint["findings"][:30]:
            t.add_row(escape(str(f.get("rule_id"))), escape(str(f.get("severity", ""))),
                      escape(f"{f.get('file', '')}:{f.get('line', '')}"), escape(str(f.get("message", ""))))
        parts.append(t)
    counters = {k: v for k, v in report.counters.items()
                if isinstance(v, int | float) and not isinstance(v, bool)}
    if counters:
        parts.append(Text("counters: " + ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v:.4g}"
                                                   for k, v in sorted(counters.items()))))
    return Group(*parts)
