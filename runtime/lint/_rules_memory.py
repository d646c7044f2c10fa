"""OL53: the golden function inventory in MEMORY.md is implemented (✅) for every row in scope.

Each golden operation must be mapped to a pypto call before a gate passes; at a module gate only the rows
of modules 1..k are in scope, at the final gate every row. (That a ✅ row's line really holds the named pypto
call is checked by the orchestrator's audit node against the audited stage file.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from runtime.lint._opdir import parse_stage_name
from runtime.lint._registry import Hit, LintContext, Skip, check

__all__ = ["inventory_rows"]

_HEAD = re.compile(r"^#{1,6}\s.*inventory", re.IGNORECASE)
_INT = re.compile(r"\d+")


def inventory_rows(text: str) -> list[tuple[int, dict[str, str], list[str]]]:
    """(line, {header: cell}, cells) for each data row of the golden function inventory table."""
    lines = text.splitlines()
    start = next((i for i, t in enumerate(lines) if _HEAD.match(t.strip())), None)
    if start is None:
        return []
    rows = []  # type: ignore[var-annotated]
    header: list[str] | None = None
    for i in range(start + 1, len(lines)):
        t = lines[i].strip()
        if t.startswith("#"):
            break
        if not t.startswith("|"):
            if rows or header:
                if not t:
                    continue
                break
            continue
        cells = [c.strip() for c in t.strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        rows.append((i + 1, dict(zip(header, cells, strict=False)), cells))
    return rows


def _status(row: dict[str, str], cells: list[str]) -> str:
    for key, value in row.items():
        if "status" in key:
            return value
    return next((c for c in reversed(cells) if c), "")


@check("OL53", "kernel", "memory")
def ol53_inventory(ctx: LintContext) -> Iterator[Hit]:
    if ctx.kind == "memory":
        text, mem_file, scope = ctx.source, "", None
    else:
        op = ctx.require_op()
        if op.memory_text is None:
            raise Skip("no MEMORY.md in the op directory")
        text, mem_file = op.memory_text, str(op.root / "MEMORY.md")
        stage = parse_stage_name(ctx.display, op.op_name)
        scope = stage.modules if ctx.stage == "module" and stage.kind == "stage" else None
    rows = inventory_rows(text)
    if not rows:
        raise Skip("no golden function inventory table in MEMORY.md")
    for line, row, cells in rows:
        if scope is not None:
            mod = next((v for k, v in row.items() if "module" in k), "")
            m = _INT.search(mod)
            if m is None or int(m.group()) not in scope:
                continue
        status = _status(row, cells)
        label = row.get("golden operation") or next((c for c in cells[1:] if c), "?")
        if "✅" not in status:
            yield Hit(f"inventory row `{label}` is not implemented (status `{status or 'empty'}`)", line, 1,
                      file=mem_file)
