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

from runtime.emulator import _wheel_dtypes
from runtime.emulator._enums import (
    FLOAT_TYPES,
    INT_TYPES,
    CastMode,
    DataType,
    SaturationMode,
    numpy_dtype,
    numpy_dtype_name,
)
from runtime.emulator._ops_core import (
    carry_whole_dynamic,
    check_tile,
    check_whole_dynamic,
    new_out,
    one_axis_expand,
    reader,
)
from runtime.emulator._ops_core import reshape as _reshape
from runtime.emulator._ops_create import full as _full
from runtime.emulator._registry import op
from runtime.emulator._scalar import Element
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import Tracer, require_tracer
from runtime.emulator.device._divergence import scalar_inf_message

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
        one_axis_expand(tr, opname, expanded, s, out)
    return out


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
            x = int(x)  # and on to its numpy constant (fidelity s31b: a plain int reached the lowering and failed)
        else:
            raise tr.error("FC0001", f"{opname}: float scalar {x} with an integer tensor ({dt.name}) is not "
                           "supported (cast the tensor first)", op=opname)
    if isinstance(x, float) and not math.isfinite(x) and opname in ("add", "sub", "mul", "div"):
        tr.warn("EMU_SCALAR_INF", scalar_inf_message(opname), op=opname)
    nd = numpy_dtype(dt)
    src = np.float64 if dt == DataType.DT_DOUBLE else nd
    dst = np.float32 if dt in FLOAT_TYPES and dt != DataType.DT_DOUBLE else nd
    v = np.array(x, dtype=src)
    # an FP32 / integer scalar is already in its result dtype (astype would only copy it: ~1 us per traced op)
    return v if v.dtype == dst else v.astype(dst)


def binary(opname: str, a: Any, b: Any, fn: str, *, out_dtype: DataType | None = None,
           dtypes: frozenset | None = None, warn_dtypes: bool = True, alpha: Any = None) -> Tensor:
    """Record an elementwise binary op (tensor op tensor|scalar); ``fn`` names the device function
    (`device._k_math.BINARY`), ``alpha`` scales the second operand."""
    tr = require_tracer(opname)
    A = reader(tr, a, opname)
    cmp = out_dtype is _BOOL  # comparisons of whole dynamic arguments compile in 0.2.0 (fidelity audit 8)
    if not cmp:
        check_whole_dynamic(tr, A, opname, "elementwise")
    dt = A.dtype
    if isinstance(b, Tensor):
        B = reader(tr, b, opname)
        if not cmp:
            check_whole_dynamic(tr, B, opname, "elementwise")
        if B.dtype != dt:
            # the wheel's CheckBinaryInputTensors: "Errcode: FC0000! The dtype of input tensors are not same."
            raise tr.error("FC0000", f"{opname}: The dtype of input tensors are not same. ({dt.name} vs "
                           f"{B.dtype.name}: operand dtypes differ; no implicit promotion on the device - insert "
                           "pypto.cast)", op=opname)
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
    _wheel_dtypes.check(tr, opname, dt, dtypes, scalar=bkey is None)
    if dtypes is not None and dt not in dtypes and warn_dtypes:
        tr.warn("EMU_DTYPE", f"{opname} on {dt.name} is outside the documented dtypes "
                f"({', '.join(sorted(d.name for d in dtypes))})", op=opname)
    odt = out_dtype if out_dtype is not None else dt
    te = check_tile(tr, opname, len(shape), dtype=odt)
    out = new_out(tr, shape, odt, opname)
    tr.emit(opname, "binary", {"a": A.key, "b": bkey, "out": out.key, "fn": fn, "alpha": alpha, "scalar": bval,
                               "pad_a": pad_a, "pad_b": pad_b, "odt": numpy_dtype_name(odt)},
            out, tile_elems=te, ins=(A.key,) if bkey is None else (A.key, bkey), outs=(out,))
    return out


def unary(opname: str, a: Any, fn: str, *, dtypes: frozenset | None = None,
          out_dtype: DataType | None = None, compute_float: bool = False, arg: Any = None) -> Tensor:
    """Record an elementwise unary op (``fn`` names the device function, `device._k_math.UNARY`)."""
    tr = require_tracer(opname)
    A = reader(tr, a, opname)
    # logical_not of a whole dynamic argument compiles in 0.2.0 (fidelity audit 8), and round as a cast does: written
    # out it compiles, its result carries the mark (fidelity audit 9)
    if out_dtype is not _BOOL and opname != "round":
        check_whole_dynamic(tr, A, opname, "elementwise")
    dt = A.dtype
    _wheel_dtypes.check(tr, opname, dt, dtypes)
    if dtypes is not None and dt not in dtypes:
        tr.warn("EMU_DTYPE", f"{opname} on {dt.name} is outside the documented dtypes "
                f"({', '.join(sorted(d.name for d in dtypes))})", op=opname)
    odt = out_dtype if out_dtype is not None else dt
    te = check_tile(tr, opname, A.dim, dtype=odt)
    if opname == "sigmoid" and A.valid_shape is not None:
        tr.warn("EMU_SIGMOID_VALID", "sigmoid on a tile with a smaller valid_shape failed in the 0.2.0 oracle (its "
                "internal constant is built at full tile shape); use x / (1 + exp(-x))", op=opname)
    out = new_out(tr, A.shape, odt, opname, valid=A.valid_shape)
    if opname == "round":
        carry_whole_dynamic(A, out)
    tr.emit(opname, "unary", {"a": A.key, "out": out.key, "fn": fn, "arg": arg, "compute_float": compute_float,
                              "odt": numpy_dtype_name(odt)}, out, tile_elems=te, ins=(A.key,), outs=(out,))
    return out


F = frozenset({DataType.DT_FP16, DataType.DT_FP32, DataType.DT_BF16})
FI = F | {DataType.DT_INT32, DataType.DT_INT16}
INTS = frozenset(INT_TYPES)
SHIFTS = frozenset({DataType.DT_INT16, DataType.DT_UINT16})
"""the documented dtypes of the bit shifts (spec: INT16/UINT16; the 0.2.0 frontend refuses INT8, INT32, UINT8)"""


# ---- binary arithmetic --------------------------------------------------------------------------------

def _no_element(opname: str, other: Any) -> None:
    """add/sub/mul/div wrap a scalar ``other`` in an Element of the tensor's dtype themselves: an Element given to them
    fails in the 0.2.0 wheel's constructor (spec §2.5; probed)."""
    if isinstance(other, Element):
        raise require_tracer(opname).pyerror(
            "TypeError", f"__init__(): incompatible constructor arguments: {opname} takes a Tensor or a Python number, "
            f"not an Element (pass {other.value!r})", op=opname)


@op("add")
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input + alpha*other."""
    _no_element("add", other)
    return binary("add", input, other, "add", dtypes=FI, alpha=None if alpha == 1 else alpha)


@op("sub")
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input - alpha*other."""
    _no_element("sub", other)
    return binary("sub", input, other, "sub", dtypes=FI, alpha=None if alpha == 1 else alpha)


@op("mul")
def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product."""
    _no_element("mul", other)
    return binary("mul", input, other, "mul", dtypes=FI)


@op("div")
def div(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """Division; integer inputs give an FP32 result (the oracle rejects INT32 div)."""
    _no_element("div", other)
    dt = input.dtype if isinstance(input, Tensor) else None
    odt = DataType.DT_FP32 if dt in INT_TYPES else None
    return binary("div", input, other, "div", out_dtype=odt, dtypes=FI)


@op("floor_div")
def floor_div(input: Any, other: Any) -> Tensor:
    """floor(input / other)."""
    return binary("floor_div", input, other, "floor_div", dtypes=FI)


@op("remainder")
def remainder(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """Python-style modulo (sign of the divisor); ``input`` may be a number (the wheel's signature, opcode REMRS)."""
    if isinstance(input, int | float) and not isinstance(input, bool) and isinstance(other, Tensor):
        # a number first: as a tile of it (fidelity s31: refused here, compiled by the wheel)
        B = reader(require_tracer("remainder"), other, "remainder")
        vs = B.valid_shape
        input = _full(list(B.shape), input, B.dtype, valid_shape=None if vs is None else list(vs))
    return binary("remainder", input, other, "remainder", dtypes=FI)


@op("fmod")
def fmod(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """C-style remainder (sign of the dividend)."""
    return binary("fmod", input, other, "fmod", dtypes=F)


@op("pow")
def pow(input: Any, other: Any, precision_type: Any = None) -> Tensor:  # noqa: A001
    """input ** other (float)."""
    return binary("pow", input, other, "pow", dtypes=F)


@op("maximum")
def maximum(input: Any, other: Any) -> Tensor:
    """Elementwise max (NaN propagates, like the vector unit's max)."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        input, other = other, input
    return binary("maximum", input, other, "maximum", dtypes=FI)


@op("minimum")
def minimum(input: Any, other: Any) -> Tensor:
    """Elementwise min."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        input, other = other, input
    return binary("minimum", input, other, "minimum", dtypes=FI)


@op("hypot")
def hypot(input: Any, other: Any) -> Tensor:
    """sqrt(x^2 + y^2)."""
    return binary("hypot", input, other, "hypot", dtypes=F)


@op("copysign")
def copysign(input: Any, other: Any) -> Tensor:
    """|x| with the sign of y (both tensors: the 0.2.0 binding refuses a scalar ``other``)."""
    if not isinstance(other, Tensor):
        raise require_tracer("copysign").pyerror(
            "TypeError", "CopySign(): incompatible function arguments: other must be a Tensor", op="copysign")
    return binary("copysign", input, other, "copysign", dtypes=F)


@op("atan2")
def atan2(input: Any, other: Any) -> Tensor:
    """atan2(y=input, x=other)."""
    return binary("atan2", input, other, "atan2", dtypes=F)


@op("gcd")
def gcd(input: Any, other: Any) -> Tensor:
    """Greatest common divisor (ints)."""
    return binary("gcd", input, other, "gcd", dtypes=INTS)


@op("ceil_div")
def ceil_div(input: Any, other: Any) -> Tensor:
    """ceil(input / other) of INT32 tensors (the 0.2.0 wheel rejects every other dtype with FC0001 when it traces the
    call - probed for FP32, FP16, INT16, INT8, UINT8, INT64); ``other`` a tensor or an int."""
    dt = input.dtype if isinstance(input, Tensor) else None
    if dt is not None and dt != DataType.DT_INT32:
        raise require_tracer("ceil_div").error("FC0001", f"ceil_div: {dt.name} is not supported (INT32 only)",
                                               op="ceil_div")
    return binary("ceil_div", input, other, "ceil_div")


@op("bitwise_and")
def bitwise_and(input: Any, other: Any) -> Tensor:
    """Bitwise and (ints)."""
    return binary("bitwise_and", input, other, "bitwise_and", dtypes=INTS)


@op("bitwise_or")
def bitwise_or(input: Any, other: Any) -> Tensor:
    """Bitwise or (ints)."""
    return binary("bitwise_or", input, other, "bitwise_or", dtypes=INTS)


@op("bitwise_xor")
def bitwise_xor(input: Any, other: Any) -> Tensor:
    """Bitwise xor (ints)."""
    return binary("bitwise_xor", input, other, "bitwise_xor", dtypes=INTS)


@op("bitwise_left_shift")
def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """Left shift (ints)."""
    return binary("bitwise_left_shift", input, other, "left_shift", dtypes=SHIFTS)


@op("bitwise_right_shift")
def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """Arithmetic right shift for signed ints (numpy >> semantics)."""
    return binary("bitwise_right_shift", input, other, "right_shift", dtypes=SHIFTS)


@op("bitwise_not")
def bitwise_not(input: Any) -> Tensor:
    """Bitwise not (ints)."""
    return unary("bitwise_not", input, "bitwise_not", dtypes=INTS)


@op("logical_and")
def logical_and(input: Any, other: Any) -> Tensor:
    """Logical and -> BOOL."""
    return binary("logical_and", input, other, "logical_and", out_dtype=_BOOL)


@op("logical_not")
def logical_not(input: Any) -> Tensor:
    """Logical not -> BOOL."""
    return unary("logical_not", input, "logical_not", out_dtype=_BOOL)


@op("clip")
def clip(input: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clamp to [min, max] (either may be None; both given: two tensors or two scalars, as in the wheel)."""
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        # s29 crosscheck: pypto 0.2.0's clip converts a scalar bound to an Element and calls Clip(Tensor, Tensor,
        # Tensor) or Clip(Tensor, Element, Element): a tensor with a scalar fails in the binding (min a tensor) or in
        # Element's constructor (max a tensor); spec §5.2 "min/max same type"
        first = "Clip(): incompatible function arguments" if isinstance(min, Tensor) else \
            "__init__(): incompatible constructor arguments"
        raise require_tracer("clip").pyerror(
            "TypeError", f"{first} (pypto.clip takes min and max of one kind, two tensors or two scalars; got "
            f"{type(min).__name__} and {type(max).__name__})", op="clip")
    t = input
    if min is not None:
        t = binary("clip", t, min, "maximum", dtypes=FI)
    if max is not None:
        t = binary("clip", t, max, "minimum", dtypes=FI)
    if min is None and max is None:
        t = unary("clip", t, "identity")
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
    return binary("prelu", A, w, "prelu", dtypes=F)


@op("lrelu")
def lrelu(input: Any, negative_slope: float = 0.01) -> Tensor:
    """Leaky ReLU (negative_slope >= 0)."""
    return unary("lrelu", input, "lrelu", dtypes=F, arg=np.float32(negative_slope))


# ---- unary math ---------------------------------------------------------------------------------------

_UNARY: dict[str, tuple[frozenset | None, bool]] = {
    "abs": (F | {DataType.DT_INT32, DataType.DT_INT16}, False),
    "neg": (FI, False),
    "exp": (F, True),
    "exp2": (F, True),
    "expm1": (FI, True),
    "log": (F, True),
    "log1p": (F, True),
    "log2": (F, True),
    "log10": (F, True),
    "sqrt": (F, True),
    "rsqrt": (F, True),
    "reciprocal": (F, True),
    "sign": (FI, False),
    "relu": (FI, False),
    "sigmoid": (frozenset({DataType.DT_FP32}), True),
    "ceil": (FI, False),
    "floor": (FI, False),
    "trunc": (FI, False),
    "cbrt": (F, True),
    "sin": (F, True),
    "cos": (F, True),
    "tan": (F, True),
    "tanh": (F, True),
    "sinh": (F, True),
    "cosh": (F, True),
    "asin": (F, True),
    "acos": (F, True),
    "atan": (F, True),
    "asinh": (F, True),
    "acosh": (F, True),
    "atanh": (F, True),
    "erf": (F, True),
    "erfc": (F, True),
}


def _make_unary(name: str, dts: frozenset | None, cf: bool) -> Callable:
    def f(input: Any, precision_type: Any = None) -> Tensor:
        return unary(name, input, name, dtypes=dts, compute_float=cf)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name}."
    return f


for _n, (_dts, _cf) in _UNARY.items():
    globals()[_n] = op(_n)(_make_unary(_n, _dts, _cf))


@op("round")
def round(input: Any, decimals: int = 0) -> Tensor:  # noqa: A001
    """Round half to even (torch semantics)."""
    return unary("round", input, "rint" if decimals == 0 else "round", dtypes=FI,
                 arg=None if decimals == 0 else decimals)


@op("signbit")
def signbit(input: Any) -> Tensor:
    """Sign bit -> BOOL."""
    return unary("signbit", input, "signbit", out_dtype=_BOOL)


@op("isfinite")
def isfinite(input: Any) -> Tensor:
    """Finite test -> BOOL."""
    return unary("isfinite", input, "isfinite", out_dtype=_BOOL)


@op("isnan")
def isnan(input: Any) -> Tensor:
    """NaN test -> BOOL."""
    return unary("isnan", input, "isnan", out_dtype=_BOOL)


# ---- comparisons / selection -------------------------------------------------------------------------

_CMP = ("eq", "ne", "lt", "le", "gt", "ge")


def _int_scalar(name: str, other: Any) -> None:
    """The wheel's comparisons take a Tensor, a float or an Element: a Python int (``x > 0``) reaches its C++ binding
    and fails there (probed on 0.2.0; spec §5.4)."""
    if isinstance(other, int):
        raise require_tracer(name).pyerror(
            "TypeError", f"Compare(): incompatible function arguments: {name} takes a Tensor, a float or an Element, "
            f"not the int {other!r} (write {float(other)!r})", op=name)


def _make_cmp(name: str) -> Callable:
    def f(input: Any, other: Any) -> Tensor:
        _int_scalar(name, other)
        return binary(name, input, other, name, out_dtype=_BOOL,
                      dtypes=frozenset({DataType.DT_FP16, DataType.DT_FP32}))

    f.__name__ = name
    f.__doc__ = f"Elementwise comparison {name} -> BOOL."
    return f


for _n in _CMP:
    globals()[_n] = op(_n)(_make_cmp(_n))


@op("greater")
def greater(input: Any, other: Any) -> Tensor:
    """Alias of gt."""
    _int_scalar("greater", other)
    return binary("greater", input, other, "gt", out_dtype=_BOOL)


@op("where")
def where(condition: Any, input: Any, other: Any) -> Tensor:
    """condition ? input : other (BOOL condition; single-axis broadcast per pair)."""
    tr = require_tracer("where")
    C = reader(tr, condition, "where")
    if C.dtype != _BOOL:
        raise tr.error("FC0001", f"where: condition must be DT_BOOL, got {C.dtype.name}", op="where")
    tens = [x for x in (input, other) if isinstance(x, Tensor)]
    if tens:
        dt = tens[0].dtype
    else:  # two scalars (the wheel takes them): FP32 Elements unless given as Elements, of the condition's shape
        dts = {x.dtype if isinstance(x, Element) else DataType.DT_FP32 for x in (input, other)}
        if len(dts) != 1:
            raise tr.error("FC0001", "where: input and other dtypes differ", op="where")
        dt = dts.pop()
    for t in tens:
        reader(tr, t, "where")
        if t.dtype != dt:
            raise tr.error("FC0001", "where: input and other dtypes differ", op="where")
    shapes = [C.shape] + [t.shape for t in tens]
    shape = broadcast_shape(tr, "where", shapes)

    def operand(x: Any) -> tuple[int | None, Any]:
        if isinstance(x, Tensor):
            return x.key, None
        fp32_elem = isinstance(x, Element) and x.dtype == DataType.DT_FP32
        if (isinstance(x, float) or fp32_elem) and dt != DataType.DT_FP32:
            msg = (f"where: a float scalar is an FP32 Element; with a {dt.name} tensor pass "
                   f"pypto.Element(pypto.{dt.name}, v)")
            if tr.options.compat != "0.2.0":
                raise tr.error("FC0001", msg, op="where")
            # the 0.2.0 wheel takes it (BF16/FP16/INT32 tensors, SIM probes s19): the result keeps the tensor's dtype
            tr.warn("EMU_SCALAR_DTYPE", msg + " (the docs reject it; pypto 0.2.0 accepts it)", op="where")
            x = x.value if fp32_elem else x
            if dt in INT_TYPES and float(x).is_integer():  # an integral value: the int operand path
                x = int(x)
        return None, _scalar_operand(tr, "where", x, dt)

    (ik, iv), (ok_, ov) = operand(input), operand(other)
    te = check_tile(tr, "where", len(shape), dtype=dt)
    out = new_out(tr, shape, dt, "where")
    for t in tens:
        carry_whole_dynamic(t, out)
    tr.emit("where", "where", {"c": C.key, "i": ik, "o": ok_, "iv": iv, "ov": ov, "out": out.key,
                               "odt": numpy_dtype_name(dt)},
            out, tile_elems=te, ins=tuple(k for k in (C.key, ik, ok_) if k is not None), outs=(out,))
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
    if not isinstance(mode, CastMode) or not isinstance(satmode, SaturationMode):  # the wheel's binding (fidelity s31)
        raise tr.pyerror("TypeError", "Cast(): incompatible function arguments (mode must be a pypto.CastMode and "
                         "satmode a pypto.SaturationMode)", op="cast")
    m, s = mode, satmode
    te = check_tile(tr, "cast", A.dim, dtype=dst)
    out = new_out(tr, A.shape, dst, "cast", valid=A.valid_shape)
    carry_whole_dynamic(A, out)  # the check looks for a DYNAMIC axis (fidelity audit 8)
    dn, mn, sn = dst.name, m.name, s.name  # an enum's `.name` is a Python property: read once, not twice
    tr.emit("cast", "cast", {"a": A.key, "out": out.key, "src": src.name, "dst": dn, "mode": mn, "satmode": sn},
            out, tile_elems=te, ins=(A.key,), outs=(out,), attrs={"dtype": dn, "mode": mn, "satmode": sn})
    return out
