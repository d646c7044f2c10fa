"""Creation ops: full / zeros / ones / arange (fill ops need a vector tile like every vector op)."""

from __future__ import annotations

import math
from typing import Any

from runtime.emulator._enums import DataType, numpy_dtype_name
from runtime.emulator._ops_core import _int_list, check_tile, new_out, static_dims_020
from runtime.emulator._registry import op
from runtime.emulator._scalar import Element
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import Tracer, require_tracer

__all__ = ["arange", "full", "ones", "zeros"]


# ---------------------------------------------------------------------------------------------------
# creation


def _size_args(size: tuple) -> list:
    if len(size) == 1 and isinstance(size[0], list | tuple):
        return list(size[0])
    return list(size)


def _fill(tr: Tracer, opname: str, shp: list, value: Any, dt: DataType, vs: Any = None) -> Tensor:
    te = check_tile(tr, opname, len(shp))
    if not 1 <= len(shp) <= 5:
        raise tr.pyerror("ValueError", f"{opname}: 1-4 dims supported, got {len(shp)}", op=opname)
    out = new_out(tr, shp, dt, opname, valid=vs)
    sym = isinstance(value, SymbolicScalar)
    tr.emit(opname, "fill", {"out": out.key, "shape": shp, "value": 0 if sym else value,
                             "value_expr": value if sym else None, "odt": numpy_dtype_name(dt), "vs": vs},
            out, tile_elems=te, outs=(out,))
    return out


@op("full", method=False)
def full(size: Any, fill_value: Any, dtype: Any, *, valid_shape: Any = None) -> Tensor:
    """Tensor filled with a scalar (int/float/Element/SymbolicScalar); ``dtype`` is required, as in the 0.2.0 wheel
    (``TypeError: full() missing 1 required positional argument: 'dtype'``)."""
    tr = require_tracer("full")
    shp = _int_list(tr, size, "size", "full", allow_sym=True)
    static_dims_020(tr, shp, "full", "Full")
    v = fill_value
    if isinstance(v, Element):
        dt = DataType(dtype) if dtype is not None else v.dtype
        v = v.value
    elif isinstance(v, SymbolicScalar):
        dt = DataType(dtype) if dtype is not None else DataType.DT_INT32
        if dt != DataType.DT_INT32 and tr.options.compat != "0.2.0":  # the 0.2.0 wheel fills FP32/FP16 with one
            # (fidelity audit 9: a loop index or a dynamic dim)
            raise tr.pyerror("ValueError", "full: a SymbolicScalar fill value needs dtype DT_INT32", op="full")
    else:
        default = DataType.DT_FP32 if isinstance(v, float) else DataType.DT_INT32
        dt = DataType(dtype) if dtype is not None else default
    vs = _int_list(tr, valid_shape, "valid_shape", "full", allow_sym=True) if valid_shape is not None else None
    return _fill(tr, "full", shp, v, dt, vs)


@op("zeros", method=False)
def zeros(*size: Any, dtype: Any = None) -> Tensor:
    """Zero-filled tensor (dtype keyword-only, default FP32)."""
    tr = require_tracer("zeros")
    shp = _int_list(tr, _size_args(size), "size", "zeros", allow_sym=True)
    static_dims_020(tr, shp, "zeros", "Full")
    return _fill(tr, "zeros", shp, 0, DataType(dtype) if dtype is not None else DataType.DT_FP32)


@op("ones", method=False)
def ones(*size: Any, dtype: Any = None) -> Tensor:
    """One-filled tensor (dtype keyword-only, default FP32)."""
    tr = require_tracer("ones")
    shp = _int_list(tr, _size_args(size), "size", "ones", allow_sym=True)
    static_dims_020(tr, shp, "ones", "Full")
    return _fill(tr, "ones", shp, 1, DataType(dtype) if dtype is not None else DataType.DT_FP32)


@op("arange", method=False)
def arange(*args: Any, dtype: Any = None) -> Tensor:
    """arange(end) / (start, end) / (start, end, step)."""
    tr = require_tracer("arange")
    if len(args) == 1:
        start, end, step = 0, args[0], 1
    elif len(args) == 2:
        start, end, step = args[0], args[1], 1
    elif len(args) == 3:
        start, end, step = args
    else:
        raise tr.pyerror("TypeError", "arange takes 1 to 3 arguments", op="arange")
    if step == 0 or abs(step) <= 1e-8 or (end - start) / step <= 0:
        raise tr.pyerror("ValueError", "arange: step must be non-zero and (end-start)/step > 0", op="arange")
    n = math.ceil((end - start) / step)
    isf = any(isinstance(a, float) for a in (start, end, step))
    dt = DataType(dtype) if dtype is not None else (DataType.DT_FP32 if isf else DataType.DT_INT32)
    te = check_tile(tr, "arange", 1)
    out = new_out(tr, [n], dt, "arange")
    tr.emit("arange", "arange", {"out": out.key, "n": n, "start": start, "step": step, "odt": numpy_dtype_name(dt)},
            out, tile_elems=te, outs=(out,))
    return out


