"""The one statement where a kernel departs from its twin in the same file (session 49).

Vendor kernel files often hold the same kernel twice: gather_pa_kv_cache's ``..._nd_kernel_npu`` and
``..._nd_large_token_kernel_npu`` differ only in their tile shapes and loop names. A slip made in the variant that ran
(``block_tables[q_idx, block_idx]`` where its twin reads ``block_tables[q_idx, table_offset + block_idx]``,
``physical_block * block_size + token_offset``, ``range(1)`` for ``range(q_unroll)``) is then the one statement, other
than constants, where the two bodies differ - while the values it feeds may have no golden of their own (a gather's
offsets), so no replay can show it. Read from the source only, and tried only when a departure is left without a
culprit or with one whose own value matches the golden (a claim that cannot stand).
"""

from __future__ import annotations

import ast
import copy

from runtime.bisect._rules import _function_at

__all__ = ["twin_difference"]

_MIN_STATEMENTS = 8


class _NoConstants(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.AST:  # noqa: N802 - the visitor's protocol
        return ast.copy_location(ast.Constant(value=None), node)


def _header(stmt: ast.stmt) -> str:
    """A statement as compared: its own text without the bodies it holds and with every constant blanked (tile
    shapes, loop names)."""
    if isinstance(stmt, ast.For):
        parts: list[ast.AST] = [stmt.target, stmt.iter]
    elif isinstance(stmt, ast.If | ast.While):
        parts = [stmt.test]
    elif isinstance(stmt, ast.With):
        parts = list(stmt.items)
    else:
        parts = [stmt]
    # a copy is blanked: the visitor rewrites the tree it is given, and this one is the analyzer's
    return "|".join(ast.dump(_NoConstants().visit(copy.deepcopy(p))) for p in parts)


def _statements(fn: ast.FunctionDef) -> list[ast.stmt]:
    out: list[ast.stmt] = []

    def walk(body: list[ast.stmt]) -> None:
        for s in body:
            out.append(s)
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and not isinstance(s, ast.FunctionDef | ast.ClassDef):
                    walk(inner)

    walk(fn.body)
    return out


def twin_difference(source: str | None, line: int | None) -> tuple[int, str] | None:
    """(line, why) of the one statement of the function holding ``line`` that differs - other than in constants -
    from the same place of another function of ``source`` whose statements otherwise all match (at least
    :data:`_MIN_STATEMENTS`), when that statement comes before ``line``; None otherwise."""
    if not source or line is None or (found_fn := _function_at(source, line)) is None:
        return None
    tree, fn = found_fn
    mine = _statements(fn)
    if len(mine) < _MIN_STATEMENTS:
        return None
    keys = [_header(s) for s in mine]
    found: list[tuple[ast.FunctionDef, ast.stmt, ast.stmt]] = []
    for other in ast.walk(tree):
        if not isinstance(other, ast.FunctionDef) or other is fn:
            continue
        theirs = _statements(other)
        if len(theirs) != len(mine):
            continue
        diff = [i for i, t in enumerate(theirs) if _header(t) != keys[i]]
        if len(diff) == 1:
            found.append((other, mine[diff[0]], theirs[diff[0]]))
    if len(found) != 1:
        return None
    other, here, there = found[0]
    if here.lineno > line:
        return None
    return here.lineno, (f"{fn.name!r} has a twin in this file, {other.name!r} (line {other.lineno}): their "
                         f"{len(mine)} statements match but for constants, except line {here.lineno} "
                         f"({ast.unparse(_strip(here))[:80]}) where the twin has line {there.lineno} "
                         f"({ast.unparse(_strip(there))[:80]}); the departure is downstream of that line and no "
                         "golden shows the values it makes: that statement is the suspect")


def _strip(stmt: ast.stmt) -> ast.AST:
    """The statement without its body (a loop's header), for the evidence."""
    if isinstance(stmt, ast.For):
        return ast.For(target=stmt.target, iter=stmt.iter, body=[ast.Pass()], orelse=[], lineno=stmt.lineno)
    return stmt
