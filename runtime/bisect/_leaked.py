"""A name read in one Python loop that only an earlier, finished loop binds: the last trip's value leaked (session 48).

A kernel written as passes (attn_softmax: a max pass, a sum pass, a normalise pass, each ``for t in range(n)``)
binds per-tile locals in each pass. Reading one of the sum pass' locals in the normalise pass (``div(r, ts)`` where
``div(r, tsum)`` was meant) is legal Python - the name still holds the sum pass' last tile - and traces without
complaint; the golden names neither the per-tile share nor the quotient, so every replay leaves the departure among
the normalise line and the sum line that made ``ts``. The source says which: the read is where the slip is.
"""

from __future__ import annotations

import ast

from runtime.bisect._rules import _function_at

__all__ = ["bypassed_dead_value", "leaked_loop_name"]


def _body_holds(loop: ast.For, line: int) -> bool:
    """``line`` lies in the loop's body (not on its header)."""
    return bool(loop.body) and loop.body[0].lineno <= line <= (loop.end_lineno or loop.lineno)


def _bound_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _bindings(fn: ast.FunctionDef, name: str) -> list[ast.stmt] | None:
    """Every statement of ``fn`` binding ``name`` (assignments, loop targets, ``with``), or None when ``name`` is a
    parameter or bound in a way not followed here (a nested function, a comprehension, ``global``)."""
    args = fn.args
    if name in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]} \
            or (args.vararg is not None and args.vararg.arg == name) or (args.kwarg is not None and args.kwarg.arg == name):
        return None
    out: list[ast.stmt] = []
    for n in ast.walk(fn):
        if n is not fn and isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            if name in _bound_names(n) or (isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == name):
                return None
        elif isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
            return None
        elif isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(name in _bound_names(t) for t in targets):
                out.append(n)
        elif isinstance(n, ast.For | ast.With) and name in _bound_names(n.target if isinstance(n, ast.For) else
                                                                        ast.Tuple(elts=[i.optional_vars for i in n.items
                                                                                        if i.optional_vars], ctx=ast.Load())):
            out.append(n)
        elif isinstance(n, ast.NamedExpr) and n.target.id == name:
            return None
    return out


def leaked_loop_name(source: str | None, line: int | None) -> tuple[int, str] | None:
    """(``line``, why) when the statement on ``line`` sits in a Python ``for`` loop and reads a local that only an
    *earlier* loop of the same function binds - a loop that ended before the reading loop began, neither holding the
    other - and that binding is not an accumulator (it does not read the name itself). None otherwise (parsed, never
    run).

    Such a read sees the earlier loop's last trip in every trip of the reading loop: ``div(r, ts)`` in the normalise
    pass, ``ts`` being the sum pass' per-tile share (``tsum`` was meant). A value meant to cross loops is carried in a
    tensor (``tsum[:] = ...``, a subscript write, not a binding) or bound outside both loops, so neither fires this;
    nor does a read after the loop outside any loop (a loop's last value is sometimes wanted there)."""
    if not source or line is None or (found := _function_at(source, line)) is None:
        return None
    fn = found[1]
    stmts = [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)
             and not isinstance(n, ast.FunctionDef | ast.For | ast.While | ast.If | ast.With)]
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For)]
    readers = [lp for lp in loops if _body_holds(lp, line)]
    if not stmts or not readers:
        return None
    stmt = min(stmts, key=lambda s: (s.end_lineno or s.lineno) - s.lineno)
    reader = max(readers, key=lambda lp: lp.lineno)
    value = stmt.value if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr | ast.Return) else stmt
    if value is None:
        return None
    reads = sorted({n.id for n in ast.walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)})
    for name in reads:
        binds = _bindings(fn, name)
        if not binds:
            continue
        owners = [lp for lp in loops if all(_body_holds(lp, b.lineno) for b in binds)
                  and (lp.end_lineno or lp.lineno) < reader.lineno]
        if not owners:
            continue
        owner = max(owners, key=lambda lp: lp.lineno)
        if any(isinstance(b, ast.AugAssign) or name in {n.id for n in ast.walk(getattr(b, "value", None) or b)
                                                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
               for b in binds if not isinstance(b, ast.For | ast.With)):
            continue  # an accumulator (``acc = acc + t``): its end value is what the loop was for
        if any(isinstance(b, ast.For | ast.With) for b in binds):
            continue  # a loop index or a context's value: not a computed value
        where = ", ".join(str(b.lineno) for b in binds)
        return line, (f"line {line} reads {name!r} inside the loop starting at line {reader.lineno}, but only the "
                      f"loop at lines {owner.lineno}-{owner.end_lineno} binds it (line {where}), and that loop ended "
                      f"before this one began: every trip here reads that loop's last value (a per-trip local of "
                      "another pass leaked into this one - the value carried across passes was meant)")
    return None


def bypassed_dead_value(source: str | None, line: int | None) -> tuple[int, str] | None:
    """(``line``, why) when the statement on ``line`` reads a local ``a`` while an earlier statement of the same
    function, after ``a``'s last binding, computed ``b`` from ``a`` and nothing in the function ever reads ``b``;
    None otherwise (parsed, never run).

    Why (session 48): ``v2 = transpose(v1, 1, 2)`` then ``v3 = reshape(v1, ..)`` where ``reshape(v2, ..)`` was meant
    (bn_training_reduce). The emulator drops the dead transpose, so no replay can offer its value; a re-layout of the
    input has no golden, and the departure is left among the reduction and the reshape. A value computed and never
    read is what was meant for the next reader of its source: the read that took the source instead is the slip."""
    if not source or line is None or (found := _function_at(source, line)) is None:
        return None
    fn = found[1]
    stmt = next((n for n in ast.walk(fn) if isinstance(n, ast.Assign) and n.lineno == line), None)
    if stmt is None:
        return None
    loads: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    if not isinstance(stmt.value, ast.Call):
        return None
    # (a computed local handed straight to the call: not a module, a constant, a parameter or a loop index)
    reads = {n.id for n in stmt.value.args if isinstance(n, ast.Name)}
    for a in sorted(reads):
        binds = _bindings(fn, a)
        if not binds or not all(isinstance(b, ast.Assign) and isinstance(b.value, ast.Call) for b in binds):
            continue
        last = max((b.lineno for b in binds if b.lineno < line), default=fn.lineno)
        for d in ast.walk(fn):
            if not (isinstance(d, ast.Assign) and last < d.lineno < line and len(d.targets) == 1
                    and isinstance(d.targets[0], ast.Name)):
                continue
            b = d.targets[0].id
            if b == a or loads.get(b, 0) or not isinstance(d.value, ast.Call) \
                    or not any(isinstance(n, ast.Name) and n.id == a for n in d.value.args):
                continue
            if len(_bindings(fn, b) or []) != 1:
                continue
            return line, (f"line {d.lineno} computes {b!r} from {a!r} and nothing ever reads {b!r}, while line {line} "
                          f"reads {a!r} itself: {b!r} was meant there (the computed value bypassed)")
    return None
