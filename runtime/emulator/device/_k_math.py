"""Device implementations of the arithmetic ops: elementwise, selection, cast, reductions, scans, composites,
matmul and the creation ops.

16-bit floats are computed in float32 and rounded once per op to the output dtype (`_numerics.compute`; on A2/A3
a BF16 result is kept in float32, `_promote`);
valid shapes propagate (elementwise results keep the common valid box, reductions use only the valid extent
of the reduced axis). The numpy function of an op is chosen by name from the closed tables below, never
taken from the program.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.emulator._buffers import is_float_np
from runtime.emulator._enums import CastMode, DataType, SaturationMode
from runtime.emulator._numerics import cast_array, compute, to_bf16
from runtime.emulator.device._kreg import kind, np_dtype

__all__ = ["BINARY", "REDUCE", "UNARY"]


def _div(x: np.ndarray, y: Any) -> np.ndarray:
    if x.dtype.kind in "iu":
        return np.divide(x.astype(np.float32), np.asarray(y).astype(np.float32))
    return np.divide(x, y)


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _div,
    "floor_div": lambda x, y: np.floor_divide(x, y), "remainder": np.mod, "fmod": np.fmod, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum, "hypot": np.hypot, "copysign": np.copysign,
    "atan2": np.arctan2, "gcd": np.gcd, "ceil_div": lambda x, y: -np.floor_divide(-x, y),
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift, "right_shift": np.right_shift,
    "logical_and": np.logical_and, "prelu": lambda x, y: np.where(x > 0, x, x * y),
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "exp_dif": lambda x, y: np.exp(x - y),
}
"""binary op functions by name (``fn`` parameter of kind ``binary``)"""


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


_erf_v = np.vectorize(math.erf, otypes=[np.float64])
_erfc_v = np.vectorize(math.erfc, otypes=[np.float64])

UNARY: dict[str, Callable[[Any], Any]] = {
    "abs": np.abs, "neg": np.negative, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
    "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt, "rsqrt": _rsqrt,
    "reciprocal": np.reciprocal, "sign": np.sign, "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc,
    "cbrt": np.cbrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh,
    "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "erf": lambda x: _erf_v(x).astype(np.float32),
    "erfc": lambda x: _erfc_v(x).astype(np.float32), "bitwise_not": np.invert, "logical_not": np.logical_not,
    "identity": lambda x: x, "signbit": np.signbit, "isfinite": np.isfinite, "isnan": np.isnan, "rint": np.rint,
}
"""unary op functions by name (``fn`` of kind ``unary``; ``lrelu`` and ``round`` take a parameter)"""


def _sigmoid_into(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    t = np.negative(x, out=out)
    np.exp(t, out=t)
    np.add(1.0, t, out=t)
    return np.divide(1.0, t, out=t)


def _rsqrt_into(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    t = np.sqrt(x, out=out)
    return np.divide(1.0, t, out=t)


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

UNARY_INTO: dict[str, Callable[..., Any]] = {"sigmoid": _sigmoid_into, "rsqrt": _rsqrt_into}
"""the composite unary functions computed in one new array instead of one per step, for float32/float64 operands
(`_FLOATS`): the same ufuncs on the same dtypes, so the same bits (``1.0 + t`` and ``np.add(1.0, t, out=t)`` take
the same loop), but one allocation - on the gym's multi-MB tiles, each fresh temporary costs its page faults
(sigmoid over 8 MB: four arrays -> one)"""


# ---- results written over a dead operand ----------------------------------------------------------------

def _sole_refcount() -> int | None:
    """``sys.getrefcount(buf[key][0])`` of an array that only its ``env.buf`` entry holds, or None when this
    interpreter does not tell a held array from a sole one (then no result is ever written over an operand)."""
    buf = {0: (np.empty(4), None)}
    sole = sys.getrefcount(buf[0][0])
    view = buf[0][0][1:]  # a view holds its base: one more reference
    held = sys.getrefcount(buf[0][0])
    del view
    return sole if held == sole + 1 else None


_SOLE = _sole_refcount()


def scratch(env: Any, key: int, dt: np.dtype) -> np.ndarray | None:
    """The array under storage ``key`` if the running op may write its result over it, else None.

    Why: on the gym's multi-MB tiles every fresh result array costs its page faults (on this 2-core VM about as
    much as the arithmetic: first touch of 4 MB ~1-2 ms), and an elementwise chain (``cast -> mul -> add`` in
    sum_lstm) allocated one per op although its operand died at that op. When: nothing reads ``key`` after this
    op (the liveness drop of `_prepare`), it is not a kernel argument, the array owns its memory, is writeable,
    has the result's dtype, and nothing else holds it - no view of it (a view holds its base), no other storage
    key, no record - which its reference count tells (numpy elides temporaries by the same test). The caller
    still checks the result's shape and numpy's result dtype (`_fits`); the ufunc is the same, so are the bits.
    """
    if _SOLE is None or key not in env.node.free or key in env.param_keys:
        return None
    buf = env.buf
    if sys.getrefcount(buf[key][0]) != _SOLE:
        return None
    x = buf[key][0]
    if x.dtype != dt or not x.flags.owndata or not x.flags.writeable:
        return None
    return x


def _fits(out: np.ndarray, a: Any, b: Any) -> bool:
    """Whether ``ufunc(a, b)`` has ``out``'s shape and dtype (then ``ufunc(a, b, out=out)`` runs the same loop)."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == out.dtype and b.dtype == out.dtype:
        # the common case, without numpy's Python-level broadcast_shapes (~5 us per op in a per-iteration loop):
        # same dtypes give that dtype; a shape equal to out's, or a 0-d scalar, broadcasts to out's shape
        sa, sb, so = a.shape, b.shape, out.shape
        if (sa == so or not sa) and (sb == so or not sb) and (sa or sb):
            return True
    try:
        return np.broadcast_shapes(np.shape(a), np.shape(b)) == out.shape and np.result_type(a, b) == out.dtype
    except (ValueError, TypeError):
        return False


def _placed(get: Callable[[tuple, np.dtype], np.ndarray | None], a: Any, b: Any, ond: np.dtype
            ) -> np.ndarray | None:
    """An array to compute a binary result into, from ``get(shape, dtype)`` - the consuming assemble's window
    (`Env.place`) or a dead array of that shape (`Env.take_spare`) - when numpy's result is ``ond``."""
    try:
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        dt = np.result_type(a, b)
    except (ValueError, TypeError):
        return None
    return get(shape, ond) if dt == ond else None


BINARY_OUT: dict[str, np.ufunc] = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                                   "maximum": np.maximum, "minimum": np.minimum}
"""binary functions whose float result may be written over a dead operand (``div`` is `_div`'s float branch)"""

def _into(f: np.ufunc) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return lambda x, out: f(x, out=out)


UNARY_OUT: dict[str, Callable[[Any, Any], Any]] = {
    **{n: _into(f) for n, f in UNARY.items()
       if isinstance(f, np.ufunc) and n not in ("signbit", "isfinite", "isnan", "logical_not", "bitwise_not")},
    **UNARY_INTO}
"""unary functions with a form ``f(x, out)`` for float32/float64 ``x`` (same ufuncs, written into ``out``)"""


def _unary_fn(p: dict[str, Any]) -> Callable[[Any], Any]:
    fn = p["fn"]
    into = UNARY_INTO.get(fn)
    if into is not None:
        base = UNARY[fn]

        def pick(x: Any) -> Any:
            return into(x) if type(x) is np.ndarray and x.ndim and x.dtype in _FLOATS else base(x)
        return pick
    if fn == "lrelu":
        s = p["arg"]
        return lambda x: np.where(x > 0, x, x * s)
    if fn == "round":
        decimals = p["arg"]
        return lambda x: np.round(x, decimals)
    return UNARY[fn]


def valid_of(shape_out: tuple, operands: list[tuple[np.ndarray, tuple]]) -> tuple:
    v = list(shape_out)
    for arr, valid in operands:
        for d, n in enumerate(arr.shape):
            if n != 1 or shape_out[d] == 1:
                if valid[d] < v[d]:
                    v[d] = valid[d]
    return tuple(v)


def _check_binary(p: dict[str, Any]) -> str | None:
    if p["fn"] not in BINARY:
        return f"unknown binary function {p['fn']!r}"
    if (p["b"] is None) == (p["scalar"] is None):
        return "binary needs exactly one of b and scalar"
    if not 0 <= p["pad_a"] <= 8 or not 0 <= p["pad_b"] <= 8:
        return "binary padding out of range"
    return None


@kind("binary", {"a": "key", "b": "key?", "out": "key", "fn": "str", "alpha": "num?", "scalar": "const?",
                 "pad_a": "int", "pad_b": "int", "odt": "dtype"}, check=_check_binary, reads=("a", "b"))
def build_binary(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    fn = BINARY[p["fn"]]
    alpha = p["alpha"]
    if alpha is not None:
        base = fn

        def fn(x: Any, y: Any) -> Any:
            return base(x, y * alpha)

    akey, bkey, okey, ond = p["a"], p["b"], p["out"], np_dtype(p["odt"])
    bval, pad_a, pad_b = p["scalar"], p["pad_a"], p["pad_b"]
    # the ufunc that may write the result over a dead operand (float results, no alpha, no rank padding)
    ufo = BINARY_OUT.get(p["fn"]) if alpha is None and ond in _FLOATS and not (pad_a or pad_b) else None

    def over(env: Any) -> np.ndarray | None:
        """A dead operand the result may be written over (`scratch`)."""
        out = scratch(env, akey, ond)
        if out is None and bkey is not None and bkey != akey:
            out = scratch(env, bkey, ond)
        return out

    def apply(env: Any, a: Any, b: Any, out: np.ndarray | None) -> np.ndarray:
        """``fn(a, b)``, computed into ``out`` when it fits, else into a dead array of the result's shape and dtype
        (`Env.take_spare`: no operand dies here, an array that died before), else into a new array."""
        if ufo is None:
            return fn(a, b)
        if env.spare and (out is None or not _fits(out, a, b)):
            out = _placed(env.take_spare, a, b, ond)
        return ufo(a, b, out=out) if out is not None and _fits(out, a, b) else fn(a, b)

    def run(env: Any) -> None:
        out = over(env) if ufo is not None else None
        xa, va = (env.buf.get(akey) or env.get(akey))
        if pad_a:
            xa, va = xa.reshape((1,) * pad_a + xa.shape), (1,) * pad_a + tuple(va)
        if bkey is not None:
            xb, vb = (env.buf.get(bkey) or env.get(bkey))
            if pad_b:
                xb, vb = xb.reshape((1,) * pad_b + xb.shape), (1,) * pad_b + tuple(vb)
            if env.max_alloc is not None and xa.shape != xb.shape:
                try:
                    env.check_alloc(np.broadcast_shapes(xa.shape, xb.shape), max(ond.itemsize, 4))
                except ValueError:
                    pass  # numpy reports the shape mismatch below
            try:
                r = apply(env, compute(xa), compute(xb), out)
            except ValueError as exc:
                raise env.error("FC0000", f"shape not support binary operation ({list(xa.shape)} vs "
                                f"{list(xb.shape)}): {exc}") from None
            rs = r.shape
            if xa.shape == rs and xb.shape == rs and len(va) == len(rs) == len(vb):
                valid = tuple(map(min, rs, va, vb))  # `valid_of` when nothing broadcasts (every axis counts)
            else:
                valid = valid_of(rs, [(xa, va), (xb, vb)])
        else:
            r = apply(env, compute(xa), bval, out)
            valid = va
        if r.dtype != ond:
            r = r.astype(ond)
        env.buf[okey] = (r, valid)

    def brun(env: Any) -> None:
        place = env.place if ufo is not None else None
        out = over(env) if ufo is not None and place is None else None
        xa = env.buf[akey][0]
        a = compute(xa)
        b = compute(env.buf[bkey][0]) if bkey is not None else bval
        if place is not None:
            out = _placed(place, a, b, ond)
        if ufo is not None and out is None and a is not xa and a.dtype == ond:
            out = a  # the float32 copy of a 16-bit operand is this op's own temporary
        env.buf[okey] = (apply(env, a, b, out).astype(ond, copy=False), None)

    rank = int(op.types[0][1]) if getattr(op, "types", None) else None

    def _lead_pad(x: np.ndarray, pad: int) -> np.ndarray:
        """Rank padding after the leading iteration axes (numpy would pad in front of them)."""
        lead = x.ndim - (rank - pad)  # type: ignore[operator]
        return x.reshape(x.shape[:lead] + (1,) * pad + x.shape[lead:])

    def brun_pad(env: Any) -> None:
        xa = env.buf[akey][0]
        if pad_a:
            xa = _lead_pad(xa, pad_a)
        if bkey is not None:
            xb = env.buf[bkey][0]
            if pad_b:
                xb = _lead_pad(xb, pad_b)
            r = fn(compute(xa), compute(xb))
        else:
            r = fn(compute(xa), bval)
        env.buf[okey] = (r.astype(ond, copy=False), None)

    if not (pad_a or pad_b):
        return run, brun
    return run, brun_pad if rank is not None else None


def _check_unary(p: dict[str, Any]) -> str | None:
    if p["fn"] not in UNARY and p["fn"] not in ("lrelu", "round"):
        return f"unknown unary function {p['fn']!r}"
    if p["fn"] == "round" and not (isinstance(p["arg"], int) and not isinstance(p["arg"], bool)
                                   and -64 <= p["arg"] <= 64):
        return "round needs an int number of decimals"
    if p["fn"] == "lrelu" and p["arg"] is None:
        return "lrelu needs a slope"
    return None


@kind("unary", {"a": "key", "out": "key", "fn": "str", "arg": "num?", "compute_float": "bool", "odt": "dtype"},
      check=_check_unary, reads=("a",))
def build_unary(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    fn = _unary_fn(p)
    akey, okey, ond, cf = p["a"], p["out"], np_dtype(p["odt"]), p["compute_float"]
    ufo = UNARY_OUT.get(p["fn"])

    def apply(env: Any) -> np.ndarray:
        """fn of the operand, written into the consuming assemble's window (batched runs, `Env.place`), or over
        the operand when it is dead (`scratch`), or over this op's own float32 copy."""
        place = env.place if ufo is not None else None
        out = scratch(env, akey, ond) if ufo is not None and place is None else None
        xa = env.buf[akey][0]
        x = compute(xa)
        if cf and x.dtype.kind in "iub":
            x = x.astype(np.float32)
        if ufo is not None and x.dtype in _FLOATS and x.ndim:
            box = env.box
            if box is not None and x.dtype == ond:
                # only the valid part is ever read (`Env.box`): computed there alone; the padding is left
                # unwritten - the pages of an untouched padding are not even faulted in
                r = np.empty(x.shape, ond)
                ufo(x[box], r[box])
                return r
            if place is not None and x.dtype == ond:
                out = place(x.shape, ond)
            if out is None and x is not xa:
                out = x
            if env.spare and (out is None or out.shape != x.shape or out.dtype != x.dtype):
                out = env.take_spare(x.shape, x.dtype)
            if out is not None and out.shape == x.shape and out.dtype == x.dtype:
                return ufo(x, out)
        return fn(x)

    def run(env: Any) -> None:
        va = (env.buf.get(akey) or env.get(akey))[1]
        r = apply(env)
        if r.dtype != ond:
            r = r.astype(ond)
        env.buf[okey] = (r, va)

    def brun(env: Any) -> None:
        with np.errstate(all="ignore"):
            r = apply(env)
        env.buf[okey] = (r.astype(ond, copy=False), None)

    return run, brun


def _check_where(p: dict[str, Any]) -> str | None:
    if (p["i"] is None) == (p["iv"] is None) or (p["o"] is None) == (p["ov"] is None):
        return "where needs a tensor or a scalar for each of input and other"
    return None


@kind("where", {"c": "key", "i": "key?", "o": "key?", "iv": "const?", "ov": "const?", "out": "key", "odt": "dtype"},
      check=_check_where, reads=("c", "i", "o"))
def build_where(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    ckey, ik, ok_, iv, ov, okey, ond = p["c"], p["i"], p["o"], p["iv"], p["ov"], p["out"], np_dtype(p["odt"])

    def run(env: Any) -> None:
        c, vc = (env.buf.get(ckey) or env.get(ckey))
        ops = [(c, vc)]
        a = iv
        if ik is not None:
            a, va = (env.buf.get(ik) or env.get(ik))
            ops.append((a, va))
        b = ov
        if ok_ is not None:
            b, vb = (env.buf.get(ok_) or env.get(ok_))
            ops.append((b, vb))
        if env.max_alloc is not None:
            shapes = [np.shape(x) for x in (c, a, b)]
            try:
                env.check_alloc(np.broadcast_shapes(*shapes), ond.itemsize)
            except ValueError:
                pass
        r = np.where(c, a, b).astype(ond, copy=False)
        env.buf[okey] = (r, valid_of(r.shape, ops))

    def brun(env: Any) -> None:
        c = env.buf[ckey][0]
        a = env.buf[ik][0] if ik is not None else iv
        b = env.buf[ok_][0] if ok_ is not None else ov
        env.buf[okey] = (np.where(c, a, b).astype(ond, copy=False), None)

    return run, brun


@kind("cast", {"a": "key", "out": "key", "src": "dt", "dst": "dt", "mode": "enum:" + "|".join(m.name for m in CastMode),
               "satmode": "enum:" + "|".join(m.name for m in SaturationMode)}, reads=("a",))
def build_cast(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    akey, okey = p["a"], p["out"]
    src, dst = DataType[p["src"]], DataType[p["dst"]]
    m, s = CastMode[p["mode"]], SaturationMode[p["satmode"]]
    rnd = bool(p.get("round_bf16"))  # a BF16 value held in FP32 (A2/A3, `_promote`) is rounded before the cast

    def run(env: Any) -> None:
        x, v = (env.buf.get(akey) or env.get(akey))
        env.buf[okey] = (cast_array(to_bf16(x) if rnd else x, src, dst, m, s), v)

    def brun(env: Any) -> None:
        x = env.buf[akey][0]
        env.buf[okey] = (cast_array(to_bf16(x) if rnd else x, src, dst, m, s), None)

    return run, brun


# ---- reductions ---------------------------------------------------------------------------------------

# np.sum / np.max / np.min on an ndarray are ``np.add.reduce`` / ``np.maximum.reduce`` / ``np.minimum.reduce`` with
# the same arguments (numpy's ``_wrapreduction``): called directly, without that Python layer (~3 us per call).
# Held as ``Any``: numpy 2.5's type stubs (its wheels for Python 3.12+; 3.11 stops at numpy 2.4) have no overload of
# ``ufunc.reduce`` for an array with an int axis, so ``make test``'s mypy failed there on these very calls
_ADD_REDUCE: Any = np.add.reduce
_MAX_REDUCE: Any = np.maximum.reduce
_MIN_REDUCE: Any = np.minimum.reduce


def _sum(x: np.ndarray, ax: int) -> Any:
    if type(x) is not np.ndarray:
        return np.sum(x, axis=ax, dtype=x.dtype if x.dtype.kind in "iu" else np.float32)
    if x.dtype.kind in "iu":
        return _ADD_REDUCE(x, axis=ax, dtype=x.dtype)
    return _ADD_REDUCE(x, axis=ax, dtype=np.float32)


def _max(x: np.ndarray, ax: int) -> Any:
    return _MAX_REDUCE(x, axis=ax) if type(x) is np.ndarray else np.max(x, axis=ax)


def _min(x: np.ndarray, ax: int) -> Any:
    return _MIN_REDUCE(x, axis=ax) if type(x) is np.ndarray else np.min(x, axis=ax)


REDUCE: dict[str, Callable[[np.ndarray, int], Any]] = {
    "sum": _sum, "amax": _max, "amin": _min,
    "prod": lambda x, ax: np.prod(x, axis=ax), "argmax": lambda x, ax: np.argmax(x, axis=ax),
    "argmin": lambda x, ax: np.argmin(x, axis=ax),
}
_BATCH_REDUCE = frozenset({"sum", "amax", "amin", "prod"})


def _check_axis(p: dict[str, Any]) -> str | None:
    if "fn" in p and p["fn"] not in REDUCE:
        return f"unknown reduction {p['fn']!r}"
    if not 0 <= p["ax"] < p["rank"]:
        return "axis out of range"
    return None


@kind("reduce", {"a": "key", "out": "key", "fn": "str", "ax": "int", "rank": "int", "keepdim": "bool",
                 "odt": "dtype"}, check=_check_axis, reads=("a",))
def build_reduce(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    fn = REDUCE[p["fn"]]
    akey, okey, ond, ax, keepdim, rank = p["a"], p["out"], np_dtype(p["odt"]), p["ax"], p["keepdim"], p["rank"]

    def run(env: Any) -> None:
        x, v = (env.buf.get(akey) or env.get(akey))
        n = v[ax]
        if n < x.shape[ax]:
            x = x[(slice(None),) * ax + (slice(0, n),)]
        r = fn(compute(x), ax)
        r = np.asarray(r)
        if keepdim:
            r = r.reshape(r.shape[:ax] + (1,) + r.shape[ax:])  # np.expand_dims' view, without its axis checks
            vv = tuple(v[:ax]) + (1,) + tuple(v[ax + 1:])
        else:
            vv = tuple(v[:ax]) + tuple(v[ax + 1:])
        if r.ndim == 0:
            r = r.reshape(1)
            vv = (1,)
        env.buf[okey] = (r.astype(ond, copy=False), vv)

    axn = ax - rank

    def brun(env: Any) -> None:
        x = env.buf[akey][0]
        batched = x.ndim > rank
        with np.errstate(all="ignore"):
            r = np.asarray(fn(compute(x), axn))
        if keepdim:
            r = np.expand_dims(r, axn)
        elif rank == 1:
            r = r.reshape(r.shape + (1,)) if batched else r.reshape(1)
        env.buf[okey] = (r.astype(ond, copy=False), None)

    return run, brun if p["fn"] in _BATCH_REDUCE else None


@kind("var", {"a": "key", "out": "key", "axes": "ints", "correction": "num", "keepdim": "bool", "odt": "dtype"},
      reads=("a",))
def build_var(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    akey, okey, ond = p["a"], p["out"], np_dtype(p["odt"])
    axes, correction, keepdim = tuple(p["axes"]), p["correction"], p["keepdim"]

    def run(env: Any) -> None:
        # the reduced axes are cut to their valid part, the others keep the tile's extent and valid part (as
        # `build_reduce`): cut to the valid rows, a tail tile's variance was a smaller array than the traced tile, and
        # every later op on it failed (s32 fidelity: ``t - var(t)`` on a tail block, which the wheel compiles)
        x, v = (env.buf.get(akey) or env.get(akey))
        red = {a % x.ndim for a in axes}
        x = compute(x)[tuple(slice(0, n) if a in red else slice(None) for a, n in enumerate(v))].astype(np.float32)
        with np.errstate(all="ignore"):  # the padding rows: outside the valid part, never read as values
            r = np.asarray(np.var(x, axis=axes, ddof=correction, keepdims=keepdim))
        if keepdim:
            vv = tuple(1 if a in red else n for a, n in enumerate(v))
        else:
            vv = tuple(n for a, n in enumerate(v) if a not in red)
        if r.ndim == 0:
            r, vv = r.reshape(1), (1,)
        env.buf[okey] = (r.astype(ond), vv)

    return run, None


@kind("cumsum", {"a": "key", "out": "key", "ax": "int", "odt": "dtype"}, reads=("a",))
def build_cumsum(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    akey, okey, ond, ax = p["a"], p["out"], np_dtype(p["odt"]), p["ax"]

    def run(env: Any) -> None:
        x, v = (env.buf.get(akey) or env.get(akey))
        c = compute(x)
        r = np.cumsum(c, axis=ax, dtype=np.float32 if c.dtype.kind == "f" else c.dtype)
        env.buf[okey] = (r.astype(ond, copy=False), v)

    return run, None


@kind("cumprod", {"a": "key", "out": "key", "ax": "int", "odt": "dtype"}, reads=("a",))
def build_cumprod(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    akey, okey, ond, ax = p["a"], p["out"], np_dtype(p["odt"]), p["ax"]

    def run(env: Any) -> None:
        x, v = (env.buf.get(akey) or env.get(akey))
        env.buf[okey] = (np.cumprod(compute(x), axis=ax).astype(ond, copy=False), v)

    return run, None


@kind("softmax", {"a": "key", "out": "key", "ax": "int", "rank": "int", "odt": "dtype"}, check=_check_axis,
      reads=("a",))
def build_softmax(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    akey, okey, ond, ax, rank = p["a"], p["out"], np_dtype(p["odt"]), p["ax"], p["rank"]

    def run(env: Any) -> None:
        x, v = (env.buf.get(akey) or env.get(akey))
        c = compute(x).astype(np.float32, copy=True)
        n = v[ax]
        sl = (slice(None),) * ax + (slice(0, n),)
        part = c[sl]
        m = np.max(part, axis=ax, keepdims=True)
        e = np.exp(part - m)
        s = np.sum(e, axis=ax, keepdims=True, dtype=np.float32)
        c[sl] = e / s
        env.buf[okey] = (c.astype(ond, copy=False), v)

    axn = ax - rank

    def brun(env: Any) -> None:
        c = compute(env.buf[akey][0]).astype(np.float32, copy=False)
        m = np.max(c, axis=axn, keepdims=True)
        e = np.exp(c - m)
        r = e / np.sum(e, axis=axn, keepdims=True, dtype=np.float32)
        env.buf[okey] = (r.astype(ond, copy=False), None)

    return run, brun


@kind("rms_norm", {"a": "key", "g": "key?", "out": "key", "eps": "num", "odt": "dtype"}, reads=("a", "g"))
def build_rms_norm(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    akey, gkey, okey, ond, eps = p["a"], p["g"], p["out"], np_dtype(p["odt"]), p["eps"]

    def run(env: Any) -> None:
        x, v = (env.buf.get(akey) or env.get(akey))
        xf = compute(x).astype(np.float32)
        n = v[-1]
        ms = np.mean(np.square(xf[..., :n]), axis=-1, keepdims=True, dtype=np.float32)
        r = xf / np.sqrt(ms + eps)
        if gkey is not None:
            g, _ = (env.buf.get(gkey) or env.get(gkey))
            r = r * compute(g).astype(np.float32).reshape(-1)  # [D] or [D, 1]: the wheel reshapes it to [1, .., D]
        env.buf[okey] = (r.astype(ond), v)

    return run, None


# ---- matmul -------------------------------------------------------------------------------------------

_MEMO_MIN = 1 << 16
"""8-bit float matmul operands from this many elements are remembered converted (`_operand_f32`)"""
_MEMO_ENTRIES = 8


def _same_bytes(copy: np.ndarray, bits: np.ndarray) -> bool:
    """``np.array_equal(copy, bits)`` of two uint8 arrays of one shape (``copy`` contiguous), compared 8 bytes at a
    time where the rows allow it: the memo's check of a 512 x 6144 FP8 block was 6.5 ms a hit (one bool per byte,
    quant_batch_matmul's largest case: 1920 hits, 12 of its 76 emulator seconds on a loaded host)."""
    if bits.ndim and bits.shape[-1] % 8 == 0 and bits.strides[-1] == 1 and copy.flags.c_contiguous:
        try:
            return np.array_equal(copy.view(np.uint64), bits.view(np.uint64))
        except ValueError:  # a layout numpy cannot view as 8-byte words
            pass
    return np.array_equal(copy, bits)


def _operand_f32(env: Any, x: np.ndarray, trans: bool) -> np.ndarray:
    """``compute(x.swapaxes(-1, -2) if trans else x)`` as float32: a matmul operand in its compute precision.

    Why remembered: a loop that does not move an operand converts it again on every iteration - quant_batch_matmul
    multiplies a 4-row block of x1 by the same 512 x 7168 FP8 block of x2 in each of its 16-32 M-iterations, and
    that block's conversion (~13 ms: a transposed read) was most of the operator's time. How: an 8-bit float
    operand's float32 form is kept for the rest of the call with a copy of the bytes it came from; it is handed
    out again only to an operand with the same address, shape, strides and dtype whose bytes are still equal (so
    any write into the block since, through any alias, converts again). Up to `_MEMO_ENTRIES` operands holding
    no more bytes than the call's arguments (one larger operand alone), oldest out first: the memory a call peaks
    at stays within its bound to the arguments' size."""
    v = np.swapaxes(x, -1, -2) if trans else x
    if x.dtype.itemsize != 1 or x.size < _MEMO_MIN or x.dtype.kind != "V":
        return compute(v).astype(np.float32, copy=False)
    memo = env.converted
    key = (x.__array_interface__["data"][0], x.shape, x.strides, x.dtype, trans)
    bits = x.view(np.uint8)
    hit = memo.get(key)
    if hit is not None and _same_bytes(hit[0], bits):
        return hit[1]
    r = compute(v).astype(np.float32, copy=False)
    if hit is not None:
        env.converted_bytes -= hit[0].nbytes + hit[1].nbytes
        del memo[key]
    size, cap = bits.nbytes + r.nbytes, env.arg_bytes()
    while memo and (len(memo) >= _MEMO_ENTRIES or env.converted_bytes + size > cap):
        old = memo.pop(next(iter(memo)))  # the oldest first
        env.converted_bytes -= old[0].nbytes + old[1].nbytes
    memo[key] = (bits.copy(), r)  # alone if it is larger than the limit: the one a conversion holds anyway
    env.converted_bytes += size
    return r


@kind("matmul", {"a": "key", "b": "key", "out": "key", "a_trans": "bool", "b_trans": "bool", "is_int": "bool",
                 "bias": "key?", "relu": "bool", "scale": "num?", "scale_key": "key?", "odt": "dtype"},
      reads=("a", "b", "bias", "scale_key"))
def build_matmul(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    akey, bkey, okey, ond = p["a"], p["b"], p["out"], np_dtype(p["odt"])
    a_trans, b_trans, is_int = p["a_trans"], p["b_trans"], p["is_int"]
    bias_key, relu, scale, scale_key = p["bias"], p["relu"], p["scale"], p["scale_key"]
    quant = not is_int and np.issubdtype(ond, np.integer)  # float accumulator -> INT8 (HEAD fixpipe quantisation)
    rnd = p.get("round_bf16", ())  # BF16 operands held in FP32 (A2/A3, `_promote`) reach the cube as BF16
    ra, rb, rbias = "a" in rnd, "b" in rnd, "bias" in rnd

    def run(env: Any) -> None:
        a, va = (env.buf.get(akey) or env.get(akey))
        b, vb = (env.buf.get(bkey) or env.get(bkey))
        if ra:
            a = to_bf16(a)
        if rb:
            b = to_bf16(b)
        if va != a.shape:
            a = a[tuple(slice(0, n) for n in va)]
        if vb != b.shape:
            b = b[tuple(slice(0, n) for n in vb)]
        a0, b0 = a, b
        if a_trans:
            a = np.swapaxes(a, -1, -2)
        if b_trans:
            b = np.swapaxes(b, -1, -2)
        if a.shape[-1] != b.shape[-2]:
            raise env.error("F00003", f"K-dimension valid shape mismatch: input K={a.shape[-1]}, mat2 "
                            f"K={b.shape[-2]}", kind="RuntimeError")
        if env.max_alloc is not None:
            try:
                env.check_alloc(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]), 4)
            except ValueError:
                pass
        if is_int:
            r = np.matmul(a.astype(np.int32), b.astype(np.int32))
        else:
            r = np.matmul(_operand_f32(env, a0, a_trans), _operand_f32(env, b0, b_trans))
        if bias_key is not None:
            bias, _ = (env.buf.get(bias_key) or env.get(bias_key))
            if rbias:
                bias = to_bf16(bias)
            r = r + compute(bias).astype(r.dtype)
        if relu:
            r = np.maximum(r, 0)
        if scale_key is not None:
            s, _ = (env.buf.get(scale_key) or env.get(scale_key))
            r = r * s.astype(np.float64)
        elif scale is not None:
            r = r * np.float32(scale)
        env.flops += 2 * int(math.prod(r.shape)) * int(a.shape[-1])
        lead = () if a.ndim == 2 and b.ndim == 2 else \
            tuple(int(x) for x in np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        full = lead + (int(env.buf[akey][0].shape[-2 if not a_trans else -1]),
                       int(env.buf[bkey][0].shape[-1 if not b_trans else -2]))
        if quant:  # round to nearest even, saturate
            info = np.iinfo(ond)
            r = np.clip(np.rint(r), info.min, info.max)
        r = r.astype(ond, copy=False)  # r is this op's own array: no second copy of a float32 result
        if r.shape != full:
            res = env.poison(full, ond)
            res[tuple(slice(0, n) for n in r.shape)] = r
            env.buf[okey] = (res, r.shape)
        else:
            env.buf[okey] = (r, full)

    def brun(env: Any) -> None:
        a = env.buf[akey][0]
        b = env.buf[bkey][0]
        if ra:
            a = to_bf16(a)
        if rb:
            b = to_bf16(b)
        a0, b0 = a, b
        if a_trans:
            a = np.swapaxes(a, -1, -2)
        if b_trans:
            b = np.swapaxes(b, -1, -2)
        if is_int:
            r = np.matmul(a.astype(np.int32), b.astype(np.int32))
        else:
            r = np.matmul(_operand_f32(env, a0, a_trans), _operand_f32(env, b0, b_trans))
        env.flops += 2 * int(math.prod(r.shape)) * int(a.shape[-1])
        env.buf[okey] = (r.astype(ond, copy=False), None)

    plain = bias_key is None and scale is None and scale_key is None and not relu and not quant
    return run, brun if plain else None


# ---- creation -----------------------------------------------------------------------------------------

@kind("fill", {"out": "key", "shape": "exprs", "value": "num", "value_expr": "expr?", "odt": "dtype",
               "vs": "exprs?"})
def build_fill(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    okey, ndt = p["out"], np_dtype(p["odt"])
    shp = cx.exprs(p["shape"])
    value, vexpr = p["value"], p["value_expr"]
    vfn = cx.expr(vexpr) if vexpr is not None else None
    vs = cx.exprs(p["vs"]) if p["vs"] is not None else None
    fdt = np.float32 if is_float_np(ndt) else ndt

    def run(env: Any) -> None:
        full = tuple(f(env) for f in shp)
        if env.max_alloc is not None:
            env.check_alloc(full, max(4, ndt.itemsize))
        v = vfn(env) if vfn is not None else value
        arr = np.full(full, v, dtype=fdt).astype(ndt, copy=False)
        valid = tuple(f(env) for f in vs) if vs is not None else full
        env.buf[okey] = (arr, valid)

    return run, None


@kind("arange", {"out": "key", "n": "int", "start": "num", "step": "num", "odt": "dtype"})
def build_arange(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    okey, n, start, step, ndt = p["out"], p["n"], p["start"], p["step"], np_dtype(p["odt"])

    def run(env: Any) -> None:
        if env.max_alloc is not None:
            env.check_alloc((n,), 8)
        env.put(okey, (start + step * np.arange(n, dtype=np.float64)).astype(ndt))

    return run, None
