"""A loop one trip too long, from a kernel that raised on a view starting exactly at its tensor's end (session 48).

``k_loops = (K + N_TILE) // N_TILE`` where ``(K + N_TILE - 1) // N_TILE`` was meant (apply_adam_w_v2, ``K`` a whole
number of tiles): the last trip's view ``view(weight, [M, N_TILE], [0, k_idx * N_TILE])`` starts at offset ``K``, and
the emulator refuses it ("offset 2048 on axis 1 is outside the tensor extent 2048"). The view is right - every trip
before it read its tile - and the trip count is not. Named only from the source and the message.
"""

from __future__ import annotations

import ast

from runtime.bisect._rules import _VIEW_OOB_RE, _function_at, _last_assignment, _loop_index, _names, _view_at

__all__ = ["static_trip_count_source"]


def static_trip_count_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """(line, why) for a kernel that raised because a view's offset on an axis equals the tensor's extent there
    (the view starts one whole step past the end, not inside a partial tile), when that offset is the index of the
    one loop around the view times a step (through locals: ``k_off = k_idx * N_TILE``), and that loop's trip count
    is a local computed on its own line by a floor division whose expression holds the same step (a tile count);
    None otherwise (parsed, never run). The line named is the count's."""
    m = _VIEW_OOB_RE.search(message or "")
    if not source or error_line is None or m is None or int(m.group(1)) != int(m.group(3)) or int(m.group(1)) <= 0:
        return None
    axis = int(m.group(2))
    found = _function_at(source, error_line)
    if found is None:
        return None
    _tree, fn = found
    view = _view_at(fn, error_line, axis)
    if view is None:
        return None
    off: ast.expr = view.args[2].elts[axis]  # type: ignore[union-attr]
    if isinstance(off, ast.Name):
        a = _last_assignment(fn, off.id, view.lineno)
        if a is None:
            return None
        off = a.value
    if not (isinstance(off, ast.BinOp) and isinstance(off.op, ast.Mult)):
        return None
    sides = [off.left, off.right]
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For) and n.lineno < view.lineno <= (n.end_lineno or n.lineno)
             and isinstance(n.iter, ast.Call) and n.iter.args and _loop_index(n) is not None
             and any(isinstance(s, ast.Name) and s.id == _loop_index(n) for s in sides)]
    if len(loops) != 1:
        return None
    loop = loops[0]
    step = next(s for s in sides if not (isinstance(s, ast.Name) and s.id == _loop_index(loop)))
    count = loop.iter.args[0]  # type: ignore[attr-defined]
    if not isinstance(count, ast.Name):
        return None
    made = _last_assignment(fn, count.id, loop.lineno)
    if made is None or not any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.FloorDiv) for b in ast.walk(made.value)):
        return None
    if not _names(step) or not _names(step) <= _names(made.value):
        return None
    return made.lineno, (f"the kernel raised at line {error_line}: the view starts at offset {m.group(1)} on axis "
                         f"{axis}, exactly the tensor's extent - a whole step past its end, in a trip of the loop at "
                         f"line {loop.lineno} after every earlier trip read its tile; that loop's count "
                         f"{count.id!r} is computed on line {made.lineno} from the same step "
                         f"({ast.unparse(step)}): the count is one trip too many (the ceiling division?)")
