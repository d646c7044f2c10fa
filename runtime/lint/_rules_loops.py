"""Loop rules: ``unroll_list`` placement and size, redundant ``pypto.loop(1)``.

``unroll_list`` asks the compiler for one specialised body per factor; several factors multiply compile time
and are only allowed on the innermost loop. These checks also run on DESIGN.md pseudocode (see
``_rules_design``), so the designer cannot prescribe what the implementer may not write.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._source import ParsedFile, dotted, literal_int
from runtime.lint._util import at, kernel_pf

__all__ = ["declared_tuned", "multi_value_unrolls", "unroll_verdict"]

_LOOPS = {"pypto.loop", "pypto.loop_unroll"}


def _unroll_kw(call: ast.Call) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == "unroll_list"), None)


def _list_values(tree: ast.AST, lst: ast.AST | None) -> int:
    """Number of int values of an ``unroll_list`` argument: a literal list, or a name bound to one at module level
    or anywhere in the file (the lint resolves the variable the same way as the literal)."""
    if isinstance(lst, ast.Name):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == lst.id for t in node.targets):
                lst = node.value
                break
    if isinstance(lst, (ast.List, ast.Tuple)):
        return sum(1 for e in lst.elts if literal_int(e) is not None)
    return 0


def multi_value_unrolls(tree: ast.AST, resolve=lambda name: name) -> Iterator[tuple[ast.Call, int]]:
    """``pypto.loop(..., unroll_list=...)`` calls with >= 2 int values (literal or through a name), with the count."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and resolve(dotted(node.func)) == "pypto.loop":
            n = _list_values(tree, _unroll_kw(node))
            if n >= 2:
                yield node, n


def declared_tuned(ctx: LintContext) -> bool:
    """SPEC.md declares the op's kernels already tuned (``imported: {tuned: true}``, written by the gym import)."""
    imported = ctx.op.spec.get("imported") if ctx.op is not None else None
    return isinstance(imported, dict) and imported.get("tuned") is True


def unroll_verdict(ctx: LintContext, n: int) -> tuple[str | None, str]:
    """(status override, why) of an ``unroll_list`` with ``n`` values in this stage: FAIL until the performance
    stage (the workflow fixes the structure first and tunes last), allowed there and in declared-tuned code."""
    if ctx.stage == "performance":
        return "INFO", f"allowed in the performance stage ({n} loop bodies are a tuning choice)"
    if declared_tuned(ctx):
        return "INFO", "allowed: imported code declared already tuned (SPEC.md `imported: {tuned: true}`)"
    return None, (f"FAIL in the {ctx.stage} stage: the workflow asks for a single value until the performance "
                  "stage (`--perf`), or imported code declared tuned")


@check("OL56")
def ol56_single_unroll(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for call in pf.nodes(ast.Call):
        if pf.name(call.func) == "pypto.loop":
            n = _list_values(pf.tree, _unroll_kw(call))
            if n >= 2:
                status, why = unroll_verdict(ctx, n)
                yield at(call, f"`unroll_list` with {n} values compiles {n} loop bodies: {why}", status=status)


def _loop_call(pf: ParsedFile, node: ast.AST) -> ast.Call | None:
    if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and pf.name(node.iter.func) in _LOOPS:
        return node.iter
    return None


@check("OL49")
def ol49_unroll_innermost(ctx: LintContext) -> Iterator[Hit]:
    """The upstream trigger is a ``pypto.loop(..., unroll_list=...)`` around another loop. ``pypto.loop_unroll``'s
    ``unroll_list`` is what that function is - the body handles ``factor`` items per step - and the vendor's own
    gather_pa_kv_cache unrolls its sequence loop that way around a block loop (red team s39: refused as OL49)."""
    pf = kernel_pf(ctx)
    loops = [n for n in pf.nodes(ast.For) if _loop_call(pf, n) is not None]
    for node in loops:
        call = _loop_call(pf, node)
        if call is None or _unroll_kw(call) is None or pf.name(call.func) != "pypto.loop":
            continue
        end = node.end_lineno or node.lineno
        inner = [m for m in loops if m is not node and node.lineno < m.lineno <= end and _encloses(pf, node, m)]
        if inner:
            first = min(inner, key=lambda m: m.lineno)
            yield at(call, f"`unroll_list` on an outer loop (inner `pypto.loop` at line {first.lineno}); "
                     "only the innermost loop may be unrolled")


def _encloses(pf: ParsedFile, outer: ast.AST, node: ast.AST) -> bool:
    cur = pf.parents.get(node)
    while cur is not None:
        if cur is outer:
            return True
        cur = pf.parents.get(cur)
    return False


@check("OL46")
def ol46_redundant_loop1(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    fns = {fn.name: fn for fn in pf.jit_fns}
    fns.update({n: f for n, f in pf.functions.items() if n.endswith("_impl")})
    for fn in fns.values():
        loops = [c for c in pf.calls_in.get(fn, []) if pf.name(c.func) == "pypto.loop"]
        ones = [c for c in loops if len(c.args) == 1 and literal_int(c.args[0]) == 1]
        if ones and len(ones) < len(loops):
            yield at(ones[0], f"redundant `pypto.loop(1)` in `{fn.name}` next to a real loop")
