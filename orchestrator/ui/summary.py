"""The run summary ``status`` prints: the modules table, the dispatch counts, the failed attempts.

Why apart from :mod:`orchestrator.ui.progress`: ``status`` is a read-only command a user types often; progress
imports the gate screens, whose views read checkpoints through the compiled LangGraph graph (~2 s of start-up
on a loaded machine, UX audit s45). This module needs only rich and the result model.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from orchestrator.store.results import RunResult
from runtime.verdicts import Verdict


def clip(text: str, limit: int) -> str:
    """``text`` cut at a word boundary with an ellipsis when longer than ``limit`` (never mid-word)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,;:") + " …"


LAST_FAILURE_CHARS = 60
"""The summary table's last-failure cell: one short line (``status`` and the report give the whole reason)."""


NO_MODULES = "no modules yet: no design has passed its check"
"""The summary of a run without a checked design (blocked or stopped at the design step)."""


class _NarrowAware:
    """A table that becomes one line per row where it cannot fit without splitting words.

    Why: at ``COLUMNS=40`` rich squeezed the summary's six columns by cutting words (``modu|le``, ``rec|ipr|oca|l``,
    ``0/1|0``; UX audit s44). The table is kept whenever its narrowest rendering (every column as wide as its
    longest word) fits; below that each row is ``M1 square: pending, 0/10 attempts, ...``, wrapped at spaces."""

    def __init__(self, table: Table, lines: list[str], rows: list[list[str]]) -> None:
        self.table, self.lines, self.empty = table, lines, not rows
        headers = [str(c.header) for c in table.columns]
        words = [max((len(w) for cell in [h, *(r[i] for r in rows)] for w in cell.split()), default=1)
                 for i, h in enumerate(headers)]
        # a word-long column each, one space of padding on either side, a border between and around columns
        self.needed = sum(words) + 2 * len(words) + len(words) + 1

    def __rich_console__(self, console: Console, options):  # noqa: ANN201 - rich's RenderResult protocol
        if self.empty:  # a run blocked at its design drew a table of headers and no row (UX audit s47)
            yield Text(str(self.table.title), style="italic")
            yield Text(f"  {NO_MODULES}")
            return
        if self.needed <= options.max_width:
            yield self.table
            return
        yield Text(str(self.table.title), style="italic")
        for line in self.lines:
            yield Padding(Text(line), (0, 0, 0, 2))  # wrapped lines keep the indent


def summary_table(result: RunResult) -> _NarrowAware:
    """Modules of the run; the "last failure" column only when a module is not verified (there it is what a user
    acts on; a verified module's earlier failures are in ``status`` and the report), so a delivered run's table
    fits 80 columns. On a terminal too narrow for the table, one line per module (:class:`_NarrowAware`)."""
    table = Table(title=f"run {result.run_id}: {result.status}")
    lines: list[str] = []
    rows: list[list[str]] = []
    failing = [m for m in result.modules if m.status != "verified" and m.last_failure]
    for col in ("module", "name", "status", "attempts", "verdict", "report") + (("last failure",) if failing else ()):
        table.add_column(col, overflow="fold")
    for m in result.modules:
        row = [f"M{m.id}", m.name, m.status, f"{m.attempts}/{m.budget}", m.verdict or "-", (m.report_hash or "-")[:12]]
        if failing:
            row.append(escape(clip(m.last_failure, LAST_FAILURE_CHARS)) if m in failing else "-")
        table.add_row(*row)
        rows.append(row)
        lines.append(f"M{m.id} {m.name}: {m.status}, {m.attempts}/{m.budget} attempts"
                     + (f", {m.verdict}" if m.verdict else "") + (f" {row[5]}" if m.report_hash else "")
                     + (f"; last failure: {clip(m.last_failure, LAST_FAILURE_CHARS)}" if m in failing else ""))
    if result.final.get("verdict"):
        rows.append(["final", str(result.final.get("file", "")), "", "", str(result.final.get("verdict")),
                     str(result.final.get("report_hash") or "-")[:12], *([""] if failing else [])])
        table.add_row(*rows[-1])
        lines.append(f"final {result.final.get('file', '')}: {result.final.get('verdict')} "
                     f"{str(result.final.get('report_hash') or '-')[:12]}")
    return _NarrowAware(table, lines, rows)


def calls_line(result: RunResult) -> str:
    """Dispatches and model calls per role, e.g. ``implementer 10 (28 model calls)`` (the one definition:
    a dispatch is one task given to a role; a model call is one ``llm_call`` trace event)."""
    roles = sorted(set(result.agent_calls) | set(result.model_calls))
    parts = []
    for role in roles:
        calls = result.model_calls.get(role, 0)
        parts.append(f"{role} {result.agent_calls.get(role, 0)}" + (f" ({calls} model call{'s' if calls != 1 else ''})"
                                                                     if calls else ""))
    return ", ".join(parts) or "none"


def attempt_lines(result: RunResult) -> list[str]:
    """One line per failed attempt: ``M1 attempt 3 AGENT_ERROR (2 model calls): <reason>``."""
    out = []
    for r in result.attempts:
        if r.get("verdict") == Verdict.PASS:
            continue
        calls = r.get("model_calls")
        n = f" ({calls} model call{'s' if calls != 1 else ''})" if calls else ""
        reason = str(r.get("reason") or "")
        for prefix in (f"{r.get('verdict')}: ", f"{r.get('verdict')} "):  # "FAIL_NUMERIC: FAIL_NUMERIC file" (s45)
            if reason.startswith(prefix):
                reason = reason[len(prefix):]
                break
        out.append(f"M{r.get('module')} attempt {r.get('attempt')} {r.get('verdict')}{n}: {reason}")
    return out
