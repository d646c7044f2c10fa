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

__all__ = ["swapped_scalars", "wrapper_scalar"]

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
    # the elements that carry the constant: above atol, or above a thousandth of the largest when every one is
    # under atol (Adam's second moment is ~1e-6 against atol 1e-4: none qualified, and a wrapper's bias correction
    # `beta2 ** (step + 1)` was never traced to its line - s36 sixth corpus); the fit is judged at that scale too
    scale = float(np.abs(x).max())
    big = np.abs(x) > max(min(atol, 1e-3 * scale), 1e-30)
    fit_atol = min(atol, max(1e-3 * max(scale, float(np.abs(y).max())), 1e-30))
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
    return c if np.allclose(fit, y, atol=fit_atol, rtol=rtol) else None


def _argument_line(tree: ast.AST, kernel: ast.FunctionDef, param: str) -> int | None:
    """The host line that computes the argument a call of ``kernel`` passes for ``param`` (also through a local bound
    to the kernel, and through a ``float(...)`` / ``int(...)`` conversion): the last assignment of the argument's
    name before the call in the calling function, or the call's line when the argument is computed there; None for
    a parameter of the wrapper passed through (the caller's number, not the wrapper's) - unless the call passes it
    through ``int(..)`` / ``bool(..)``, which can change the caller's number (``int(beta1)`` is 0 for 0.9, s38b):
    then the call's line, where that conversion is."""
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or fn is kernel:
            continue
        for arg, line in call_arguments(fn, kernel, param):
            at, truncated = getattr(arg, "lineno", line), False
            while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) \
                    and arg.func.id in ("float", "int", "bool") and len(arg.args) == 1:
                truncated = truncated or arg.func.id in ("int", "bool")
                arg = arg.args[0]
            if isinstance(arg, ast.Name):
                defs = [s for s in ast.walk(fn) if isinstance(s, ast.Assign) and s.lineno < line
                        and any(isinstance(t, ast.Name) and t.id == arg.id for t in s.targets)]
                if defs:
                    return max(defs, key=lambda s: s.lineno).lineno
                if truncated:
                    return at  # (the argument's own line of a call spread over several)
                continue
            return line
    return None


def _applied_name(fn: ast.FunctionDef, line: int, op: str) -> str | None:
    """The bare name the one ``op`` on ``line`` of ``fn`` applies as its constant operand: the second argument of
    ``pypto.add(x, eps)``, or the right operand of ``x + eps`` (``mean_sq + eps``); None when that is not one name."""
    binop = {"add": ast.Add, "sub": ast.Sub, "mul": ast.Mult, "div": ast.Div}[op]
    found: list[str | None] = []
    for n in ast.walk(fn):
        if getattr(n, "lineno", None) != line:
            continue
        if isinstance(n, ast.Call) and ast.unparse(n.func).rsplit(".", 1)[-1] == op and len(n.args) >= 2:
            found.append(n.args[1].id if isinstance(n.args[1], ast.Name) else None)
        elif isinstance(n, ast.BinOp) and isinstance(n.op, binop):
            found.append(n.right.id if isinstance(n.right, ast.Name) else None)
    return found[0] if len(found) == 1 else None


def _call_argument(fn: ast.AST, callee: str, param: str, params: list[str], line: int) -> ast.expr | None:
    """The expression a call of ``callee`` on ``line`` inside ``fn`` passes for its parameter ``param``."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and getattr(n, "lineno", None) == line \
                and ast.unparse(n.func).rsplit(".", 1)[-1] == callee:
            for kw in n.keywords:
                if kw.arg == param:
                    return kw.value
            i = params.index(param)
            return n.args[i] if i < len(n.args) else None
    return None


def _attribute_source(tree: ast.Module, culprit: Rec, kernels: set[str], call_site: int | None,
                      ) -> tuple[ast.FunctionDef, int, str, str, str] | None:
    """A constant the culprit op applies that the kernel reads from an attribute of a non-tensor kernel parameter
    (``eps = config.eps``, passed on to a helper ``rms_norm_core(x_slice, eps, C)`` whose ``mean_sq + eps`` is the
    culprit): (the kernel, the line of the kernel's ``name = param.attr``, the local, the parameter, the attribute).
    Followed through one helper call (``call_site``) from the helper's parameter to the kernel's argument."""
    assert culprit.line is not None
    fn = next((f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
               and f.lineno <= culprit.line <= (f.end_lineno or 0)
               and not any(isinstance(g, ast.FunctionDef) and g is not f and g.lineno <= culprit.line
                           <= (g.end_lineno or 0) for g in ast.walk(f))), None)
    if fn is None:
        return None
    name = _applied_name(fn, culprit.line, culprit.op)
    if name is None:
        return None
    kdef = fn if fn.name in kernels else None
    if kdef is None:
        params = [a.arg for a in fn.args.args]
        if call_site is None or name not in params or any(
                isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
                for s in ast.walk(fn)):
            return None
        kdef = _kernel_def(tree, call_site, kernels)
        if kdef is None:
            return None
        arg = _call_argument(kdef, fn.name, name, params, call_site)
        if not isinstance(arg, ast.Name):
            return None
        name, line = arg.id, call_site
    else:
        line = culprit.line
    assigned = [s for s in ast.walk(kdef) if isinstance(s, ast.Assign) and s.lineno < line and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    if len(assigned) != 1:
        return None
    value = assigned[0].value
    holders = {a.arg for a in kdef.args.args if not _is_tensor_param(a)}
    if not (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in holders):
        return None
    return kdef, assigned[0].lineno, name, value.value.id, value.attr


def wrapper_scalar(an: Analyzer, culprit: Rec | None, source: str, kernels: set[str],
                   replayer: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                   call_site: int | None = None) -> tuple[int, str] | None:
    """The wrapper line that computes a scalar argument the culprit op applies, when the golden is that op with
    another constant (see the module docstring); with why. None when the evidence is not there.

    Also a constant the kernel reads from an attribute of a configuration parameter (``eps = config.eps``; the op
    may sit in a helper the kernel calls, ``call_site``): when the local is named like the attribute, the object the
    wrapper built holds the wrong number - the wrapper line building it is named (``RMSNormConfig(x.shape[1], eps)``
    fills ``eps`` positionally with the channel count); when it is not (``eps = config.num_features``), the kernel
    read the wrong attribute - that kernel line is named (s37 seventh corpus, s36's ``rms_eps_attr``)."""
    if culprit is None or culprit.op not in _OPS or culprit.line is None or culprit.seq < 0:
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    kdef = _kernel_def(tree, culprit.line, kernels)
    param = _scalar_param(kdef, culprit.line, culprit.op) if kdef is not None else None
    attr = _attribute_source(tree, culprit, kernels, call_site) if param is None else None
    if param is None and attr is None:
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
    same = f"to a value that matches golden {g_in!r}; the golden {ref_out[0]!r} is the same {culprit.op} with " \
             f"{c_golden:.6g}."
    if attr is not None:
        kdef, at, local, holder, field = attr
        if local != field:
            return at, (f"{culprit.where()} applies {local!r} = {c_kernel:.6g} {same} The kernel reads {local!r} "
                        f"from {holder}.{field} at line {at}: the wrong attribute")
        line = _argument_line(tree, kdef, holder)
        if line is None:
            return None
        return line, (f"{culprit.where()} applies {local!r} = {c_kernel:.6g} {same} The kernel reads it from "
                      f"{holder}.{field} (line {at}), which holds the wrong number: the wrapper builds {holder!r} at "
                      f"line {line}")
    assert kdef is not None and param is not None
    line = _argument_line(tree, kdef, param)
    if line is None:
        return None
    return line, (f"{culprit.where()} applies the kernel's scalar parameter {param!r} = {c_kernel:.6g} {same} Every "
                  f"scalar parameter of the kernel is read, so the number is wrong, not the kernel line: the wrapper "
                  f"computes {param!r} at line {line}")


_SWAP_OPS = {"mul": np.multiply, "div": np.divide, "add": np.add, "sub": np.subtract}
_MAX_SWAPS = 6


def _applied_params(fn: ast.FunctionDef) -> dict[int, str]:
    """line -> the scalar parameter of kernel ``fn`` the one ``mul`` / ``div`` / ``add`` / ``sub`` call on that line
    applies as its second argument (``pypto.mul(w_tile, weight_decay)``); lines with several such calls are left out."""
    scalars = {a.arg for a in fn.args.args if not _is_tensor_param(a)}
    found: dict[int, list[str]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and ast.unparse(n.func).rsplit(".", 1)[-1] in _SWAP_OPS and len(n.args) >= 2:
            found.setdefault(n.lineno, []).append(n.args[1].id if isinstance(n.args[1], ast.Name) else "")
    return {ln: ps[0] for ln, ps in found.items() if len(ps) == 1 and ps[0] in scalars}


def _redo(fn: str, y: np.ndarray, c_old: float, c_new: float) -> np.ndarray | None:
    """``op(x, c_new)`` from ``y = op(x, c_old)`` (``x`` no longer held), or None where ``c_old`` cannot be undone."""
    f = y.astype(np.float64)
    if fn == "mul":
        return f / c_old * c_new if c_old != 0.0 else None
    if fn == "div":
        return f * c_old / c_new if c_new != 0.0 else None
    if fn == "add":
        return f - c_old + c_new
    if fn == "sub":
        return f + c_old - c_new
    return None


def swapped_scalars(an: Analyzer, source: str, kernels: set[str],
                    check: Callable[[Callable[[Any, Any, tuple], None]], bool]) -> tuple[int, str] | None:
    """Two scalar arguments the wrapper passes in each other's place (``kernel(.., weight_decay, lr, ..)`` for
    ``lr, weight_decay``): the wrapper line passing them, and why; None when the evidence is not there.

    Why: the kernel lines applying the two scalars both depart, each from operands the kernel computed right, so no
    one kernel line is wrong (the one-scalar rule, :func:`wrapper_scalar`, wants a single such line). The evidence:
    among the scalar parameters that the departing (or unverified) ops apply, a replay in which the ops applying one
    compute with the other's value and vice versa - every execution, nothing else changed - makes every output match
    the golden (``check``: replays with a hook after every op, says whether all outputs then match)."""
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    for kdef in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in kernels):
        applied = _applied_params(kdef)
        off = [p for p in dict.fromkeys(applied[r.line] for r in an.recs if r.line in applied
                                        and r.file is not None and an.status.get(r.seq) not in GOOD)]
        pairs = [(a, b) for i, a in enumerate(off) for b in off[i + 1:]][:_MAX_SWAPS]
        if not pairs:
            continue
        lines = {p: {ln for ln, q in applied.items() if q == p} for p in off}
        for a, b in pairs:
            values: dict[str, float] = {}

            def seen(env: Any, node: Any, v: tuple, a: str = a, b: str = b, values: dict[str, float] = values,
                     applied: dict[int, str] = applied) -> None:
                prm = node.op.params
                if node.op.kind == "binary" and prm.get("scalar") is not None and node.op.line in applied:
                    p = applied[node.op.line]
                    if p in (a, b):
                        values.setdefault(p, float(np.asarray(prm["scalar"])))
                if len(values) == 2:
                    raise _Stop

            check(seen)
            if len(values) != 2 or np.isclose(values[a], values[b], rtol=1e-6, atol=0.0):
                continue
            other = {a: values[b], b: values[a]}
            swaps: list[int] = []

            def swap(env: Any, node: Any, v: tuple, other: dict[str, float] = other, swaps: list[int] = swaps,
                     applied: dict[int, str] = applied) -> None:
                prm = node.op.params
                p = applied.get(node.op.line) if node.op.line is not None else None
                if p not in other or node.op.kind != "binary" or prm.get("scalar") is None \
                        or prm.get("fn") not in _SWAP_OPS or prm.get("alpha") is not None or node.op.out_key is None:
                    return
                cur = env.buf.get(node.op.out_key)
                if cur is None:
                    return
                x = np.asarray(env.get(prm["a"])[0])
                c_new = np.asarray(other[p], dtype=x.dtype)
                with np.errstate(all="ignore"):
                    if not np.may_share_memory(x, cur[0]):
                        new = _SWAP_OPS[prm["fn"]](x, c_new)
                    else:
                        # the op wrote over its dead operand: its value undone with its own constant, then redone
                        new = _redo(prm["fn"], np.asarray(cur[0]), float(np.asarray(prm["scalar"])), float(c_new))
                        if new is None:
                            return
                if tuple(new.shape) == tuple(np.shape(cur[0])):
                    env.buf[node.op.out_key] = (new.astype(np.asarray(cur[0]).dtype), cur[1])
                    swaps.append(node.op.line)

            if not check(swap) or not swaps:
                continue
            args = [(arg, ln) for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) and fn is not kdef
                    for p in (a, b) for arg, ln in call_arguments(fn, kdef, p)]
            if not args:
                continue
            line = max(getattr(arg, "lineno", ln) for arg, ln in args)
            return line, (f"the kernel lines applying its scalar parameters {a!r} = {values[a]:.6g} (line(s) "
                          f"{sorted(lines[a])}) and {b!r} = {values[b]:.6g} (line(s) {sorted(lines[b])}) both depart; "
                          f"in a replay where each computes with the other's value every output matches the golden: "
                          f"the wrapper passes the two arguments in each other's place (line {line})")
    return None
