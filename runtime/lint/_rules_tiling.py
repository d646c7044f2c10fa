"""Tiling rules: tile shapes must be set, and set from compile-time constants.

Tiles are read at trace time; a tile computed from a runtime value (a dynamic dim, a loop index) either
fails with "Not concrete value" or silently bakes in the first shape seen. Cube tiles must satisfy
``0 < L0 <= L1`` and ``L1 % L0 == 0`` (FC4000 otherwise).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._source import ParsedFile, literal_int
from runtime.lint._util import at, kernel_pf

_TILE_SETTERS = {"pypto.set_vec_tile_shapes", "pypto.set_cube_tile_shapes"}


def _setter_calls(pf: ParsedFile, fn: ast.AST) -> list[ast.Call]:
    return [c for c in pf.calls_in.get(fn, []) if pf.name(c.func) in _TILE_SETTERS]


@check("OL04")
def ol04_tiles_set(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        if not any(_setter_calls(pf, f) for f in pf.reachable_from([fn])):
            yield at(fn, f"JIT function `{fn.name}` never calls `pypto.set_vec_tile_shapes` / "
                     "`pypto.set_cube_tile_shapes` (F21004 'tile shape not set')")


@check("OL47")
def ol47_tiles_per_stage(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for name, fn in pf.functions.items():
        if not name.endswith("_impl"):
            continue
        top_setter = any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                         and pf.name(s.value.func) in _TILE_SETTERS for s in fn.body)
        stages = [c for c in pf.calls_in.get(fn, []) if isinstance(c.func, ast.Name) and c.func.id.startswith("pypto_")]
        if top_setter and len(stages) >= 2:
            yield at(fn, f"`{name}` sets tiles once for {len(stages)} `pypto_*` stages; set them per stage")


class _Static(int):
    """An int known to be fixed at trace time whose value the lint does not know (e.g. a loop_unroll factor)."""


STATIC = _Static(1)
_STATIC_NODE = ast.Constant(value=None)
"""Stands for a name whose value is a compile-time int the lint does not know (resolves to ``STATIC``)."""


_MAX_BITS = 64
"""Largest int (in bits) the tile-size resolver computes with."""


class _Resolver:
    """Resolve a tile argument to an int using literals, module constants and earlier local assignments.

    Names bound by ``for i, factor in pypto.loop_unroll(...)`` (the factor) and by ``for t in range(...)`` are
    Python ints at trace time, hence compile-time constants: they resolve to ``STATIC``.
    """

    def __init__(self, pf: ParsedFile, fn: ast.FunctionDef | None) -> None:
        self.pf = pf
        self.fn = fn
        self._memo: dict[tuple[int, int], int | list | None] = {}
        """(node id, line) -> value: every node is resolved once per line, so chains of names stay linear
        (``a = b + b; b = c + c; ...`` was exponential in the chain length)."""
        self._assigned_memo: dict[tuple[str, int], ast.AST | None] = {}
        self._configs: set[str] | None = None
        self._table_memo: dict[tuple[str, str], ast.Dict | ast.List | ast.Tuple | None] = {}
        self._bindings: tuple[dict[str, ast.AST], dict[str, list[tuple[int, ast.AST]]]] | None = None
        self.static_names: set[str] = set()
        for node in pf.nodes_in(fn, ast.For) if fn is not None else []:
            it, target = node.iter, node.target  # type: ignore[attr-defined]
            name = pf.name(it.func) if isinstance(it, ast.Call) else ""
            if name == "pypto.loop_unroll" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                if isinstance(target.elts[1], ast.Name):
                    self.static_names.add(target.elts[1].id)
            elif name == "range" and isinstance(target, ast.Name):
                self.static_names.add(target.id)

    def _config_names(self) -> set[str]:
        if self._configs is None:
            self._configs = self._compute_config_names()
        return self._configs

    def _compute_config_names(self) -> set[str]:
        names = {s.name for s in self.pf.tree.body if isinstance(s, ast.ClassDef)}
        for stmt in self.pf.tree.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
                    and not self.pf.name(stmt.value.func).startswith("pypto."):
                names |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        if self.fn is not None:
            for p in self.fn.args.posonlyargs + self.fn.args.args + self.fn.args.kwonlyargs:
                ann = p.annotation
                if ann is None or not self.pf.name(ann.func if isinstance(ann, ast.Call) else ann).startswith("pypto."):
                    names.add(p.arg)
        return names

    def _static_dim(self, node: ast.Subscript, before: int, depth: int) -> int | list | None:
        """``x.shape[k]`` of a tensor parameter whose annotation gives axis k as a compile-time int."""
        base, idx = node.value, literal_int(node.slice)
        if idx is None or not (isinstance(base, ast.Attribute) and base.attr == "shape"
                               and isinstance(base.value, ast.Name)) or self.fn is None:
            return None
        param = next((p for p in self.fn.args.posonlyargs + self.fn.args.args if p.arg == base.value.id), None)
        ann = param.annotation if param is not None else None
        if not (isinstance(ann, ast.Call) and ann.args and isinstance(ann.args[0], (ast.List, ast.Tuple))):
            return None
        dims = ann.args[0].elts
        if not -len(dims) <= idx < len(dims):
            return None
        val = self.value(dims[idx], before, depth + 1)
        return val if isinstance(val, int) else None

    def _table_entry(self, node: ast.Subscript, before: int, depth: int) -> int | None:
        """``_TILES[dtype_name]`` where ``_TILES`` is a module-level dict, list or tuple literal whose every value is a
        compile-time int and that no code changes (no item assignment, no method call, no rebinding): whatever the
        key, the entry is a compile-time int (s38: a per-dtype tile table was refused)."""
        base = node.value
        if not isinstance(base, ast.Name) or base.id in self.static_names:
            return None
        table = self._module_table(base.id)
        if table is None:
            return None
        values = table.values if isinstance(table, ast.Dict) else table.elts
        vals = [self.value(v, before, depth + 1) for v in values]
        if not vals or not all(isinstance(v, int) for v in vals):
            return None
        return STATIC

    def _module_table(self, name: str) -> ast.Dict | ast.List | ast.Tuple | None:
        """The literal bound once, at module level, to ``name``, when nothing in the file writes into it, calls a
        method on it or binds the name again (a table some code fills at run time is not a constant)."""
        key = ("table", name)
        if key in self._table_memo:
            return self._table_memo[key]
        found: ast.Dict | ast.List | ast.Tuple | None = None
        binds = 0
        for stmt in self.pf.tree.body:
            for bound, val in self._bound(stmt):
                if bound == name:
                    binds += 1
                    found = val if isinstance(val, (ast.Dict, ast.List, ast.Tuple)) else None
        if binds != 1 or found is None or (isinstance(found, ast.Dict) and None in found.keys):
            found = None
        else:
            for n in self.pf.nodes(ast.Name):
                if n.id != name:
                    continue
                parent = self.pf.parents.get(n)
                if isinstance(parent, ast.Assign) and n in parent.targets and parent in self.pf.tree.body:
                    continue  # the module-level binding itself
                if not isinstance(n.ctx, ast.Load) or isinstance(parent, ast.Attribute) or (
                        isinstance(parent, ast.Subscript) and not isinstance(parent.ctx, ast.Load)) or (
                        isinstance(parent, (ast.Global, ast.Nonlocal))):
                    found = None
                    break
                if isinstance(parent, ast.Subscript) and parent.value is n:
                    continue
                found = None  # handed to code that may change it (``f(_TILES)``, ``t = _TILES``)
                break
            if found is not None and any(name in g.names for g in self.pf.nodes(ast.Global)):
                found = None
        self._table_memo[key] = found
        return found

    def _constant_parameter(self, factory: ast.AST, name: str) -> ast.AST | None:
        """A literal standing for a factory's parameter when every call of the factory passes a compile-time int for
        it (``_kernel_for(1)``, ``_kernel_for(TILE)``): the kernel it builds has that tile in every trace (s38). A
        factory called with anything else (``x.shape[0]``: the first call's size baked in), or used other than by a
        call (handed around, rebound), gives None."""
        if not isinstance(factory, ast.FunctionDef) or self.pf.functions.get(factory.name) is not factory:
            return None
        a = factory.args
        if name not in {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}:
            return None
        pos = [p.arg for p in a.posonlyargs + a.args]
        defaults = dict(zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
        uses = [n for n in self.pf.nodes(ast.Name) if n.id == factory.name]
        if not uses:
            return None
        for use in uses:
            call = self.pf.parents.get(use)
            if not isinstance(call, ast.Call) or call.func is not use or any(
                    isinstance(x, (ast.Starred)) for x in call.args) or any(k.arg is None for k in call.keywords):
                return None
            i = pos.index(name) if name in pos else None
            arg = next((k.value for k in call.keywords if k.arg == name), None)
            if arg is None and i is not None and i < len(call.args):
                arg = call.args[i]
            if arg is None:
                arg = defaults.get(name)
            caller = self.pf.enclosing_fn.get(call)
            if arg is None or not isinstance(caller, ast.FunctionDef | None) or not isinstance(
                    _Resolver(self.pf, caller).value(arg, call.lineno), int):
                return None
        return _STATIC_NODE

    def _assigned(self, name: str, before: int) -> ast.AST | None:
        key = (name, before)
        if key not in self._assigned_memo:
            self._assigned_memo[key] = self._find_assigned(name, before)
        return self._assigned_memo[key]

    def _index(self) -> tuple[dict[str, ast.AST], dict[str, list[tuple[int, ast.AST]]]]:
        """Module-level bindings (the last one wins) and the function's ``(line, value)`` bindings per name,
        built in one pass (a scan per lookup made long files quadratic)."""
        if self._bindings is None:
            module: dict[str, ast.AST] = {}
            for stmt in self.pf.tree.body:
                for name, val in self._bound(stmt):
                    module[name] = val
            local: dict[str, list[tuple[int, ast.AST]]] = {}
            for node in self.pf.nodes_in(self.fn, ast.Assign) if self.fn is not None else []:
                for name, val in self._bound(node):
                    local.setdefault(name, []).append((node.lineno, val))  # type: ignore[attr-defined]
            self._bindings = (module, local)
        return self._bindings

    def _find_assigned(self, name: str, before: int) -> ast.AST | None:
        module, local = self._index()
        found: ast.AST | None = module.get(name)
        best = -1
        for line, val in local.get(name, ()):
            if best < line < before:
                found, best = val, line
        if best < 0 and name not in local:
            own = self._constant_parameter(self.fn, name) if self.fn is not None else None
            if own is not None:
                return own
            closure = self._enclosing_binding(name)
            if closure is not None:
                return closure
        return found

    def _enclosing_binding(self, name: str) -> ast.AST | None:
        """The value a function around ``self.fn`` binds to ``name`` before ``self.fn`` is defined (a jit kernel made
        by a factory reads the factory's locals as closure constants: ``t = 2 * TILE`` above the nested def; s38).
        Only a name bound once in that function, by a plain assignment, outside any nested def; a parameter of the
        factory or any other binding (a loop, a second assignment) is not a constant."""
        fn = self.fn
        outer = self.pf.enclosing_fn.get(fn) if fn is not None else None
        while outer is not None and fn is not None:
            a = outer.args
            params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
            params |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
            if name in params:
                return self._constant_parameter(outer, name)
            direct = [n for n in self.pf.nodes_in(outer, ast.Assign) if self.pf.enclosing_fn.get(n) is outer]
            binds = [(n, v) for n in direct for bound, v in self._bound(n) if bound == name]
            others = [n for n in self.pf.nodes_in(outer, ast.Name) if isinstance(n, ast.Name) and n.id == name
                      and not isinstance(n.ctx, ast.Load) and self.pf.enclosing_fn.get(n) is outer]
            if binds:
                node, val = binds[0]
                if len(binds) == 1 and len(others) == 1 and node.lineno < fn.lineno:  # type: ignore[attr-defined]
                    return val
                return None
            if others:
                return None
            fn, outer = outer, self.pf.enclosing_fn.get(outer)
        return None

    @classmethod
    def _bound(cls, stmt: ast.AST) -> list[tuple[str, ast.AST]]:
        """``(name, value)`` for every name ``stmt`` binds the way :meth:`_match` reads it."""
        names: list[str] = []
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names.append(stmt.target.id)
        elif isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    names.append(t.id)
                elif isinstance(t, (ast.Tuple, ast.List)):
                    names += [e.id for e in t.elts if isinstance(e, ast.Name)]
        out = []
        for name in dict.fromkeys(names):
            val = cls._match(stmt, name)
            if val is not None:
                out.append((name, val))
        return out

    @staticmethod
    def _match(stmt: ast.AST, name: str) -> ast.AST | None:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            return stmt.value
        if not isinstance(stmt, ast.Assign):
            return None
        for t in stmt.targets:
            if isinstance(t, ast.Name) and t.id == name:
                return stmt.value
            if isinstance(t, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)):
                for elt, val in zip(t.elts, stmt.value.elts, strict=False):
                    if isinstance(elt, ast.Name) and elt.id == name:
                        return val
        return None

    def value(self, node: ast.AST | None, before: int, depth: int = 0) -> int | list | None:
        if node is None or depth > 10:
            return None
        key = (id(node), before)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle (``a = a + 1``) resolves to "not a constant"
        self._memo[key] = out = self._value(node, before, depth)
        return out

    def _value(self, node: ast.AST, before: int, depth: int) -> int | list | None:
        if node is _STATIC_NODE:
            return STATIC
        lit = literal_int(node)
        if lit is not None:
            # no tile size has more than 64 bits; arithmetic on a million-digit literal is one quadratic C call
            # that no time budget can interrupt (held-out attack A6: `(H * H) // H` hung lint for minutes)
            return lit if lit.bit_length() <= _MAX_BITS else None
        if isinstance(node, ast.Name):
            if node.id in self.static_names:
                return STATIC
            return self.value(self._assigned(node.id, before), before, depth + 1)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr != "shape":
            # a field of a config object: a module-level instance/class or a non-tensor kernel parameter holds
            # Python values fixed at trace time (gym: `pypto.set_vec_tile_shapes(cfg.tile_rows, ...)`)
            if node.value.id in self._config_names():
                return STATIC
            return None
        if isinstance(node, ast.Subscript):
            dim = self._static_dim(node, before, depth)
            return dim if dim is not None else self._table_entry(node, before, depth)
        if isinstance(node, ast.IfExp):
            # ``32 if dtype_name == "bfloat16" else 16``: either branch is a compile-time int, so the tile is one
            # on every path the kernel is traced on (s38: a per-dtype tile in a jit factory was refused)
            a, b = self.value(node.body, before, depth + 1), self.value(node.orelse, before, depth + 1)
            if isinstance(a, int) and isinstance(b, int):
                return a if a == b and not isinstance(a, _Static) and not isinstance(b, _Static) else STATIC
            return None
        if isinstance(node, (ast.List, ast.Tuple)):
            vals = [self.value(e, before, depth + 1) for e in node.elts]
            return None if any(v is None for v in vals) else vals
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            a, b = self.value(node.left, before, depth + 1), self.value(node.right, before, depth + 1)
            if isinstance(a, _Static) or isinstance(b, _Static):
                return STATIC if isinstance(a, int) and isinstance(b, int) else None
            if isinstance(a, int) and isinstance(b, int):
                if a.bit_length() > _MAX_BITS or b.bit_length() > _MAX_BITS:
                    return None
                if isinstance(node.op, ast.Add):
                    return a + b
                if isinstance(node.op, ast.Sub):
                    return a - b
                if isinstance(node.op, ast.Mult):
                    return a * b
                return a // b if b else None
        return None


def _vec_args(call: ast.Call, res: _Resolver) -> Iterator[tuple[ast.AST, int | list | None]]:
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            val = res.value(arg.value, call.lineno)
            if isinstance(val, list):
                for v in val:
                    yield arg, v
            else:
                yield arg, None
        elif isinstance(arg, (ast.List, ast.Tuple)):
            for elt in arg.elts:
                yield elt, res.value(elt, call.lineno)
        else:
            yield arg, res.value(arg, call.lineno)


@check("OL48")
def ol48_static_tiles(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.graph_functions():
        res = _Resolver(pf, fn)
        for call in _setter_calls(pf, fn):
            name = pf.name(call.func).split(".")[-1]
            if name == "set_vec_tile_shapes":
                for node, val in _vec_args(call, res):
                    if not isinstance(val, int):
                        yield at(node, f"tile size `{ast.unparse(node)}` is not a compile-time int constant")
                    elif val <= 0 and not isinstance(val, _Static):
                        yield at(node, f"tile size {val} must be positive")
                continue
            args = dict(zip(("m", "k", "n"), call.args, strict=False))
            args.update({k.arg: k.value for k in call.keywords if k.arg in ("m", "k", "n")})
            for axis in ("m", "k", "n"):
                node = args.get(axis)
                if node is None:
                    yield at(call, f"`set_cube_tile_shapes` is missing `{axis}`")
                    continue
                val = res.value(node, call.lineno)
                sizes = (2, 3) if axis == "k" else (2,)
                if not isinstance(val, list) or not all(isinstance(v, int) for v in val):
                    yield at(node, f"cube tile `{axis}={ast.unparse(node)}` is not a list of compile-time ints")
                elif len(val) not in sizes:
                    yield at(node, f"cube tile `{axis}` must have {' or '.join(map(str, sizes))} elements")
                elif any(isinstance(v, _Static) for v in val):
                    continue
                elif val[0] <= 0 or any(v < val[0] or v % val[0] for v in val[1:]):
                    yield at(node, f"cube tile `{axis}={val}` needs 0 < L0 <= L1 and L1 % L0 == 0")
