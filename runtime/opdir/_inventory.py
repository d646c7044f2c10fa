"""The *Golden function inventory* header table and the ``# --- Module Mk: role ---`` markers of golden.py.

Both are plain comments, so they are read as text, never by executing golden.py. What a module marker is
comes from `runtime.markers` (the one definition lint, the verifier and the orchestrator use too).

Assignment rule for inventory rows (documented in docs/readme/opdir.md):
1. If the table has a ``Module`` column, its value decides (``M2``, ``2``; empty or ``-`` = unassigned).
2. Otherwise, if module markers appear *inside* the table block (between the header and the last row), a
   row belongs to the module of the nearest marker above it; rows above the first marker are unassigned.
3. Otherwise, if golden.py has no module markers at all, every row belongs to module 1 (a single-module op).
4. Otherwise (markers only in the code) rows stay unassigned (``module=None``); DESIGN.md assigns them.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from runtime.markers import looks_like_marker
from runtime.markers import markers as find_markers
from runtime.opdir._problems import Problem

__all__ = ["InventoryRow", "ModuleMarker", "parse_inventory", "parse_module_markers"]

_HEADER = re.compile(r"^\s*#\s*golden\s+function\s+inventory\b", re.IGNORECASE)
_ROW = re.compile(r"^\s*#\s*\|(.*)\|\s*$")
_RULE = re.compile(r"^[\s|:\-]+$")
_MODULE_VALUE = re.compile(r"^M?(\d+)$", re.IGNORECASE)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class InventoryRow(_Model):
    """One row of the inventory: a mathematical operation of the golden and its shape transformation."""

    index: int
    operation: str
    shape: str
    module: int | None = None
    line: int
    """1-based line of the row in golden.py."""


class ModuleMarker(_Model):
    """A ``# --- Module Mk: role ---`` comment line."""

    module: int
    role: str
    line: int


def parse_module_markers(source: str, file: str = "golden.py") -> tuple[list[ModuleMarker], list[Problem]]:
    """Every module marker in ``source`` with its line; problems for malformed, duplicate or gapped numbering."""
    lines = source.splitlines()
    found = [ModuleMarker(module=m.module, role=m.role, line=m.line) for m in find_markers(lines)]
    problems = [Problem(file=file, line=no, field="module marker",
                        message="malformed module marker; write it as '# --- Module M1: <role> ---'")
                for no, text in enumerate(lines, 1) if looks_like_marker(text)]
    numbers = [m.module for m in found]
    if numbers and sorted(set(numbers)) != list(range(1, max(numbers) + 1)):
        problems.append(Problem(file=file, line=found[0].line, field="module marker",
                                message=f"module markers must number M1, M2, ... without gaps, found "
                                        f"{', '.join(f'M{n}' for n in numbers)}"))
    return found, problems


def _cells(text: str) -> list[str]:
    m = _ROW.match(text)
    assert m is not None
    return [c.strip() for c in m.group(1).split("|")]


def parse_inventory(source: str, file: str = "golden.py") -> tuple[list[InventoryRow], list[Problem]]:
    """Parse the inventory table; returns the rows and the problems (a missing table is a problem)."""
    lines = source.splitlines()
    start = next((i for i, t in enumerate(lines) if _HEADER.match(t)), None)
    if start is None:
        return [], [Problem(file=file, line=1, field="inventory",
                            message="no '# Golden function inventory' header table; add a comment table "
                                    "'# | # | Golden operation | Shape transformation |' with one row per operation")]
    problems: list[Problem] = []
    header: list[str] | None = None
    raw: list[tuple[int, list[str], int | None]] = []  # (line, cells, module from an in-table marker)
    current: int | None = None
    saw_table_marker = False
    for i in range(start + 1, len(lines)):
        text = lines[i]
        marker = find_markers([text])
        if marker:
            if header is None:
                break
            current = marker[0].module
            saw_table_marker = True
            continue
        if _ROW.match(text):
            cells = _cells(text)
            if header is None:
                header = [c.lower() for c in cells]
            elif not all(_RULE.match(c) or c == "" for c in cells):
                raw.append((i + 1, cells, current))
            continue
        if text.strip() in ("#", "") and header is None:
            continue
        break
    if header is None:
        return [], [Problem(file=file, line=start + 1, field="inventory",
                            message="the inventory header is not followed by a '| # | Golden operation | "
                                    "Shape transformation |' table")]
    col_index = _column(header, ("#", "no", "idx", "index", "step"), 0)
    col_op = _column(header, ("golden operation", "operation", "op"), 1)
    col_shape = _column(header, ("shape transformation", "shape"), 2)
    col_module = _column(header, ("module",), None)
    markers, _ = parse_module_markers(source, file)
    rows: list[InventoryRow] = []
    seen: set[int] = set()
    for line, cells, marker_module in raw:
        def cell(col: int | None, cells: list[str] = cells) -> str:
            return cells[col] if col is not None and col < len(cells) else ""

        idx_text = cell(col_index)
        if not idx_text.isdigit():
            problems.append(Problem(file=file, line=line, field="inventory",
                                    message=f"row number must be a positive integer, got {idx_text!r}"))
            continue
        index = int(idx_text)
        if index in seen:
            problems.append(Problem(file=file, line=line, field="inventory", message=f"row number {index} is used twice"))
        seen.add(index)
        if not cell(col_op):
            problems.append(Problem(file=file, line=line, field="inventory", message=f"row {index} has no operation"))
        module: int | None
        if col_module is not None:
            mv = _MODULE_VALUE.match(cell(col_module))
            module = int(mv.group(1)) if mv else None
            if cell(col_module) not in ("", "-", "—") and mv is None:
                problems.append(Problem(file=file, line=line, field="inventory",
                                        message=f"row {index}: module must look like M1 or 1, got {cell(col_module)!r}"))
        elif saw_table_marker:
            module = marker_module
        elif not markers:
            module = 1
        else:
            module = None
        rows.append(InventoryRow(index=index, operation=cell(col_op), shape=cell(col_shape), module=module, line=line))
    if not rows and not problems:
        problems.append(Problem(file=file, line=start + 1, field="inventory", message="the inventory table has no rows"))
    return rows, problems


def _column(header: list[str], names: tuple[str, ...], default: int | None) -> int | None:
    for i, h in enumerate(header):
        if h in names:
            return i
    for i, h in enumerate(header):
        if any(n in h for n in names if len(n) > 2):
            return i
    return default
