"""Rich terminal rendering of a VerifyReport (humans only; agents get JSON or ``sanitized()``)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from runtime.sandbox._text import safe_text
from runtime.targets import DEFAULT_NPUARCH
from runtime.verdicts import Verdict
from runtime.verify._report import VerifyReport

__all__ = ["render_report"]

_STYLE = {Verdict.PASS: "bold green", Verdict.ERROR: "bold magenta"}


def _shown(text: Any, *, one_line: bool = False) -> Text:
    """Report text as plain rich ``Text`` (never markup), terminal-safe (the sandbox already cleaned what the
    candidate said; this keeps any other text - lint's quotes of the source, a report read back from disk -
    from acting on the terminal), continuation lines indented under their bullet so that a multi-line message
    cannot pass for a line of the report itself."""
    return Text(safe_text(str(text), one_line=one_line).replace("\n", "\n      "))


def render_report(report: VerifyReport, *, fit: bool = False) -> Any:
    """Verdict banner, reasons, sandbox layers, and one table row per case and leaf; ``fit``: the panel as wide as
    its content (output to a pipe or a file, laid out unwrapped), not the console's width."""
    style = _STYLE.get(report.verdict, "bold red")
    head = Text.assemble((report.verdict, style), f"  {safe_text(report.target, one_line=True)}",
                         f"  ({report.kind}{'' if report.module is None else f' M{report.module}'})")
    parts: list[Any] = [head, Text(f"target toolchain: pypto {report.pypto_target} ({report.pypto_target_source})" + (
        f", npuarch {report.npuarch} (SPEC.md)" if report.npuarch != DEFAULT_NPUARCH else ""))]
    for reason in report.reasons[:20]:
        parts.append(_shown(f"  - {reason}"))
    if report.lint is not None:
        lint = "available" if report.lint.available else "NOT AVAILABLE"
        parts.append(Text(f"lint: {lint}, {len(report.lint.findings)} finding(s), "
                          f"{len(report.lint.blocking)} blocking"))
    if report.sandbox.layers:
        layers = " ".join(f"{k}={'on' if v else 'OFF'}" for k, v in sorted(report.sandbox.layers.items()))
        parts.append(Text(f"sandbox: {layers}"))
    unseen = [c for c in report.cases if c.unseen]
    if unseen:
        parts.append(Text(f"unseen cases: {len(unseen)} (seed {report.unseen_seed}; verify again on them with "
                          f"--unseen-seed {report.unseen_seed})"))
    if report.cases:
        table = Table(show_lines=False, header_style="bold")
        for col in ("case", "leaf", "status", "max_diff", "ratio", "atol/rtol"):
            table.add_column(col, overflow="fold")
        for case in report.cases:
            if not case.leaves:
                err = case.error.message[:60] if case.error else ""
                table.add_row(_shown(case.name, one_line=True), "-", case.status, "-", "-", f"{case.atol:g}/{case.rtol:g}")
                if err:
                    table.add_row("", "", Text(safe_text(err, one_line=True), style="red"), "", "", "")
            for leaf in case.leaves:
                ok = "ok" if leaf.all_close else (leaf.error or "FAIL")
                table.add_row(_shown(case.name, one_line=True), _shown(leaf.path, one_line=True),
                              Text(safe_text(ok, one_line=True), style="green" if leaf.all_close else "red"),
                              f"{leaf.max_diff:.3g}", f"{leaf.out_of_tolerance_ratio:.3g}",
                              f"{leaf.atol:g}/{leaf.rtol:g}")
        parts.append(table)
    parts.append(Text(f"report hash {report.report_hash}", style="dim"))
    return Panel(Group(*parts), title="verification report", border_style=style, expand=not fit)
