"""Small AST helpers shared by the rule families (annotations, parameters, positions, dtype guesses)."""

from __future__ import annotations

import ast
import re

from runtime.lint._registry import Hit
from runtime.lint._source import ParsedFile

__all__ = ["at", "infer_dtype", "is_tensor_annotation", "jit_params", "kernel_pf"]

_DYN_RE = re.compile(r"\b(DYNAMIC|DYN)\b|frontend\.dynamic\(")


def at(node: ast.AST, message: str, **kw) -> Hit:
    """A hit located at ``node`` (1-based line and column)."""
    return Hit(message, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1, **kw)


def kernel_pf(ctx) -> ParsedFile:
    assert ctx.pf is not None
    return ctx.pf


def jit_params(fn: ast.FunctionDef) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
            *([a.kwarg] if a.kwarg else [])]


def is_tensor_annotation(ann: ast.AST | None, pf: ParsedFile) -> bool:
    """``pypto.Tensor(...)`` / ``pypto.tensor(...)`` / ``pypto.Tensor[...]`` (aliases resolved)."""
    if ann is None:
        return False
    node = ann.func if isinstance(ann, ast.Call) else ann.value if isinstance(ann, ast.Subscript) else ann
    return pf.name(node) in ("pypto.Tensor", "pypto.tensor")


def dynamic_names(pf: ParsedFile) -> set[str]:
    """Module-level names bound to a symbolic dim: ``B = pypto.frontend.dynamic("B")`` (or ``pypto.DYNAMIC``)."""
    names: set[str] = set()
    for stmt in pf.tree.body:
        if isinstance(stmt, ast.Assign) and has_dynamic(stmt.value):
            names |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    return names


def has_dynamic(ann: ast.AST, names: set[str] | frozenset[str] = frozenset()) -> bool:
    """The annotation marks an axis dynamic: ``pypto.DYNAMIC``/``DYN``, ``pypto.frontend.dynamic(...)``, or a
    name in ``names`` (see :func:`dynamic_names`)."""
    if _DYN_RE.search(ast.unparse(ann)):
        return True
    return bool(names) and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(ann))


def annotation_dtype(ann: ast.AST | None, pf: ParsedFile) -> str | None:
    """``DT_BF16``-style dtype name of a ``pypto.Tensor(shape, dtype)`` annotation, if literal."""
    if not isinstance(ann, ast.Call):
        return None
    node = ann.args[1] if len(ann.args) > 1 else next((k.value for k in ann.keywords if k.arg == "dtype"), None)
    name = pf.name(node) if node is not None else ""
    return name.split(".")[-1] if name.startswith("pypto.") else None


_PASS_THROUGH = {"view", "reshape", "clone", "unsqueeze", "transpose", "expand_clone", "neg", "abs", "exp",
                 "sqrt", "rsqrt", "mul", "add", "sub", "div", "maximum", "minimum", "sum", "amax", "amin",
                 "log", "sigmoid", "softmax", "sin", "cos", "where"}


def infer_dtype(expr: ast.AST, fn: ast.FunctionDef, pf: ParsedFile, before: int, depth: int = 0) -> str | None:
    """Best-effort static dtype (``DT_FP32`` ...) of an expression inside a JIT function, or None if unsure.

    Follows casts, views and elementwise ops back to parameter annotations through the latest assignment of a
    name before line ``before``. Unsure -> None, so that rules built on it never guess. Results for names are
    memoized per (function, name, assignment line), which keeps long assignment chains linear.
    """
    if depth > 200:
        return None
    if isinstance(expr, ast.Call):
        name = pf.name(expr.func)
        short = name.split(".")[-1]
        if name == "pypto.cast" or (short == "cast" and isinstance(expr.func, ast.Attribute)):
            args = expr.args[1:] if name == "pypto.cast" else expr.args
            node = args[0] if args else next((k.value for k in expr.keywords if k.arg == "dtype"), None)
            dn = pf.name(node) if node is not None else ""
            return dn.split(".")[-1] if dn.startswith("pypto.DT_") else None
        if short in _PASS_THROUGH:
            if name.startswith("pypto.") and expr.args:
                return infer_dtype(expr.args[0], fn, pf, before, depth + 1)
            if isinstance(expr.func, ast.Attribute) and not name.startswith("pypto."):
                return infer_dtype(expr.func.value, fn, pf, before, depth + 1)
        return None
    if isinstance(expr, ast.BinOp):
        return (infer_dtype(expr.left, fn, pf, before, depth + 1)
                or infer_dtype(expr.right, fn, pf, before, depth + 1))
    if isinstance(expr, ast.UnaryOp):
        return infer_dtype(expr.operand, fn, pf, before, depth + 1)
    if isinstance(expr, ast.Subscript):
        return infer_dtype(expr.value, fn, pf, before, depth + 1)
    if isinstance(expr, ast.Name):
        earlier = [(ln, v) for ln, v in pf.assignments(fn).get(expr.id, []) if ln < before]
        key = ("dtype", id(fn), expr.id, earlier[-1][0] if earlier else -1)
        if key in pf._memo:
            return pf._memo[key]
        pf._memo[key] = None  # cycle guard
        if earlier:
            line, value = earlier[-1]
            result = infer_dtype(value, fn, pf, line, depth + 1)
        else:
            result = next((annotation_dtype(p.annotation, pf) for p in jit_params(fn) if p.arg == expr.id), None)
        pf._memo[key] = result
        return result
    return None


_SPEC_KEYS = {"op_name", "inputs", "outputs", "p0_shapes", "dynamic_axes", "supported_dtypes", "tolerance", "seeds",
              "schema_version", "attributes"}


def spec_attrs(ctx) -> set[str]:
    """Names of the op's SPEC attributes (plain extra keys and typed ``attributes``): scalars, never arrays."""
    spec = ctx.op.spec if getattr(ctx, "op", None) is not None else {}
    if not isinstance(spec, dict):
        return set()
    names = {str(k) for k in spec if k not in _SPEC_KEYS}
    typed = spec.get("attributes")
    if isinstance(typed, dict):
        names |= {str(k) for k in typed}
    return names
