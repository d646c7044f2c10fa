"""Kernel body rules: what the PyPTO parser rejects or silently mis-traces inside a JIT function.

A re-bound output parameter writes nothing, a ``return`` is a parse error, builtin ``min``/``max`` need a
concrete value, and Python loops other than ``range`` are not tile loops.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._util import at, jit_params, kernel_pf

_LOOP_CALLS = {"pypto.loop", "pypto.loop_unroll"}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _target_names(target: ast.AST) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


@check("OL02")
def ol02_param_rebound(ctx: LintContext) -> Iterator[Hit]:
    from runtime.lint._rules_writeback import written_params  # local: _rules_writeback imports this family

    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        params = {p.arg for p in jit_params(fn)}
        outputs = written_params(pf, fn)
        for node in pf.nodes_in(fn, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            if pf.enclosing_fn.get(node) is not fn:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            for t in targets:
                for name in _target_names(t):
                    if name.id in params and name.id in outputs:
                        yield at(name, f"JIT parameter `{name.id}` is re-bound; this writes nothing to the "
                                 f"output (use `{name.id}[:] = ...` or `pypto.assemble(..., {name.id})`)")
                    elif name.id in params:
                        yield at(name, f"input `{name.id}` of `{fn.name}` is re-bound; later uses read the new "
                                 f"value, not the kernel argument (give the new value its own name)")


@check("OL03")
def ol03_no_return(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        for node in pf.nodes_in(fn, ast.Return):
            yield at(node, f"`return` inside JIT function `{fn.name}` (the parser rejects it)")


@check("OL06")
def ol06_no_builtin_minmax(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        for call in pf.nodes_in(fn, ast.Call):
            f = call.func  # type: ignore[attr-defined]
            if isinstance(f, ast.Name) and f.id in ("min", "max") and f.id not in pf.functions:
                yield at(call, f"builtin `{f.id}(...)` in a JIT function needs concrete values; use "
                         f"`pypto.{'minimum' if f.id == 'min' else 'maximum'}` or `sym.{f.id}(...)`")


def _has_loop(pf, fns: list[ast.FunctionDef]) -> bool:
    for fn in fns:
        if pf.nodes_in(fn, (ast.For, ast.While)):
            return True
        if any(pf.name(c.func) in _LOOP_CALLS for c in pf.calls_in.get(fn, [])):
            return True
    return False


@check("OL23")
def ol23_has_loop(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        if not _has_loop(pf, pf.reachable_from([fn])):
            yield at(fn, f"JIT function `{fn.name}` has no loop (`pypto.loop`); whole-tensor ops do not scale")


@check("OL57")
def ol57_graph_loops(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.graph_functions():
        for node in pf.nodes_in(fn, (ast.While, ast.For, *_COMPREHENSIONS)):
            if isinstance(node, ast.While):
                yield at(node, f"`while` loop in JIT-graph function `{fn.name}`")
            elif isinstance(node, ast.For):
                it = node.iter
                name = pf.name(it.func) if isinstance(it, ast.Call) else ""
                if name not in _LOOP_CALLS and name != "range":
                    yield at(node, f"`for ... in {ast.unparse(it)[:60]}` in JIT-graph function `{fn.name}`: only "
                             "`pypto.loop`, `pypto.loop_unroll` and `range` iterate here")
            elif any(pf.name(c.func).startswith("pypto.") for c in ast.walk(node)
                     if isinstance(c, ast.Call)):
                yield at(node, f"comprehension with pypto calls in JIT-graph function `{fn.name}`")
