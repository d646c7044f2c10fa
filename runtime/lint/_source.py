"""A parsed Python file with the indices every kernel rule needs, built in one AST walk.

Rules ask questions such as "which functions are JIT kernels", "which calls are `pypto.*` calls", "which
functions are wrappers". Answering them once per file (instead of one ``ast.walk`` per rule) is what keeps a
1,000-line kernel under the 200 ms budget. Nothing here executes the linted code.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TypeVar, cast

from runtime import pyast
from runtime.markers import markers

__all__ = ["ParsedFile", "dotted", "is_pypto_call", "literal_int", "parse_file"]

_WRAPPER_RE = re.compile(r"(^host_wrapper$|_wrapper$|^launch_|^run_)")


def dotted(node: ast.AST | None) -> str:
    """``a.b.c`` for a Name/Attribute chain (calls are looked through: ``f(...).x`` -> ``f.x``), else ``""``."""
    parts: list[str] = []
    cur = node
    while cur is not None:
        if isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        elif isinstance(cur, ast.Name):
            parts.append(cur.id)
            break
        elif isinstance(cur, ast.Call):
            cur = cur.func
        else:
            return ""
    return ".".join(reversed(parts))


def literal_int(node: ast.AST | None) -> int | None:
    """The value of an int literal (``-3`` included), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = literal_int(node.operand)
        return None if inner is None else -inner
    return None


def is_pypto_call(node: ast.AST, name: str | None = None, *, pf: ParsedFile) -> bool:
    """True if ``node`` is a call ``pypto.<...>`` (aliases resolved), optionally of ``pypto.<name>``."""
    if not isinstance(node, ast.Call):
        return False
    full = pf.name(node.func)
    if not full.startswith("pypto."):
        return False
    return name is None or full == f"pypto.{name}"


_N = TypeVar("_N", bound=ast.AST)


@dataclass
class ParsedFile:
    """One parsed Python file plus the indices the rules share."""

    path: str
    source: str
    lines: list[str]
    tree: ast.Module
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)
    by_type: dict[type, list[ast.AST]] = field(default_factory=lambda: defaultdict(list))
    enclosing_fn: dict[ast.AST, ast.FunctionDef | ast.AsyncFunctionDef | None] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    """Local name -> imported dotted name (``pt`` -> ``pypto``, ``np`` -> ``numpy``)."""
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    """Module-level functions by name."""
    jit_fns: list[ast.FunctionDef] = field(default_factory=list)
    """Functions whose decorator resolves to a ``jit`` (aliases included)."""
    calls_in: dict[ast.AST, list[ast.Call]] = field(default_factory=lambda: defaultdict(list))
    """Function node -> calls lexically inside it (nested defs included)."""
    fn_nodes: dict[ast.AST, list[ast.AST]] = field(default_factory=lambda: defaultdict(list))
    """Function node -> every node lexically inside it (nested defs included)."""
    _memo: dict = field(default_factory=dict)
    _names: dict[int, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ queries
    def nodes(self, kind: type[_N]) -> list[_N]:
        """Every node of one AST class, typed as that class (``by_type`` cannot say so; rules need no casts)."""
        return cast("list[_N]", self.by_type.get(kind, []))

    def resolve(self, name: str) -> str:
        """Replace an import alias at the head of a dotted name (``pt.view`` -> ``pypto.view``)."""
        if not name:
            return name
        head, _, rest = name.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return name
        return f"{full}.{rest}" if rest else full

    def name(self, node: ast.AST | None) -> str:
        """``resolve(dotted(node))``, memoized per node (rules ask for the same call names many times)."""
        if node is None:
            return ""
        key = id(node)
        hit = self._names.get(key)
        if hit is None:
            hit = self._names[key] = self.resolve(dotted(node))
        return hit

    def line_text(self, lineno: int) -> str:
        return self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""

    def jit_names(self) -> set[str]:
        return {fn.name for fn in self.jit_fns}

    def wrappers(self) -> list[ast.FunctionDef]:
        """Module-level non-JIT functions named like a host wrapper (``*_wrapper``, ``launch_*``, ``run_*``)."""
        if "wrappers" not in self._memo:
            jit = self.jit_names()
            self._memo["wrappers"] = [fn for name, fn in self.functions.items()
                                      if _WRAPPER_RE.search(name) and name not in jit]
        return self._memo["wrappers"]

    def kernel_names_in(self, fn: ast.AST) -> set[str]:
        """Names that hold the JIT kernel inside ``fn``: JIT function names plus local aliases of a kernel
        made by a factory (``k = _make_kernel(dt)``, ``k = _KERNELS[str(x.dtype)]``; skills patterns#multi-dtype).
        """
        key = ("kernel_names", id(fn))
        if key in self._memo:
            return self._memo[key]
        holders, names = self._kernel_holders()
        names = set(names)
        for node in self.nodes_in(fn, ast.Assign):
            assert isinstance(node, ast.Assign)
            if any(isinstance(n, ast.Name) and n.id in holders for n in ast.walk(node.value)):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        self._memo[key] = names
        return names

    def kernel_factories(self) -> set[str]:
        """Names whose call returns a JIT kernel: module-level functions with a nested ``@jit`` (and module tables of
        kernels). ``_kernel_for(x.dtype)(x, y)`` calls the kernel without naming it (s38: OL45 said such a wrapper
        never called its kernel, and PF10 read no kernel call in it)."""
        return self._kernel_holders()[0]

    def _kernel_holders(self) -> tuple[set[str], set[str]]:
        """(names that hold kernels or kernel factories, names that are kernels or kernel tables), computed once
        per file (it does not depend on the function asking: per function it made many-function files quadratic)."""
        if "kernel_holders" in self._memo:
            return self._memo["kernel_holders"]
        jit = self.jit_names()
        factories = {name for name, f in self.functions.items()
                     if any(self.enclosing_fn.get(j) is not None and self._within(j, f) for j in self.jit_fns)}
        holders = set(factories)
        tables_all: set[str] = set()
        for stmt in self.tree.body:  # module-level tables of kernels: _KERNELS = {..: _make_kernel(..)} or
            # {torch.float32: silu_fp32_kernel, ...} (gym: one jit kernel per dtype behind a dispatcher)
            if isinstance(stmt, ast.Assign) and any(isinstance(n, ast.Name) and n.id in factories | jit
                                                    for n in ast.walk(stmt.value)):
                tables = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
                holders |= tables
                tables_all.update(tables)
        self._memo["kernel_holders"] = (holders, set(jit) | tables_all)  # a table is called through a
        return self._memo["kernel_holders"]  # subscript: _KERNELS[x.dtype](x, y)

    def _within(self, node: ast.AST, fn: ast.AST) -> bool:
        cur = self.enclosing_fn.get(node)
        while cur is not None:
            if cur is fn:
                return True
            cur = self.enclosing_fn.get(cur)
        return False

    def reachable_from(self, roots: list[ast.FunctionDef]) -> list[ast.FunctionDef]:
        """Module-level functions reachable from ``roots`` through bare-name calls (roots included)."""
        seen: dict[int, ast.FunctionDef] = {id(fn): fn for fn in roots}  # by node: two defs may share a name
        todo = list(roots)
        while todo:
            fn = todo.pop()
            for call in self.calls_in.get(fn, []):
                if isinstance(call.func, ast.Name):
                    target = self.functions.get(call.func.id)
                    if target is not None and id(target) not in seen:
                        seen[id(target)] = target
                        todo.append(target)
        return list(seen.values())

    def graph_functions(self) -> list[ast.FunctionDef]:
        """JIT-graph functions: JIT kernels, helpers they reach, and non-wrapper functions calling pypto."""
        if "graph" in self._memo:
            return self._memo["graph"]
        graph = {fn.name: fn for fn in self.reachable_from(self.jit_fns)}
        wrappers = {fn.name for fn in self.wrappers()}
        for name, fn in self.functions.items():
            if name in graph or name in wrappers or name in _HOST_HELPERS:
                continue
            if any(self.name(c.func).startswith("pypto.") for c in self.calls_in.get(fn, [])):
                graph[name] = fn
        self._memo["graph"] = list(graph.values())
        return self._memo["graph"]

    def host_functions(self) -> list[ast.FunctionDef]:
        """Module-level functions outside the JIT graph (wrappers and plain host helpers)."""
        graph = {fn.name for fn in self.graph_functions()}
        return [fn for name, fn in self.functions.items() if name not in graph]

    def nodes_in(self, fn: ast.AST, kind: type | tuple[type, ...]) -> list[ast.AST]:
        """Nodes of ``kind`` lexically inside ``fn`` (nested defs included), in source order (memoized)."""
        key = (id(fn), kind)
        hit = self._memo.get(key)
        if hit is None:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            hit = [n for n in self.fn_nodes.get(fn, []) if isinstance(n, kinds)]
            hit.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
            self._memo[key] = hit
        return hit

    def assignments(self, fn: ast.AST) -> dict[str, list[tuple[int, ast.AST]]]:
        """Name -> [(line, assigned value)] for plain ``name = value`` statements inside ``fn``, by line."""
        key = ("assign", id(fn))
        hit = self._memo.get(key)
        if hit is None:
            hit = {}
            for node in self.nodes_in(fn, ast.Assign):
                assert isinstance(node, ast.Assign)
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        hit.setdefault(t.id, []).append((node.lineno, node.value))
            self._memo[key] = hit
        return hit

    def in_main_block(self, node: ast.AST) -> bool:
        """True inside a module-level ``if __name__ == "__main__":`` (exactly that test: red team s30c hid a random
        draw inside the wrapper under ``if "__main__" not in x.dtype.name:``, which the rules took for a self-test
        block and skipped)."""
        cur = self.parents.get(node)
        while cur is not None:
            if isinstance(cur, ast.If) and self.parents.get(cur) is self.tree and is_main_test(cur.test):
                return True
            cur = self.parents.get(cur)
        return False

    def module_markers(self) -> list[tuple[int, int, str, int]]:
        """``(module, line, role, indent)`` for every ``# --- Module Mk: role ---`` comment line."""
        return [(m.module, m.line, m.role, m.indent) for m in markers(self.lines)]


def is_main_test(test: ast.AST) -> bool:
    """``__name__ == "__main__"`` (either side)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides) and any(
        isinstance(x, ast.Constant) and x.value == "__main__" for x in sides)


_HOST_HELPERS = {"main", "_validate", "_make_inputs", "make_inputs", "_self_test", "_demo", "_test"}


def parse_file(path: str, source: str) -> ParsedFile:
    """Parse ``source`` and build the indices. Raises SyntaxError/ValueError/RecursionError on bad input."""
    tree = pyast.parse(source, filename=path, type_comments=False)
    pf = ParsedFile(path=path, source=source, lines=source.splitlines(), tree=tree)
    # one iterative DFS: parent, innermost enclosing function, nodes by type, nodes/calls per function
    parents, by_type, enclosing = pf.parents, pf.by_type, pf.enclosing_fn
    fn_nodes, calls_in = pf.fn_nodes, pf.calls_in
    chains: dict[ast.AST | None, tuple[ast.AST, ...]] = {None: ()}
    fn_types = (ast.FunctionDef, ast.AsyncFunctionDef)
    skip = ast.expr_context
    stack: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
    pop, push = stack.pop, stack.append
    while stack:
        node, fn = pop()
        by_type[type(node)].append(node)
        enclosing[node] = fn  # type: ignore[assignment]
        chain = chains[fn]
        for f in chain:
            fn_nodes[f].append(node)
        if chain and type(node) is ast.Call:
            for f in chain:
                calls_in[f].append(node)
        if isinstance(node, fn_types):
            chains[node] = (*chain, node)
            inner: ast.AST | None = node
        else:
            inner = fn
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                if not isinstance(value, skip):
                    parents[value] = node
                    push((value, inner))
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST) and not isinstance(item, skip):
                        parents[item] = node
                        push((item, inner))
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            pf.functions[stmt.name] = stmt
        elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
              and isinstance(stmt.value, ast.Name) and stmt.value.id in pf.functions):
            # `_gym_f = f` keeps the function defined so far under a second name (the gym import renames an entry
            # whose name the PTO Forge wrapper takes): calls through the alias reach it
            pf.functions[stmt.targets[0].id] = pf.functions[stmt.value.id]
    for imp in pf.by_type.get(ast.Import, []):
        assert isinstance(imp, ast.Import)  # by_type is keyed by node class
        for alias in imp.names:
            if alias.asname:
                pf.aliases[alias.asname] = alias.name
    for imf in pf.by_type.get(ast.ImportFrom, []):
        assert isinstance(imf, ast.ImportFrom)
        if imf.module and imf.level == 0:
            for alias in imf.names:
                pf.aliases[alias.asname or alias.name] = f"{imf.module}.{alias.name}"
    for fdef in pf.by_type.get(ast.FunctionDef, []):
        assert isinstance(fdef, ast.FunctionDef)
        for dec in fdef.decorator_list:
            name = pf.name(dec)
            if name.split(".")[-1] == "jit":
                pf.jit_fns.append(fdef)
                break
    pf.jit_fns.sort(key=lambda f: f.lineno)
    return pf
