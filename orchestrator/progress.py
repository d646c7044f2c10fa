"""Rich console output for runs: one line per node transition and a final summary table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from orchestrator.api import RunResult
from orchestrator.gates import GateDecision, GateRequest


class Progress:
    """Prints the current node, module k/N, attempt and last verdict after each transition."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._last = None

    def __call__(self, values: dict) -> None:
        node = values.get("node")
        if not node:
            return
        mods = values.get("modules", [])
        k = int(values.get("active", 0) or 0)
        m = mods[k - 1] if 1 <= k <= len(mods) else {}
        parts = [f"[bold]{node:<13}[/]"]
        if mods and k:
            parts.append(f"module {k}/{len(mods)}")
            parts.append(f"attempt {m.get('attempts', 0)}/{m.get('budget', 0)}")
        if values.get("last_verdict"):
            color = "green" if values["last_verdict"] == "PASS" else "red"
            parts.append(f"last verdict [{color}]{values['last_verdict']}[/]")
        line = "  ".join(parts)
        if line != self._last:
            self.console.print(line)
            self._last = line


def summary_table(result: RunResult) -> Table:
    table = Table(title=f"run {result.run_id}: {result.status}")
    for col in ("module", "name", "status", "attempts", "verdict", "report"):
        table.add_column(col)
    for m in result.modules:
        table.add_row(f"M{m.id}", m.name, m.status, f"{m.attempts}/{m.budget}", m.verdict or "-",
                      (m.report_hash or "-")[:12])
    if result.final.get("verdict"):
        table.add_row("final", str(result.final.get("file", "")), "", "", str(result.final.get("verdict")),
                      str(result.final.get("report_hash") or "-")[:12])
    return table


def ask(console: Console):
    """An interactive prompt for ``--approve prompt``: garbage is denied; no terminal (EOF) stops at the gate."""

    def prompt(req: GateRequest) -> GateDecision | None:
        console.print(f"\n[bold yellow]gate {req.gate}[/]" + (f" (module {req.module})" if req.module else "")
                      + f": {req.title}")
        for d in req.details:
            console.print(f"  {d}")
        try:
            choice = console.input(f"[bold]{'/'.join(req.choices)}[/] > ").strip()
            note = console.input("note (optional) > ").strip() if choice != "approve" else ""
        except EOFError:  # nobody to ask: leave the run waiting, like --approve stop
            return None
        from orchestrator.gates import parse_decision

        return parse_decision({"decision": choice, "note": note}, req.gate)

    return prompt
