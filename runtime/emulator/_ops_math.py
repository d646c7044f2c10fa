"""Elementwise, unary, comparison, selection, cast, reduction and composite ops.

Every op: trace-time checks (dtypes, single-axis broadcast FC0000, vector tile F21004/FC1001), output
shape inference, then a run closure computing in float32 for 16-bit floats and rounding once to the
output dtype. Valid shapes propagate: elementwise results keep the common valid box, reductions use only
the valid extent of the reduced axis.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.emulator._enums import FLOAT_TYPES, INT_TYPES, CastMode, DataType, SaturationMode, numpy_dtype
from runtime.emulator._numerics import cast_array, compute
from runtime.emulator._ops_core import check_tile, new_out, reader
from runtime.emulator._ops_core import reshape as _reshape
from runtime.emulator._registry import op
from runtime.emulator._scalar import Element
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import Tracer, require_tracer

__all__ = ["binary", "unary"]

_BOOL = DataType.DT_BOOL


def _same_dim(a: Any, b: Any) -> bool | None:
    if isinstance(a, SymbolicScalar) or isinstance(b, SymbolicScalar):
        av = a._value if isinstance(a, SymbolicScalar) else a
        bv = b._value if isinstance(b, SymbolicScalar) else b
        if av is not None and bv is not None:
            return av == bv
        return a is b or repr(a) == repr(b) or None
    return a == b


def broadcast_shape(tr: Tracer, opname: str, shapes: list[list]) -> list:
    """Output shape of a single-axis broadcast (0.2.0 rule; HEAD compat only warns on >1 axis)."""
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise tr.error("FC0000", f"shape not support binary operation (ranks {[len(s) for s in shapes]} differ; "
                       "unsqueeze/reshape first)", op=opname)
    out = list(shapes[0])
    for s in shapes[1:]:
        expanded = 0
        for d in range(rank):
            a, b = out[d], s[d]
            same = _same_dim(a, b)
            if same:
                continue
            if isinstance(b, int) and b == 1:
                expanded += 1
            elif isinstance(a, int) and a == 1:
                out[d] = b
                expanded += 1
            elif same is None:
                continue  # symbolic dims: checked at run time
            else:
                raise tr.error("FC0000", f"shape not support binary operation (shapes {shapes})", op=opname)
        if expanded > 1:
            msg = (f"Only allow to expand one axis! Actual expanded axes count: {expanded}. Operand shape: "
                   f"({s}) Result shape: ({out})")
            if tr.options.compat == "0.2.0":
                raise tr.error("FC0000", msg, op=opname)
            tr.warn("EMU_BROADCAST", msg, op=opname)
    return out


def _valid_of(shape_out: tuple, operands: list[tuple[np.ndarray, tuple]]) -> tuple:
    v = list(shape_out)
    for arr, valid in operands:
        for d, n in enumerate(arr.shape):
            if n != 1 or shape_out[d] == 1:
                if valid[d] < v[d]:
                    v[d] = valid[d]
    return tuple(v)


def _scalar_operand(tr: Tracer, opname: str, x: Any, dt: DataType) -> Any:
    """Python scalar / Element -> value in the tensor's dtype (0.2.0 converts to an Element of that dtype)."""
    if isinstance(x, float) and dt != DataType.DT_FP32 and opname in ("maximum", "minimum", "clip"):
        tr.warn("EMU_SCALAR_DTYPE", f"{opname}: a float scalar becomes an FP32 Element, which the docs reject with "
                f"a {dt.name} tensor; pass pypto.Element(pypto.{dt.name}, v)", op=opname)
    if isinstance(x, Element):
        if x.dtype != dt and opname in ("where", "maximum", "minimum", "clip"):
            raise tr.error("FC0001", f"{opname}: Element dtype {x.dtype.name} != tensor dtype {dt.name}", op=opname)
        x = x.value
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, SymbolicScalar):
        raise tr.pyerror("TypeError", f"{opname}: a SymbolicScalar is not a tensor operand (use pypto.full)",
                         op=opname)
    if not isinstance(x, int | float):
        raise tr.pyerror("TypeError", f"{opname}: unsupported operand type {type(x).__name__}", op=opname)
    if dt in INT_TYPES and isinstance(x, float):
        if float(x).is_integer():
            return int(x)
        raise tr.error("FC0001", f"{opname}: float scalar {x} with an integer tensor ({dt.name}) is not "
                       "supported (cast the tensor first)", op=opname)
    if isinstance(x, float) and not math.isfinite(x) and opname in ("add", "sub", "mul", "div"):
        tr.warn("EMU_SCALAR_INF", f"{opname}: nan/inf scalar operands are not supported on the device", op=opname)
    nd = numpy_dtype(dt)
    return np.array(x, dtype=np.float64 if dt == DataType.DT_DOUBLE else nd).astype(
        np.float32 if dt in FLOAT_TYPES and dt != DataType.DT_DOUBLE else nd)


def binary(opname: str, a: Any, b: Any, fn: Callable, *, out_dtype: DataType | None = None,
           dtypes: frozenset | None = None, warn_dtypes: bool = True) -> Tensor:
    """Record an elementwise binary op (tensor op tensor|scalar)."""
    tr = require_tracer(opname)
    A = reader(tr, a, opname)
    dt = A.dtype
    if isinstance(b, Tensor):
        B = reader(tr, b, opname)
        if B.dtype != dt:
            raise tr.error("FC0001", f"{opname}: operand dtypes differ ({dt.name} vs {B.dtype.name}); no implicit "
                           "promotion on the device - insert pypto.cast", op=opname)
        # a lower-rank operand broadcasts numpy-style (leading size-1 axes): the real 0.2.0 accepts [2, 8] + [8]
        # (fidelity probe f04); the single-expanded-axis rule still applies to the padded shapes
        pad_a, pad_b = max(0, B.dim - A.dim), max(0, A.dim - B.dim)
        shape = broadcast_shape(tr, opname, [[1] * pad_a + list(A.shape), [1] * pad_b + list(B.shape)])
        bkey = B.key
        bval = None
    else:
        bval = _scalar_operand(tr, opname, b, dt)
        shape = A.shape
        bkey = None
        pad_a = pad_b = 0
    if dtypes is not None and dt not in dtypes and warn_dtypes:
        tr.warn("EMU_DTYPE", f"{opname} on {dt.name} is outside the documented dtypes "
                f"({', '.join(sorted(d.name for d in dtypes))})", op=opname)
    odt = out_dtype if out_dtype is not None else dt
    te = check_tile(tr, opname, len(shape), dtype=odt)
    out = new_out(tr, shape, odt, opname)
    akey, okey, ond = A.key, out.key, numpy_dtype(odt)
    shape_t = shape

    def run(env: Any) -> None:
        xa, va = env.get(akey)
        if pad_a:
            xa, va = xa.reshape((1,) * pad_a + xa.shape), (1,) * pad_a + tuple(va)
        if bkey is not None:
            xb, vb = env.get(bkey)
            if pad_b:
                xb, vb = xb.reshape((1,) * pad_b + xb.shape), (1,) * pad_b + tuple(vb)
            try:
                r = fn(compute(xa), compute(xb))
            except ValueError as exc:
                raise env.error("FC0000", f"shape not support binary operation ({list(xa.shape)} vs "
                                f"{list(xb.shape)}): {exc}") from None
            valid = _valid_of(r.shape, [(xa, va), (xb, vb)])
        else:
            r = fn(compute(xa), bval)
            valid = va
        if r.dtype != ond:
            r = r.astype(ond)
        env.buf[okey] = (r, valid)

    del shape_t

    def brun(env: Any, b: Any) -> None:
        xa = env.buf[akey][0]
        r = fn(compute(xa), compute(env.buf[bkey][0]) if bkey is not None else bval)
        env.buf[okey] = (r.astype(ond, copy=False), None)

    tr.emit(opname, run, out, tile_elems=te, brun=None if pad_a or pad_b else brun,
            ins=(akey,) if bkey is None else (akey, bkey))
    return out


def unary(opname: str, a: Any, fn: Callable, *, dtypes: frozenset | None = None,
          out_dtype: DataType | None = None, compute_float: bool = False) -> Tensor:
    """Record an elementwise unary op."""
    tr = require_tracer(opname)
    A = reader(tr, a, opname)
    dt = A.dtype
    if dtypes is not None and dt not in dtypes:
        tr.warn("EMU_DTYPE", f"{opname} on {dt.name} is outside the documented dtypes "
                f"({', '.join(sorted(d.name for d in dtypes))})", op=opname)
    odt = out_dtype if out_dtype is not None else dt
    te = check_tile(tr, opname, A.dim, dtype=odt)
    if opname == "sigmoid" and A.valid_shape is not None:
        tr.warn("EMU_SIGMOID_VALID", "sigmoid on a tile with a smaller valid_shape failed in the 0.2.0 oracle (its "
                "internal constant is built at full tile shape); use x / (1 + exp(-x))", op=opname)
    out = new_out(tr, A.shape, odt, opname, valid=A.valid_shape)
    akey, okey, ond = A.key, out.key, numpy_dtype(odt)

    def run(env: Any) -> None:
        xa, va = env.get(akey)
        x = compute(xa)
        if compute_float and x.dtype.kind in "iub":
            x = x.astype(np.float32)
        r = fn(x)
        if r.dtype != ond:
            r = r.astype(ond)
        env.buf[okey] = (r, va)

    def brun(env: Any, b: Any) -> None:
        x = compute(env.buf[akey][0])
        if compute_float and x.dtype.kind in "iub":
            x = x.astype(np.float32)
        with np.errstate(all="ignore"):
            r = fn(x)
        env.buf[okey] = (r.astype(ond, copy=False), None)

    tr.emit(opname, run, out, tile_elems=te, brun=brun, ins=(akey,))
    return out


F = frozenset({DataType.DT_FP16, DataType.DT_FP32, DataType.DT_BF16})
FI = F | {DataType.DT_INT32, DataType.DT_INT16}
INTS = frozenset(INT_TYPES)


# ---- binary arithmetic --------------------------------------------------------------------------------

def _alpha(fn: Callable, alpha: Any) -> Callable:
    if alpha == 1:
        return fn
    return lambda x, y: fn(x, y * alpha)


@op("add")
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input + alpha*other."""
    return binary("add", input, other, _alpha(np.add, alpha), dtypes=FI)


@op("sub")
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input - alpha*other."""
    return binary("sub", input, other, _alpha(np.subtract, alpha), dtypes=FI)


@op("mul")
def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product."""
    return binary("mul", input, other, np.multiply, dtypes=FI)


def _div(x: np.ndarray, y: Any) -> np.ndarray:
    if x.dtype.kind in "iu":
        return np.divide(x.astype(np.float32), np.asarray(y).astype(np.float32))
    return np.divide(x, y)


@op("div")
def div(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """Division; integer inputs give an FP32 result (the oracle rejects INT32 div)."""
    dt = input.dtype if isinstance(input, Tensor) else None
    odt = DataType.DT_FP32 if dt in INT_TYPES else None
    return binary("div", input, other, _div, out_dtype=odt, dtypes=FI)


@op("floor_div")
def floor_div(input: Any, other: Any) -> Tensor:
    """floor(input / other)."""
    return binary("floor_div", input, other, lambda x, y: np.floor_divide(x, y), dtypes=FI)


@op("remainder")
def remainder(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """Python-style modulo (sign of the divisor)."""
    return binary("remainder", input, other, np.mod, dtypes=FI)


@op("fmod")
def fmod(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """C-style remainder (sign of the dividend)."""
    return binary("fmod", input, other, np.fmod, dtypes=F)


@op("pow")
def pow(input: Any, other: Any, precision_type: Any = None) -> Tensor:  # noqa: A001
    """input ** other (float)."""
    return binary("pow", input, other, np.power, dtypes=F)


@op("maximum")
def maximum(input: Any, other: Any) -> Tensor:
    """Elementwise max (NaN propagates, like the vector unit's max)."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        input, other = other, input
    return binary("maximum", input, other, np.maximum, dtypes=FI)


@op("minimum")
def minimum(input: Any, other: Any) -> Tensor:
    """Elementwise min."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        input, other = other, input
    return binary("minimum", input, other, np.minimum, dtypes=FI)


@op("hypot")
def hypot(input: Any, other: Any) -> Tensor:
    """sqrt(x^2 + y^2)."""
    return binary("hypot", input, other, np.hypot, dtypes=F)


@op("copysign")
def copysign(input: Any, other: Any) -> Tensor:
    """|x| with the sign of y."""
    return binary("copysign", input, other, np.copysign, dtypes=F)


@op("atan2")
def atan2(input: Any, other: Any) -> Tensor:
    """atan2(y=input, x=other)."""
    return binary("atan2", input, other, np.arctan2, dtypes=F)


@op("gcd")
def gcd(input: Any, other: Any) -> Tensor:
    """Greatest common divisor (ints)."""
    return binary("gcd", input, other, np.gcd, dtypes=INTS)


@op("bitwise_and")
def bitwise_and(input: Any, other: Any) -> Tensor:
    """Bitwise and (ints)."""
    return binary("bitwise_and", input, other, np.bitwise_and, dtypes=INTS)


@op("bitwise_or")
def bitwise_or(input: Any, other: Any) -> Tensor:
    """Bitwise or (ints)."""
    return binary("bitwise_or", input, other, np.bitwise_or, dtypes=INTS)


@op("bitwise_xor")
def bitwise_xor(input: Any, other: Any) -> Tensor:
    """Bitwise xor (ints)."""
    return binary("bitwise_xor", input, other, np.bitwise_xor, dtypes=INTS)


@op("bitwise_left_shift")
def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """Left shift (ints)."""
    return binary("bitwise_left_shift", input, other, np.left_shift, dtypes=INTS)


@op("bitwise_right_shift")
def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """Arithmetic right shift for signed ints (numpy >> semantics)."""
    return binary("bitwise_right_shift", input, other, np.right_shift, dtypes=INTS)


@op("bitwise_not")
def bitwise_not(input: Any) -> Tensor:
    """Bitwise not (ints)."""
    return unary("bitwise_not", input, np.invert, dtypes=INTS)


@op("logical_and")
def logical_and(input: Any, other: Any) -> Tensor:
    """Logical and -> BOOL."""
    return binary("logical_and", input, other, np.logical_and, out_dtype=_BOOL)


@op("logical_not")
def logical_not(input: Any) -> Tensor:
    """Logical not -> BOOL."""
    return unary("logical_not", input, np.logical_not, out_dtype=_BOOL)


@op("clip")
def clip(input: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clamp to [min, max] (either may be None)."""
    t = input
    if min is not None:
        t = binary("clip", t, min, np.maximum, dtypes=FI)
    if max is not None:
        t = binary("clip", t, max, np.minimum, dtypes=FI)
    if min is None and max is None:
        t = unary("clip", t, lambda x: x)
    return t


@op("prelu")
def prelu(input: Any, weight: Any) -> Tensor:
    """x if x > 0 else weight*x (weight 1-D over dim 1)."""
    tr = require_tracer("prelu")
    A = reader(tr, input, "prelu")
    W = reader(tr, weight, "prelu")
    shape = [1] * A.dim
    if A.dim > 1:
        shape[1] = W.shape[0]
    else:
        shape[0] = W.shape[0]
    w = _reshape(W, shape, inplace=True)
    return binary("prelu", A, w, lambda x, y: np.where(x > 0, x, x * y), dtypes=F)


@op("lrelu")
def lrelu(input: Any, negative_slope: float = 0.01) -> Tensor:
    """Leaky ReLU (negative_slope >= 0)."""
    s = np.float32(negative_slope)
    return unary("lrelu", input, lambda x: np.where(x > 0, x, x * s), dtypes=F)


# ---- unary math ---------------------------------------------------------------------------------------

def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


def _round(decimals: int) -> Callable:
    if decimals == 0:
        return np.rint
    return lambda x: np.round(x, decimals)


_erf_v = np.vectorize(math.erf, otypes=[np.float64])
_erfc_v = np.vectorize(math.erfc, otypes=[np.float64])

_UNARY: dict[str, tuple[Callable, frozenset | None, bool]] = {
    "abs": (np.abs, F | {DataType.DT_INT32, DataType.DT_INT16}, False),
    "neg": (np.negative, FI, False),
    "exp": (np.exp, F, True),
    "exp2": (np.exp2, F, True),
    "expm1": (np.expm1, FI, True),
    "log": (np.log, F, True),
    "log1p": (np.log1p, F, True),
    "log2": (np.log2, F, True),
    "log10": (np.log10, F, True),
    "sqrt": (np.sqrt, F, True),
    "rsqrt": (_rsqrt, F, True),
    "reciprocal": (np.reciprocal, F, True),
    "sign": (np.sign, FI, False),
    "relu": (lambda x: np.maximum(x, 0), FI, False),
    "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), frozenset({DataType.DT_FP32}), True),
    "ceil": (np.ceil, FI, False),
    "floor": (np.floor, FI, False),
    "trunc": (np.trunc, FI, False),
    "cbrt": (np.cbrt, F, True),
    "sin": (np.sin, F, True),
    "cos": (np.cos, F, True),
    "tan": (np.tan, F, True),
    "tanh": (np.tanh, F, True),
    "sinh": (np.sinh, F, True),
    "cosh": (np.cosh, F, True),
    "asin": (np.arcsin, F, True),
    "acos": (np.arccos, F, True),
    "atan": (np.arctan, F, True),
    "asinh": (np.arcsinh, F, True),
    "acosh": (np.arccosh, F, True),
    "atanh": (np.arctanh, F, True),
    "erf": (lambda x: _erf_v(x).astype(np.float32), F, True),
    "erfc": (lambda x: _erfc_v(x).astype(np.float32), F, True),
}


def _make_unary(name: str, fn: Callable, dts: frozenset | None, cf: bool) -> Callable:
    def f(input: Any, precision_type: Any = None) -> Tensor:
        return unary(name, input, fn, dtypes=dts, compute_float=cf)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name}."
    return f


for _n, (_fn, _dts, _cf) in _UNARY.items():
    globals()[_n] = op(_n)(_make_unary(_n, _fn, _dts, _cf))


@op("round")
def round(input: Any, decimals: int = 0) -> Tensor:  # noqa: A001
    """Round half to even (torch semantics)."""
    return unary("round", input, _round(decimals), dtypes=FI)


@op("signbit")
def signbit(input: Any) -> Tensor:
    """Sign bit -> BOOL."""
    return unary("signbit", input, np.signbit, out_dtype=_BOOL)


@op("isfinite")
def isfinite(input: Any) -> Tensor:
    """Finite test -> BOOL."""
    return unary("isfinite", input, np.isfinite, out_dtype=_BOOL)


@op("isnan")
def isnan(input: Any) -> Tensor:
    """NaN test -> BOOL."""
    return unary("isnan", input, np.isnan, out_dtype=_BOOL)


# ---- comparisons / selection -------------------------------------------------------------------------

_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


def _make_cmp(name: str, fn: Callable) -> Callable:
    def f(input: Any, other: Any) -> Tensor:
        return binary(name, input, other, fn, out_dtype=_BOOL,
                      dtypes=frozenset({DataType.DT_FP16, DataType.DT_FP32}))

    f.__name__ = name
    f.__doc__ = f"Elementwise comparison {name} -> BOOL."
    return f


for _n, _fn in _CMP.items():
    globals()[_n] = op(_n)(_make_cmp(_n, _fn))


@op("greater")
def greater(input: Any, other: Any) -> Tensor:
    """Alias of gt."""
    return binary("greater", input, other, np.greater, out_dtype=_BOOL)


@op("where")
def where(condition: Any, input: Any, other: Any) -> Tensor:
    """condition ? input : other (BOOL condition; single-axis broadcast per pair)."""
    tr = require_tracer("where")
    C = reader(tr, condition, "where")
    if C.dtype != _BOOL:
        raise tr.error("FC0001", f"where: condition must be DT_BOOL, got {C.dtype.name}", op="where")
    tens = [x for x in (input, other) if isinstance(x, Tensor)]
    if not tens:
        raise tr.pyerror("TypeError", "where: input or other must be a Tensor", op="where")
    dt = tens[0].dtype
    for t in tens:
        reader(tr, t, "where")
        if t.dtype != dt:
            raise tr.error("FC0001", "where: input and other dtypes differ", op="where")
    shapes = [C.shape] + [t.shape for t in tens]
    shape = broadcast_shape(tr, "where", shapes)

    def operand(x: Any) -> tuple[int | None, Any]:
        if isinstance(x, Tensor):
            return x.key, None
        if isinstance(x, float) and not isinstance(x, Element) and dt != DataType.DT_FP32:
            raise tr.error("FC0001", f"where: a float scalar is an FP32 Element; with a {dt.name} tensor pass "
                           f"pypto.Element(pypto.{dt.name}, v)", op="where")
        return None, _scalar_operand(tr, "where", x, dt)

    (ik, iv), (ok_, ov) = operand(input), operand(other)
    te = check_tile(tr, "where", len(shape), dtype=dt)
    out = new_out(tr, shape, dt, "where")
    ckey, okey, ond = C.key, out.key, numpy_dtype(dt)

    def run(env: Any) -> None:
        c, vc = env.get(ckey)
        ops = [(c, vc)]
        a = iv
        if ik is not None:
            a, va = env.get(ik)
            ops.append((a, va))
        b = ov
        if ok_ is not None:
            b, vb = env.get(ok_)
            ops.append((b, vb))
        r = np.where(c, a, b).astype(ond, copy=False)
        env.buf[okey] = (r, _valid_of(r.shape, ops))

    def brun(env: Any, bctx: Any) -> None:
        c = env.buf[ckey][0]
        a = env.buf[ik][0] if ik is not None else iv
        b = env.buf[ok_][0] if ok_ is not None else ov
        env.buf[okey] = (np.where(c, a, b).astype(ond, copy=False), None)

    tr.emit("where", run, out, tile_elems=te, brun=brun, ins=tuple(k for k in (ckey, ik, ok_) if k is not None))
    return out


# ---- cast ---------------------------------------------------------------------------------------------

_DIRECT = {
    DataType.DT_FP32: {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_INT64, DataType.DT_INT32,
                       DataType.DT_INT16, DataType.DT_FP32},
    DataType.DT_FP16: {DataType.DT_FP32, DataType.DT_INT32, DataType.DT_INT16, DataType.DT_INT8,
                       DataType.DT_UINT8, DataType.DT_INT4},
    DataType.DT_BF16: {DataType.DT_FP32, DataType.DT_INT32},
    DataType.DT_INT32: {DataType.DT_FP32, DataType.DT_INT64, DataType.DT_INT16, DataType.DT_FP16},
    DataType.DT_INT16: {DataType.DT_FP32, DataType.DT_FP16},
    DataType.DT_INT64: {DataType.DT_FP32, DataType.DT_INT32},
    DataType.DT_UINT8: {DataType.DT_FP16},
    DataType.DT_INT8: {DataType.DT_FP16},
}


@op("cast")
def cast(input: Any, dtype: Any, mode: Any = CastMode.CAST_NONE, satmode: Any = SaturationMode.OFF) -> Tensor:
    """Convert dtype with CastMode rounding (float->int default TRUNC, else RINT) and saturation."""
    tr = require_tracer("cast")
    A = reader(tr, input, "cast")
    try:
        dst = DataType(dtype)
    except ValueError:
        raise tr.pyerror("TypeError", f"cast: dtype must be a DataType, got {dtype!r}", op="cast") from None
    src = A.dtype
    if src == _BOOL or dst == _BOOL and src != _BOOL:
        raise tr.error("FC0001", "cast: BOOL has no cast on the device (use ne / where)", op="cast")
    if src != dst and dst not in _DIRECT.get(src, set()):
        tr.warn("EMU_CAST_ROUTE", f"cast {src.name} -> {dst.name} is not a direct conversion on A2/A3 (route via "
                "FP32/FP16, e.g. BF16 -> FP32 -> FP16)", op="cast")
    m, s = CastMode(mode), SaturationMode(satmode)
    te = check_tile(tr, "cast", A.dim, dtype=dst)
    out = new_out(tr, A.shape, dst, "cast", valid=A.valid_shape)
    akey, okey = A.key, out.key

    def run(env: Any) -> None:
        x, v = env.get(akey)
        env.buf[okey] = (cast_array(x, src, dst, m, s), v)

    def brun(env: Any, b: Any) -> None:
        env.buf[okey] = (cast_array(env.buf[akey][0], src, dst, m, s), None)

    tr.emit("cast", run, out, tile_elems=te, brun=brun, ins=(akey,),
            attrs={"dtype": dst.name, "mode": m.name, "satmode": s.name})
    return out
