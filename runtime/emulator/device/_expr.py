"""Evaluation of program expressions (`_program.Expr`) on the device: scalar, vectorised, linear forms.

An expression is compiled once into a tree of small closures (no ``eval``/``exec``: the program may come from
an untrusted process) and then evaluated per loop iteration with Python ints. The semantics are those of the
trace-time `SymbolicScalar`: ``/`` is floor division, comparisons and ``&``/``|`` give 0/1, a symbol without
a value raises ``ValueError("symbol N has no value at run time")``. The batch executor evaluates offsets for a
whole vector of loop-index values at once (`compile_vector`) and asks whether an offset is affine in a loop
index (`linear_form`, `coef`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["BIN_FUNCS", "compile_expr", "compile_vector", "const_value", "depends_on", "linear_form", "loop_coef"]

Fn = Callable[[Any], Any]


def _floordiv(a: int, b: int) -> int:
    return a // b


BIN_FUNCS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": _floordiv,
    "%": operator.mod,
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
    "&": lambda a, b: int(bool(a) and bool(b)),
    "|": lambda a, b: int(bool(a) or bool(b)),
    "min": min,
    "max": max,
}
"""what each binary operator of a program expression (`_program.BIN_OPS`) computes on ints: the one table of the
trace-time `SymbolicScalar` (folding, `_roll`) and of the device (evaluation), so the two cannot disagree"""


def _i(a: Any) -> Any:
    return np.asarray(a).astype(np.int64)


_BIN_VEC: dict[str, Callable[[Any, Any], Any]] = dict(BIN_FUNCS)
_BIN_VEC.update({
    "==": lambda a, b: _i(a == b), "!=": lambda a, b: _i(a != b), "<": lambda a, b: _i(a < b),
    "<=": lambda a, b: _i(a <= b), ">": lambda a, b: _i(a > b), ">=": lambda a, b: _i(a >= b),
    "&": lambda a, b: _i(np.logical_and(a, b)), "|": lambda a, b: _i(np.logical_or(a, b)),
    "min": np.minimum, "max": np.maximum,
})


def const_value(e: Any) -> int | None:
    """The int value of a constant expression, else None."""
    return e if type(e) is int else None


def _const(v: int) -> Fn:
    return lambda env: v


def _sym(name: str) -> Fn:
    def f(env: Any) -> int:
        try:
            return env.sym[name]
        except KeyError:
            raise ValueError(f"symbol {name} has no value at run time") from None

    return f


def _idx(lid: int) -> Fn:
    def f(env: Any) -> int:
        return env.sym[lid]

    return f


def _read(key: int, idx: list[Fn], name: str) -> Fn:
    def f(env: Any) -> int:
        arr, _ = env.get(key)
        at = tuple(g(env) for g in idx)
        try:
            return int(arr[at])
        except IndexError:
            raise env.error("EMU_READ_OOB", f"scalar read {name}{list(at)} outside shape {list(arr.shape)}") \
                from None

    return f


def _flag(which: str, lid: int) -> Fn:
    if which == "begin":
        def begin(env: Any) -> int:
            return int(env.sym[lid] == env.loop_range[lid][0])

        return begin

    def end(env: Any) -> int:
        s0, s1, st = env.loop_range[lid]
        v = env.sym[lid]
        return int(v + st >= s1) if st > 0 else int(v + st <= s1)

    return end


def compile_expr(e: Any, memo: dict[int, Fn] | None = None) -> Fn:
    """A function ``env -> int`` evaluating ``e`` (``env.sym`` holds symbol and loop-index values)."""
    if memo is not None:
        f = memo.get(id(e))
        if f is not None:
            return f
    f = _compile(e, memo)
    if memo is not None:
        memo[id(e)] = f
    return f


_slots = itertools.count()


def _per_call(f: Fn) -> Fn:
    """``f`` evaluated once per kernel call: an expression of symbols only (``S / B / 8``) has one value for the
    whole call (symbols are bound from the argument shapes before the body runs and never change), but a view's
    offset re-evaluated its closure tree in every iteration - a tenth of a tiled attention kernel's run time.
    The value lives in the call's `Env` (``env.per_call``), so a prepared body shared by calls stays stateless."""
    slot = next(_slots)

    def g(env: Any) -> Any:
        try:
            cache = env.per_call
        except AttributeError:  # an evaluation context without a per-call cache
            return f(env)
        v = cache.get(slot)
        if v is None:
            v = cache[slot] = f(env)  # an error (a symbol without a value) is raised, not cached
        return v

    return g


def _symbols_only(e: Any) -> bool:
    """Whether ``e`` reads only symbols and constants (no loop index, tensor read or loop flag)."""
    if type(e) is int:
        return True
    tag = e[0]
    if tag == "sym":
        return True
    if tag == "bin":
        return _symbols_only(e[2]) and _symbols_only(e[3])
    return False


def _compile(e: Any, memo: dict[int, Fn] | None) -> Fn:
    if type(e) is int:
        return _const(e)
    tag = e[0]
    if tag == "sym":
        return _sym(e[1])
    if tag == "idx":
        return _idx(e[1])
    if tag == "bin" and _symbols_only(e):
        return _per_call(_compile_bin(e, memo))
    if tag == "bin":
        return _compile_bin(e, memo)
    if tag == "read":
        return _read(e[1], [compile_expr(x, memo) for x in e[2]], e[3])
    if tag == "flag":
        return _flag(e[1], e[2])
    raise ValueError(f"cannot evaluate {e!r}")


def _compile_bin(e: Any, memo: dict[int, Fn] | None) -> Fn:
    fn = BIN_FUNCS[e[1]]
    a, b = e[2], e[3]
    if type(b) is int:
        fa = compile_expr(a, memo)
        return lambda env: fn(fa(env), b)
    if type(a) is int:
        fb = compile_expr(b, memo)
        return lambda env: fn(a, fb(env))
    fa, fb = compile_expr(a, memo), compile_expr(b, memo)
    return lambda env: fn(fa(env), fb(env))


def compile_vector(e: Any) -> Fn:
    """Like `compile_expr` for a vector of loop-index values (numpy int arrays in ``env.sym``); raises
    ValueError for run-time leaves (tensor reads, loop flags), which cannot be vectorised."""
    if type(e) is int:
        return _const(e)
    tag = e[0]
    if tag == "sym":
        name = e[1]
        return lambda env: env.sym[name]
    if tag == "idx":
        lid = e[1]
        return lambda env: env.sym[lid]
    if tag == "bin":
        fn = _BIN_VEC[e[1]]
        fa, fb = compile_vector(e[2]), compile_vector(e[3])
        return lambda env: fn(fa(env), fb(env))
    raise ValueError("runtime leaf cannot be vectorised")


def depends_on(e: Any, lid: int) -> bool:
    """True when ``e`` may change with loop ``lid`` (run-time leaves are opaque: treated as dependent)."""
    if type(e) is int:
        return False
    tag = e[0]
    if tag == "idx":
        return e[1] == lid
    if tag in ("read", "flag"):
        return True
    if tag == "bin":
        return depends_on(e[2], lid) or depends_on(e[3], lid)
    return False


def linear_form(e: Any) -> tuple[dict[Any, tuple[Any, int]], int] | None:
    """Linear form ``({atom: (atom, coeff)}, const)`` of an expression, or None if it is not linear."""
    if type(e) is int:
        return {}, e
    if e[0] == "bin" and e[1] in ("+", "-"):
        a, b = linear_form(e[2]), linear_form(e[3])
        if a is None or b is None:
            return None
        sign = 1 if e[1] == "+" else -1
        terms = dict(a[0])
        for k, (atom, c) in b[0].items():
            prev = terms.get(k, (atom, 0))[1]
            terms[k] = (atom, prev + sign * c)
        return terms, a[1] + sign * b[1]
    if e[0] == "bin" and e[1] == "*":
        a, b = linear_form(e[2]), linear_form(e[3])
        if a is None or b is None:
            return None
        if not a[0]:
            a, b = b, a
        if b[0]:
            return {e: (e, 1)}, 0
        k = b[1]
        return {n: (atom, c * k) for n, (atom, c) in a[0].items()}, a[1] * k
    return {e: (e, 1)}, 0


def loop_coef(e: Any, lid: int) -> int | None:
    """Coefficient of loop ``lid``'s index in an affine offset, or None if the offset is not affine in it."""
    if not depends_on(e, lid):
        return 0
    lf = linear_form(e)
    if lf is None:
        return None
    coef = 0
    for atom, c in lf[0].values():
        if type(atom) is tuple and atom[0] == "idx" and atom[1] == lid:
            coef += c
        elif depends_on(atom, lid):
            return None
    return coef
