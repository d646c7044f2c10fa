"""A scalar kernel argument the host wrapper computed wrong (``one_m_b1 = 1.0 - beta2`` for ``1.0 - beta1``).

Why: the kernel line that applies the scalar (``pypto.mul(g_tile, one_m_b1)``) is where the values first depart, and
its tensor operand matches the golden, so the strict rule names it - but that line is right; the number it was given
is not. Nothing in the kernel can be fixed. The evidence that the scalar, not the op, is wrong: the golden value is
the same op applied to the same operand with *another* constant (one number for the whole tile), and every scalar
parameter of the kernel is read somewhere (a kernel that passes ``one_m_b2`` where it meant ``one_m_b1`` leaves
``one_m_b1`` unread: the kernel line chose the wrong parameter, and stays named). The wrapper line that computes the
argument is then named.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.bisect._analyzer import GOOD, Analyzer
from runtime.bisect._parse import parse_source
from runtime.bisect._records import Rec
from runtime.bisect._repair import _golden_slice, _value_of
from runtime.bisect._rules import call_arguments

__all__ = ["wrapper_scalar"]

_OPS = ("mul", "div", "add", "sub")


class _Stop(Exception):
    """Ends the hooked replay once the culprit's value is read."""


def _kernel_def(tree: ast.AST, line: int, kernels: set[str]) -> ast.FunctionDef | None:
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name in kernels and fn.lineno <= line <= (fn.end_lineno or 0):
            return fn
    return None


def _is_tensor_param(a: ast.arg) -> bool:
    return a.annotation is not None and "Tensor" in ast.unparse(a.annotation)


def _scalar_param(fn: ast.FunctionDef, line: int, op: str) -> str | None:
    """The scalar parameter of ``fn`` the ``op`` call on ``line`` applies as its second argument
    (``pypto.mul(g_tile, one_m_b1)``), when every scalar parameter of ``fn`` is read in its body; else None."""
    scalars = {a.arg for a in fn.args.args if not _is_tensor_param(a)}
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n, "lineno", None) == line
             and ast.unparse(n.func).rsplit(".", 1)[-1] == op and len(n.args) >= 2]
    if len(calls) != 1:
        return None
    arg = calls[0].args[1]
    if not isinstance(arg, ast.Name) or arg.id not in scalars:
        return None
    read = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return arg.id if scalars <= read else None


def _constant(op: str, x: np.ndarray, y: np.ndarray, atol: float, rtol: float) -> float | None:
    """The one constant ``c`` with ``y == op(x, c)`` on every element within tolerance, else None."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.size == 0 or x.size != y.size or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return None
    big = np.abs(x) > max(atol, 1e-30)
    if op == "mul":
        if not big.any():
            return None
        c = float(np.median(y[big] / x[big]))
        fit = x * c
    elif op == "div":
        ok = np.abs(y) > 1e-30
        if not (ok & big).any():
            return None
        c = float(np.median(x[ok & big] / y[ok & big]))
        if c == 0.0:
            return None
        fit = x / c
    elif op == "add":
        c = float(np.median(y - x))
        fit = x + c
    else:
        c = float(np.median(x - y))
        fit = x - c
    return c if np.allclose(fit, y, atol=atol, rtol=rtol) else None


def _argument_line(tree: ast.AST, kernel: ast.FunctionDef, param: str) -> int | None:
    """The host line that computes the argument a call of ``kernel`` passes for ``param`` (also through a local bound
    to the kernel, and through a ``float(...)`` / ``int(...)`` conversion): the last assignment of the argument's
    name before the call in the calling function, or the call's line when the argument is computed there; None for
    a parameter of the wrapper passed through (the caller's number, not the wrapper's)."""
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or fn is kernel:
            continue
        for arg, line in call_arguments(fn, kernel, param):
            while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) \
                    and arg.func.id in ("float", "int", "bool") and len(arg.args) == 1:
                arg = arg.args[0]
            if isinstance(arg, ast.Name):
                defs = [s for s in ast.walk(fn) if isinstance(s, ast.Assign) and s.lineno < line
                        and any(isinstance(t, ast.Name) and t.id == arg.id for t in s.targets)]
                if defs:
                    return max(defs, key=lambda s: s.lineno).lineno
                continue
            return line
    return None


def wrapper_scalar(an: Analyzer, culprit: Rec | None, source: str, kernels: set[str],
                   replayer: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                   ) -> tuple[int, str] | None:
    """The wrapper line that computes a scalar argument the culprit op applies, when the golden is that op with
    another constant (see the module docstring); with why. None when the evidence is not there."""
    if culprit is None or culprit.op not in _OPS or culprit.line is None or culprit.seq < 0:
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    kdef = _kernel_def(tree, culprit.line, kernels)
    if kdef is None:
        return None
    param = _scalar_param(kdef, culprit.line, culprit.op)
    if param is None:
        return None
    ops = [p for p in an.operand_recs(culprit) if p.shape is not None]
    if len(ops) != 1 or an.status.get(ops[0].seq) not in GOOD or ops[0].seq not in an.matched:
        return None
    ref_out = an.expected.get(culprit.seq) or an.matched.get(culprit.seq)
    if ref_out is None:
        return None
    got: dict[str, np.ndarray] = {}

    def hook(env: Any, node: Any, v: tuple, seq: int) -> None:
        if seq == culprit.seq:
            got["value"] = np.array(_value_of(env, node, v), copy=True)
            raise _Stop

    replayer(hook)
    value = got.get("value")
    if value is None:
        return None
    bs = tuple(value.shape)
    g_in, reg_in = an.matched[ops[0].seq]
    x = _golden_slice(an, (g_in, an.lids.get(ops[0].seq, ""), tuple(reg_in)), bs)
    y = _golden_slice(an, (ref_out[0], an.lids.get(culprit.seq, ""), tuple(ref_out[1])), bs)
    if x is None or y is None:
        return None
    atol, rtol = an.g.atol, an.g.rtol
    c_golden = _constant(culprit.op, x, y, atol, rtol)
    c_kernel = _constant(culprit.op, x, value, atol, rtol)
    if c_golden is None or c_kernel is None or np.isclose(c_golden, c_kernel, rtol=1e-3, atol=0.0):
        return None
    line = _argument_line(tree, kdef, param)
    if line is None:
        return None
    return line, (f"{culprit.where()} applies the kernel's scalar parameter {param!r} = {c_kernel:.6g} to a value "
                  f"that matches golden {g_in!r}; the golden {ref_out[0]!r} is the same {culprit.op} with "
                  f"{c_golden:.6g}. Every scalar parameter of the kernel is read, so the number is wrong, not the "
                  f"kernel line: the wrapper computes {param!r} at line {line}")
