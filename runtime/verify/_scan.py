"""Where a test of one size changes its answer, found by evaluating it on every size (hint version 26, red team 39).

Why: versions 23-25 of the hint reader read the *integers* a file compares a size with, in every spelling of
integer arithmetic. A window written without one - ``7.5 < math.log2(n) < 8.2``, ``n.bit_length() == 8``,
``13 < math.isqrt(n) < 17``, ``31000 < n * n < 90000``, ``11.0 < n * 0.0625 < 18.7``, a helper returning ``0.69 < n /
256 < 1.17`` - names no size, and round 39's kernels wrong on one tail inside such a window passed 1 to 8 runs in 20
(the residue's cases are drawn in intervals of the drawing's own windows, and the file's window is not one of them).
Whatever the spelling, such a test is a function of one unknown, and the sizes where its answer flips are the window's
ends. So: evaluate it, vectorised, on every size 1 .. :data:`SCAN_TOP` and take its flips as bounds (and, for a test
whose answers repeat every ``m`` sizes - ``math.fmod(n, 16) == 11.0`` -, the residues of its rarer answer).

Only syntax is evaluated, by this module's own interpreter over numpy arrays: integer and float literals and the
names the reader already folded, ``+ - * / // % ** << >> & | ^``, comparisons, ``and``/``or``/``not``, conditional
expressions, ``abs``, ``int``, ``float``, ``round``, ``min``, ``max``, ``len(str(n))``, ``len(bin(n))``,
``len(f"{n:b}")``, ``n.bit_length()`` and ``math``'s ``log2``, ``log``, ``log10``, ``log1p``, ``sqrt``, ``isqrt``,
``exp``, ``exp2``, ``floor``, ``ceil``, ``trunc``, ``fabs``. Anything else is an unknown (``x.shape[0]``, ``n``,
``x.numel()``); a test is read only when it holds exactly one unknown (the size it tests). Nothing of the candidate
runs. A test whose answer flips more than :data:`MAX_FLIPS` times (a remainder: ``n % 16 == 11``) is the residue
reader's, not a window.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import numpy as np

__all__ = ["MAX_FLIPS", "MAX_PERIOD", "MAX_SCANNED_TESTS", "SCAN_TOP", "read_tests"]

SCAN_TOP = 1 << 15
"""Sizes 1 .. SCAN_TOP are evaluated: every size the drawing runs on an axis whose SPEC sizes stay under 8192
(:func:`runtime.opdir._unseen.hint_plan` stops at 4x the SPEC's largest, or 8192 on an axis every output keeps)."""
MAX_FLIPS = 8
"""A test that flips more often is periodic (a remainder's): its flips are no window's ends."""
MAX_PERIOD = 512
"""A test that flips more often is read as a remainder when its answers repeat with a period of at most this."""
MAX_RESIDUES = 4
"""A periodic test gives the residues of the rarer answer, when there are at most this many in a period."""
MAX_SCANNED_TESTS = 64
"""At most this many tests of a file are evaluated (a file built to be slow to read stays cheap)."""
MAX_PERIODIC_TESTS = 32
"""At most this many of them are searched for a period (each search compares up to :data:`MAX_PERIOD` shifts)."""
_PERIOD_PROBE = 8 * MAX_PERIOD
"""A shift is tried on this many sizes first, and only a shift that matches there on all of them."""
_MAX_DEPTH = 40


class _Skip(Exception):
    """The expression is not one this module evaluates (two unknowns, a string, an unknown function...)."""


_MATH: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "log2": np.log2, "log": np.log, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "exp": np.exp,
    "exp2": np.exp2, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "fabs": np.abs,
}


def _unknowns(node: ast.AST, env: dict[str, int], out: set[str], depth: int = 0) -> None:
    """The unknowns of ``node`` (``ast.dump`` of each), as :func:`_eval` will meet them."""
    if depth > _MAX_DEPTH:
        raise _Skip
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, int | float) or isinstance(node.value, bool):
            raise _Skip
        return
    if isinstance(node, ast.Name):
        if node.id not in env:
            out.add(ast.dump(node))
        return
    if isinstance(node, ast.BinOp):
        _unknowns(node.left, env, out, depth + 1)
        _unknowns(node.right, env, out, depth + 1)
        return
    if isinstance(node, ast.UnaryOp):
        _unknowns(node.operand, env, out, depth + 1)
        return
    if isinstance(node, ast.Compare):
        for side in (node.left, *node.comparators):
            _unknowns(side, env, out, depth + 1)
        return
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _unknowns(value, env, out, depth + 1)
        return
    if isinstance(node, ast.IfExp):
        for part in (node.test, node.body, node.orelse):
            _unknowns(part, env, out, depth + 1)
        return
    if isinstance(node, ast.Call):
        args = _known_call(node)
        if args is None:
            out.add(ast.dump(node))
            return
        for arg in args:
            _unknowns(arg, env, out, depth + 1)
        return
    if isinstance(node, ast.Attribute | ast.Subscript):
        out.add(ast.dump(node))
        return
    raise _Skip


def _fname(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "math":
        return "math." + func.attr
    return None


def _digits_of(node: ast.Call) -> tuple[str, ast.expr] | None:
    """``("dec" | "bin" | "bin0b", n)`` for ``len(str(n))``, ``len(f"{n:b}")``/``len(format(n, "b"))`` and
    ``len(bin(n))``."""
    if _fname(node.func) != "len" or len(node.args) != 1 or node.keywords:
        return None
    inner = node.args[0]
    if isinstance(inner, ast.Call) and len(inner.args) == 1 and not inner.keywords:
        name = _fname(inner.func)
        if name in ("str", "repr"):
            return "dec", inner.args[0]
        if name == "bin":
            return "bin0b", inner.args[0]
    if isinstance(inner, ast.Call) and _fname(inner.func) == "format" and len(inner.args) == 2 \
            and isinstance(inner.args[1], ast.Constant) and inner.args[1].value in ("b", "d"):
        return ("bin" if inner.args[1].value == "b" else "dec"), inner.args[0]
    if isinstance(inner, ast.JoinedStr) and len(inner.values) == 1 and isinstance(inner.values[0], ast.FormattedValue):
        fv = inner.values[0]
        spec = fv.format_spec
        text = "" if spec is None else "".join(v.value for v in spec.values if isinstance(v, ast.Constant)) \
            if isinstance(spec, ast.JoinedStr) else None
        if fv.conversion == -1 and text in ("", "d", "b"):
            return ("bin" if text == "b" else "dec"), fv.value
    return None


def _known_call(node: ast.Call) -> list[ast.expr] | None:
    """The arguments of a call :func:`_eval` evaluates, or None (the call is then an unknown)."""
    if node.keywords:
        return None
    digits = _digits_of(node)
    if digits is not None:
        return [digits[1]]
    name = _fname(node.func)
    if name in ("abs", "int", "float") and len(node.args) == 1:
        return list(node.args)
    if name == "round" and len(node.args) == 1:
        return list(node.args)
    if name in ("min", "max") and len(node.args) >= 2:
        return list(node.args)
    if name in ("math.fmod", "math.remainder") and len(node.args) == 2:
        return list(node.args)
    if name is not None and name.startswith("math.") and name[5:] in (*_MATH, "isqrt") and len(node.args) == 1:
        return list(node.args)
    if isinstance(node.func, ast.Attribute) and node.func.attr == "bit_length" and not node.args:
        return [node.func.value]
    return None


def _eval(node: ast.AST, env: dict[str, int], n: np.ndarray) -> np.ndarray:
    """``node`` evaluated on every size of ``n`` (the one unknown); int64 or float64 or bool arrays."""
    if isinstance(node, ast.Constant):  # a 0-d array: numpy broadcasts it against the sizes
        return np.asarray(node.value, dtype=np.int64 if isinstance(node.value, int) else np.float64)
    if isinstance(node, ast.Name):
        return np.asarray(env[node.id], dtype=np.int64) if node.id in env else n
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, n)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            return ~(v != 0)
        if isinstance(node.op, ast.Invert) and v.dtype.kind == "i":
            return ~v
        raise _Skip
    if isinstance(node, ast.BinOp):
        return _binop(node.op, _eval(node.left, env, n), _eval(node.right, env, n))
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, n)
        result = np.ones(n.shape, dtype=bool)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = _eval(comp, env, n)
            result &= _compare(op, left, right)
            left = right
        return result
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, env, n) != 0 for v in node.values]
        out = values[0]
        for v in values[1:]:
            out = (out & v) if isinstance(node.op, ast.And) else (out | v)
        return out
    if isinstance(node, ast.IfExp):
        body, orelse = _eval(node.body, env, n), _eval(node.orelse, env, n)
        return np.where(_eval(node.test, env, n) != 0, body, orelse)
    if isinstance(node, ast.Call):
        args = _known_call(node)
        if args is None:
            return n
        return _call(node, [_eval(a, env, n) for a in args])
    if isinstance(node, ast.Attribute | ast.Subscript):
        return n
    raise _Skip


def _int_or_float(v: np.ndarray) -> np.ndarray:
    return v if v.dtype.kind in "if" else v.astype(np.int64)


def _binop(op: ast.operator, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = _int_or_float(a), _int_or_float(b)
    ints = a.dtype.kind == "i" and b.dtype.kind == "i"
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b if ints and np.abs(a).max() < 1 << 31 and np.abs(b).max() < 1 << 31 else \
            a.astype(np.float64) * b
    if isinstance(op, ast.Div):
        return a.astype(np.float64) / b
    if isinstance(op, ast.FloorDiv | ast.Mod):
        if (b == 0).any():
            raise _Skip
        return (a // b) if isinstance(op, ast.FloorDiv) else (a % b)
    if isinstance(op, ast.Pow):
        return np.power(a.astype(np.float64), b.astype(np.float64))
    if ints and isinstance(op, ast.LShift | ast.RShift | ast.BitAnd | ast.BitOr | ast.BitXor):
        if isinstance(op, ast.LShift | ast.RShift) and not ((0 <= b) & (b < 32)).all():
            raise _Skip
        fn = {ast.LShift: np.left_shift, ast.RShift: np.right_shift, ast.BitAnd: np.bitwise_and,
              ast.BitOr: np.bitwise_or, ast.BitXor: np.bitwise_xor}[type(op)]
        return fn(a, b)
    raise _Skip


def _compare(op: ast.cmpop, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if isinstance(op, ast.Lt):
        return a < b
    if isinstance(op, ast.LtE):
        return a <= b
    if isinstance(op, ast.Gt):
        return a > b
    if isinstance(op, ast.GtE):
        return a >= b
    if isinstance(op, ast.Eq):
        return a == b
    if isinstance(op, ast.NotEq):
        return a != b
    raise _Skip


def _call(node: ast.Call, args: list[np.ndarray]) -> np.ndarray:
    digits = _digits_of(node)
    if digits is not None:
        v = args[0]
        if v.dtype.kind != "i" or (v < 0).any():
            raise _Skip
        bits = _bit_length(v)
        if digits[0] == "dec":
            return np.where(v == 0, 1, np.floor(np.log10(np.maximum(v, 1))).astype(np.int64) + 1)
        return np.maximum(bits, 1) + (2 if digits[0] == "bin0b" else 0)
    name = _fname(node.func)
    if name is None and isinstance(node.func, ast.Attribute) and node.func.attr == "bit_length":
        if args[0].dtype.kind != "i":
            raise _Skip
        return _bit_length(np.abs(args[0]))
    v = _int_or_float(args[0])
    if name in ("math.fmod", "math.remainder"):
        d = args[1].astype(np.float64)
        if (d == 0).any():
            raise _Skip
        f = v.astype(np.float64)
        return np.fmod(f, d) if name == "math.fmod" else f - np.round(f / d) * d  # IEEE: ties to even
    if name == "abs":
        return np.abs(v)
    if name == "int":
        return np.trunc(v).astype(np.int64) if v.dtype.kind == "f" else v
    if name == "float":
        return v.astype(np.float64)
    if name == "round":
        return np.round(v).astype(np.int64) if v.dtype.kind == "f" else v
    if name in ("min", "max"):
        out = _int_or_float(args[0])
        for other in args[1:]:
            out = (np.minimum if name == "min" else np.maximum)(out, _int_or_float(other))
        return out
    if name == "math.isqrt":
        if v.dtype.kind != "i" or (v < 0).any():
            raise _Skip
        r = np.floor(np.sqrt(v.astype(np.float64))).astype(np.int64)
        r -= (r * r > v).astype(np.int64)
        return r + ((r + 1) * (r + 1) <= v).astype(np.int64)
    if name is not None and name.startswith("math.") and name[5:] in _MATH:
        out = _MATH[name[5:]](v.astype(np.float64))
        return out.astype(np.int64) if name[5:] in ("floor", "ceil", "trunc") and np.isfinite(out).all() else out
    raise _Skip


def _bit_length(v: np.ndarray) -> np.ndarray:
    out = np.zeros(v.shape, dtype=np.int64)
    w = v.copy()
    while (w > 0).any():
        out += (w > 0).astype(np.int64)
        w >>= 1
    return out


def _tests(tree: ast.AST) -> list[ast.expr]:
    """Every comparison of the file, and every other expression used as a truth value (an ``if``'s test, an
    operand of ``and``/``or``/``not``)."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            found.append(node)
        elif isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
            found.append(node.test)
        elif isinstance(node, ast.BoolOp):
            found.extend(node.values)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            found.append(node.operand)
    return found


def _beyond_integers(test: ast.expr, unknown: str) -> bool:
    """Whether ``test`` computes with its size beyond the integer arithmetic versions 23-25 read: a float, a true
    division, a power, a function (``math.log2``, ``min``, ``bit_length``...) or the size more than once (``n * n``).
    A test the integer reader reads already (``77 < n < 160``, ``4 < q < 10`` on a quotient, ``pad == 5`` on a
    padding) is left to it: its values are not always sizes, and its hints stay as they were."""
    uses = 0
    for node in ast.walk(test):
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Pow):
            return True
        if isinstance(node, ast.Call) and _known_call(node) is not None:
            return True
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call) and ast.dump(node) == unknown:
            uses += 1
    return uses > 1


def read_tests(tree: ast.AST, env: dict[str, int]) -> tuple[set[int], set[tuple[int, int]]]:
    """``(bounds, residues)`` of the tests of one unknown in ``tree`` that compute beyond integer arithmetic
    (:func:`_beyond_integers`): the sizes ``s`` (2 .. :data:`SCAN_TOP`) where a test that flips at most
    :data:`MAX_FLIPS` times answers otherwise than at ``s - 1`` (a window's ends), and ``(m, r)`` for a test whose
    answers repeat every ``m`` sizes (``math.fmod(n, 16) == 11.0``, ``n / 16 % 1 == 0.6875``: ``(16, 11)``), ``r``
    each residue of its rarer answer. ``env``: the names the reader folded."""
    n = np.arange(1, SCAN_TOP + 1, dtype=np.int64)
    bounds: set[int] = set()
    residues: set[tuple[int, int]] = set()
    seen: set[str] = set()
    scanned = periodic = 0
    for test in _tests(tree):
        key = ast.dump(test)
        if key in seen or isinstance(test, ast.BoolOp):  # a conjunction's parts are tests of their own
            continue
        seen.add(key)
        unknowns: set[str] = set()
        try:
            _unknowns(test, env, unknowns)
        except _Skip:
            continue
        if len(unknowns) != 1 or not _beyond_integers(test, next(iter(unknowns))):
            continue
        scanned += 1
        if scanned > MAX_SCANNED_TESTS:
            break
        try:
            with np.errstate(all="ignore"):
                truth = np.asarray(_eval(test, env, n) != 0)
        except (_Skip, ValueError, TypeError, OverflowError, KeyError, ZeroDivisionError):
            continue
        if truth.shape != n.shape:  # a test that does not depend on the size after all
            continue
        where = np.flatnonzero(truth[1:] != truth[:-1]) + 2  # the size at which the answer differs from s - 1
        if 1 <= len(where) <= MAX_FLIPS:
            bounds.update(int(s) for s in where)
        elif len(where) > MAX_FLIPS and periodic < MAX_PERIODIC_TESTS:
            periodic += 1
            residues.update(_period_residues(truth, n))
    return bounds, residues


def _period_residues(truth: np.ndarray, n: np.ndarray) -> set[tuple[int, int]]:
    """``(m, r)`` for each residue ``r`` of the rarer answer of ``truth`` (the test's answer at sizes ``n``) when it
    repeats every ``m`` sizes, ``m`` the least such period up to :data:`MAX_PERIOD`; empty otherwise."""
    probe = truth[:_PERIOD_PROBE]
    for m in range(2, MAX_PERIOD + 1):
        if np.array_equal(probe[m:], probe[:-m]) and np.array_equal(truth[m:], truth[:-m]):
            period = truth[:m]
            rare = period if int(period.sum()) * 2 <= m else ~period
            count = int(rare.sum())
            if 1 <= count <= MAX_RESIDUES:
                return {(m, int(s) % m) for s in n[:m][rare]}
            return set()
    return set()
