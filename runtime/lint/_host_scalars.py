"""Host-code names that provably hold a size, never an array's values (OL62's exemptions).

Why: OL62 refuses arithmetic on a wrapper's inputs in host code, and it took every unannotated parameter of a host
helper for an input and every ``+=`` for array arithmetic. So the tile count a model writes in the commonest way -
``def ceil_div(a, b): return (a + b - 1) // b`` called as ``ceil_div(x.shape[0], TILE)``, or ``t = n // TILE`` then
``t += 1`` for a tail - was refused as host math, while the same expression inline in the wrapper passed (red team
round 38, an honest look-alike). A size carries no data: what a kernel's host code may compute is arithmetic on
shapes and constants. The proof here is syntactic and conservative: a name is a size only when *every* binding of
it is an expression built from integer/float constants, ``x.shape[...]``, ``x.size(...)``, ``x.numel()``,
``x.dim()``, ``x.ndim``, ``len(...)``, module-level numeric constants and other sizes, through arithmetic,
``min``/``max``/``int``/``abs``/``round`` and ``math``'s integer functions; a helper's parameter is a size only when
the helper is only ever called by name (never passed, stored or aliased), is not a wrapper verify calls, and every
call passes a size in its place. Anything else stays an array, as before.
"""

from __future__ import annotations

import ast

from runtime.lint._source import ParsedFile

__all__ = ["scalar_names", "scalar_params"]

_SIZE_CALLS = frozenset({"min", "max", "int", "abs", "round", "len"})
_MATH_SIZE = frozenset({"math.ceil", "math.floor", "math.gcd", "math.lcm", "math.log2", "math.isqrt", "math.prod",
                        "math.trunc"})
_SIZE_METHODS = frozenset({"size", "numel", "dim", "bit_length"})
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Div, ast.Pow, ast.LShift, ast.RShift, ast.BitAnd,
          ast.BitOr, ast.BitXor)


def _module_constants(pf: ParsedFile) -> set[str]:
    """Module-level names bound exactly once, to a numeric expression of constants and earlier such names."""
    key = "host_scalar_consts"
    hit = pf._memo.get(key)
    if hit is not None:
        return hit
    bound: dict[str, int] = {}
    for stmt in pf.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[stmt.name] = bound.get(stmt.name, 0) + 1
            continue  # their locals are theirs (a `global` there is a binding of the function's, see _bindings)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound[node.id] = bound.get(node.id, 0) + 1
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    name = (alias.asname or alias.name).split(".")[0]
                    bound[name] = bound.get(name, 0) + 1
    for node in pf.nodes(ast.Global):  # a function that rebinds a module name makes it no constant
        for name in node.names:
            bound[name] = bound.get(name, 0) + 2
    out: set[str] = set()
    for stmt in pf.tree.body:
        target, value = None, None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and bound.get(target.id) == 1 and _is_size(pf, value, out, module=True):
            out.add(target.id)
    pf._memo[key] = out
    return out


def _is_size(pf: ParsedFile, node: ast.AST | None, sizes: set[str], *, module: bool = False) -> bool:
    """``node`` is built only from sizes (see the module docstring); ``sizes``: the names already proven."""
    if node is None:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, complex)
    if isinstance(node, ast.Name):
        return node.id in sizes or (not module and node.id in _module_constants(pf))
    if module:  # a module constant: constants and arithmetic only
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH):
            return _is_size(pf, node.left, sizes, module=True) and _is_size(pf, node.right, sizes, module=True)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return _is_size(pf, node.operand, sizes, module=True)
        return False
    if isinstance(node, ast.Attribute):
        return node.attr == "ndim"
    if isinstance(node, ast.Subscript):
        value = node.value
        return isinstance(value, ast.Attribute) and value.attr == "shape" and _is_size(pf, node.slice, sizes)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _ARITH) and _is_size(pf, node.left, sizes) and _is_size(pf, node.right, sizes)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)) and _is_size(pf, node.operand, sizes)
    if isinstance(node, ast.Compare):  # a bool is 0 or 1: `t += n % TILE > 0`
        return _is_size(pf, node.left, sizes) and all(_is_size(pf, c, sizes) for c in node.comparators)
    if isinstance(node, ast.IfExp):
        return _is_size(pf, node.body, sizes) and _is_size(pf, node.orelse, sizes)
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _SIZE_METHODS:
            return all(_is_size(pf, a, sizes) for a in node.args)
        name = pf.name(func)
        if name == "len" and len(node.args) == 1:
            return not isinstance(node.args[0], ast.Starred)
        if name in _SIZE_CALLS or name in _MATH_SIZE:
            return bool(node.args) and all(_is_size(pf, a, sizes) for a in node.args)
    return False


def _bindings(pf: ParsedFile, fn: ast.AST) -> dict[str, list[ast.AST | None]]:
    """Every local name of ``fn`` -> the values bound to it; ``None`` for a binding whose value is not a plain
    expression (a ``for`` target, unpacking, ``with ... as``, an import, a nested def, ``global`` ...)."""
    out: dict[str, list[ast.AST | None]] = {}
    for node in pf.nodes_in(fn, ast.Name):
        if not isinstance(node.ctx, (ast.Store, ast.Del)):  # type: ignore[attr-defined]
            continue
        parent = pf.parents.get(node)
        name = node.id  # type: ignore[attr-defined]
        if isinstance(parent, ast.Assign) and node in parent.targets:
            out.setdefault(name, []).append(parent.value)
        elif isinstance(parent, (ast.AnnAssign, ast.NamedExpr)) and parent.target is node:
            out.setdefault(name, []).append(parent.value)
        elif isinstance(parent, ast.AugAssign) and parent.target is node:
            out.setdefault(name, []).append(parent.value)  # n += size keeps a size a size
        else:
            out.setdefault(name, []).append(None)
    for node in pf.nodes_in(fn, (ast.Global, ast.Nonlocal)):
        for name in node.names:  # type: ignore[attr-defined]
            out.setdefault(name, []).append(None)
    return out


def scalar_names(pf: ParsedFile, fn: ast.AST, params: set[str]) -> set[str]:
    """Locals of ``fn`` every binding of which is a size (the greatest such set), plus the names of ``params``
    already known to be sizes. A name that is also one of ``fn``'s array parameters is never a size."""
    key = ("host_scalar_names", id(fn), frozenset(params))
    hit = pf._memo.get(key)
    if hit is not None:
        return hit
    binds = _bindings(pf, fn)
    args = getattr(fn, "args", None)
    declared = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} if args is not None else set()
    if args is not None:
        declared |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    cand = {n for n, vs in binds.items() if all(v is not None for v in vs) and (n not in declared or n in params)}
    sizes = set(params) | cand
    while True:
        drop = {n for n in cand if n in sizes and not all(_is_size(pf, v, sizes) for v in binds[n])}
        if not drop:
            break
        sizes -= drop
        cand -= drop
    pf._memo[key] = sizes
    return sizes


def scalar_params(pf: ParsedFile, fn: ast.AST) -> set[str]:
    """Parameters of the module-level host helper ``fn`` that every call in the file passes a size (module
    docstring). Empty for a wrapper, a function named anywhere but in the call position, or one never called."""
    name = getattr(fn, "name", None)
    if name is None or pf.functions.get(name) is not fn or any(w is fn for w in pf.wrappers()):
        return set()
    key = ("host_scalar_params", id(fn))
    hit = pf._memo.get(key)
    if hit is not None:
        return hit
    out: set[str] = set()
    pf._memo[key] = out  # a recursive helper: its own calls prove nothing while this is being decided
    a = fn.args
    if a.vararg is not None or a.kwarg is not None:
        return out
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    defaults = dict(zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
    every = positional + [p.arg for p in a.kwonlyargs]
    calls: list[ast.Call] = []
    for node in pf.nodes(ast.Name):
        if node.id != name or not isinstance(node.ctx, ast.Load):
            continue
        call = pf.parents.get(node)
        if not isinstance(call, ast.Call) or call.func is not node:
            return out  # passed, stored or aliased: its callers are not all in sight
        calls.append(call)
    if not calls:
        return out
    proven = set(every)
    for call in calls:
        if any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
            return out
        caller = pf.enclosing_fn.get(call)
        if caller is None or caller is fn:
            return out  # module-level or recursive calls: not worth proving
        caller_params = scalar_params(pf, caller) if pf.functions.get(getattr(caller, "name", "")) is caller \
            else set()
        sizes = scalar_names(pf, caller, caller_params)
        given: dict[str, ast.AST] = dict(zip(positional, call.args, strict=False))
        given.update({k.arg: k.value for k in call.keywords if k.arg is not None})
        for p in list(proven):
            value = given.get(p, defaults.get(p))
            if not _is_size(pf, value, sizes):
                proven.discard(p)
    out |= proven
    return out
