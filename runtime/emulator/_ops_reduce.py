"""Reductions, scans and composite ops (sum/amax/amin/prod/var/cumsum, softmax, rms_norm).

Reductions take one integer axis, use only the valid extent of that axis, accumulate in FP32 and round
once to the output dtype; the reduce tile's last axis must be 32-byte aligned (FC1001).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.emulator._enums import FLOAT_TYPES, DataType, numpy_dtype
from runtime.emulator._numerics import compute
from runtime.emulator._ops_core import check_tile, new_out, reader
from runtime.emulator._ops_math import FI, F, binary
from runtime.emulator._registry import op
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import Tracer, require_tracer

__all__ = ["softmax"]


# ---- reductions ---------------------------------------------------------------------------------------

def _axis(tr: Tracer, opname: str, dim: Any, rank: int) -> int:
    if isinstance(dim, list | tuple):
        if len(dim) != 1:
            raise tr.pyerror("ValueError", f"{opname}: exactly one integer axis is supported", op=opname)
        dim = dim[0]
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise tr.pyerror("TypeError", f"{opname}: dim must be an int, got {dim!r}", op=opname)
    if not -rank <= dim < rank:
        raise tr.pyerror("IndexError", f"{opname}: dim {dim} out of range for rank {rank}", op=opname)
    return dim % rank


def _reduce(opname: str, input: Any, dim: Any, keepdim: bool, fn: Callable, dtypes: frozenset,
            out_dtype: DataType | None = None) -> Tensor:
    tr = require_tracer(opname)
    A = reader(tr, input, opname)
    ax = _axis(tr, opname, dim, A.dim)
    if A.dtype not in dtypes:
        tr.warn("EMU_DTYPE", f"{opname} on {A.dtype.name} is outside the documented dtypes "
                f"({', '.join(sorted(d.name for d in dtypes))}); gym rule: reduce in FP32", op=opname)
    te = check_tile(tr, opname, A.dim, dtype=A.dtype, align_error=True)
    shape = A.shape
    oshape = shape[:ax] + [1] + shape[ax + 1:] if keepdim else shape[:ax] + shape[ax + 1:]
    if not oshape:
        oshape = [1]
    odt = out_dtype if out_dtype is not None else A.dtype
    out = new_out(tr, oshape, odt, opname)
    akey, okey, ond = A.key, out.key, numpy_dtype(odt)

    def run(env: Any) -> None:
        x, v = env.get(akey)
        n = v[ax]
        if n < x.shape[ax]:
            x = x[(slice(None),) * ax + (slice(0, n),)]
        r = fn(compute(x), ax)
        r = np.asarray(r)
        if keepdim:
            r = np.expand_dims(r, ax)
            vv = tuple(v[:ax]) + (1,) + tuple(v[ax + 1:])
        else:
            vv = tuple(v[:ax]) + tuple(v[ax + 1:])
        if r.ndim == 0:
            r = r.reshape(1)
            vv = (1,)
        env.buf[okey] = (r.astype(ond, copy=False), vv)

    axn = ax - A.dim

    def brun(env: Any, b: Any) -> None:
        x = env.buf[akey][0]
        batched = x.ndim > A.dim
        with np.errstate(all="ignore"):
            r = np.asarray(fn(compute(x), axn))
        if keepdim:
            r = np.expand_dims(r, axn)
        elif A.dim == 1:
            r = r.reshape(r.shape + (1,)) if batched else r.reshape(1)
        env.buf[okey] = (r.astype(ond, copy=False), None)

    tr.emit(opname, run, out, tile_elems=te, brun=brun if opname in ("sum", "amax", "amin", "prod") else None,
            ins=(akey,), attrs={"dim": ax, "keepdim": bool(keepdim)})
    return out


def _sum(x: np.ndarray, ax: int) -> np.ndarray:
    if x.dtype.kind in "iu":
        return np.sum(x, axis=ax, dtype=x.dtype)
    return np.sum(x, axis=ax, dtype=np.float32)


_SUM_DT = frozenset({DataType.DT_FP32, DataType.DT_BF16, DataType.DT_INT32, DataType.DT_INT16})


@op("sum")
def sum(input: Any, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Sum over one axis (FP32 accumulation); gym rule: FP32 only, so other floats warn."""
    t = input
    if isinstance(t, Tensor) and t.dtype != DataType.DT_FP32 and t.dtype in FLOAT_TYPES:
        tr = require_tracer("sum")
        tr.warn("EMU_SUM_FP32", f"sum on {t.dtype.name}: reduce in FP32 (cast first); gym rule: sum is FP32-only",
                op="sum")
    return _reduce("sum", input, dim, keepdim, _sum, _SUM_DT | {DataType.DT_FP16})


@op("amax")
def amax(input: Any, dim: Any = -1, keepdim: bool = False) -> Tensor:
    """Max over one axis."""
    return _reduce("amax", input, dim, keepdim, lambda x, ax: np.max(x, axis=ax), FI)


@op("amin")
def amin(input: Any, dim: Any = -1, keepdim: bool = False) -> Tensor:
    """Min over one axis."""
    return _reduce("amin", input, dim, keepdim, lambda x, ax: np.min(x, axis=ax), FI)


@op("prod")
def prod(input: Any, dim: Any = -1, keepdim: bool = False) -> Tensor:
    """Product over one axis (not simulatable in 0.2.0 SIM: F92001)."""
    return _reduce("prod", input, dim, keepdim, lambda x, ax: np.prod(x, axis=ax),
                   frozenset({DataType.DT_FP32, DataType.DT_INT32, DataType.DT_INT16}))


@op("argmax")
def argmax(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Index of the max over one axis (INT32)."""
    return _reduce("argmax", input, dim, keepdim, lambda x, ax: np.argmax(x, axis=ax), FI, DataType.DT_INT32)


@op("argmin")
def argmin(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Index of the min over one axis (INT32)."""
    return _reduce("argmin", input, dim, keepdim, lambda x, ax: np.argmin(x, axis=ax), FI, DataType.DT_INT32)


@op("var")
def var(input: Any, dim: Any = None, *, correction: int = 1, keepdim: bool = False) -> Tensor:
    """torch.var over dim (None = all axes, int or list), FP32 accumulation."""
    tr = require_tracer("var")
    A = reader(tr, input, "var")
    if dim is None:
        axes = list(range(A.dim))
    elif isinstance(dim, int):
        axes = [dim % A.dim]
    else:
        axes = [d % A.dim for d in dim]
    te = check_tile(tr, "var", A.dim, dtype=A.dtype, align_error=True)
    oshape = [1 if d in axes else s for d, s in enumerate(A.shape)] if keepdim else \
        [s for d, s in enumerate(A.shape) if d not in axes] or [1]
    out = new_out(tr, oshape, A.dtype, "var")
    akey, okey, ond = A.key, out.key, numpy_dtype(A.dtype)

    def run(env: Any) -> None:
        x, v = env.get(akey)
        x = compute(x)[tuple(slice(0, n) for n in v)].astype(np.float32)
        r = np.var(x, axis=tuple(axes), ddof=correction, keepdims=keepdim)
        r = np.asarray(r).reshape([1] if r.ndim == 0 else r.shape).astype(ond)
        env.put(okey, r)

    tr.emit("var", run, out, tile_elems=te, ins=(akey,), attrs={"dim": axes, "keepdim": bool(keepdim)})
    return out


@op("cumsum")
def cumsum(input: Any, dim: int = -1) -> Tensor:
    """Inclusive prefix sum along dim (FP32 accumulation, one rounding)."""
    tr = require_tracer("cumsum")
    A = reader(tr, input, "cumsum")
    ax = _axis(tr, "cumsum", dim, A.dim)
    te = check_tile(tr, "cumsum", A.dim, dtype=A.dtype)
    out = new_out(tr, A.shape, A.dtype, "cumsum")
    akey, okey, ond = A.key, out.key, numpy_dtype(A.dtype)

    def run(env: Any) -> None:
        x, v = env.get(akey)
        c = compute(x)
        r = np.cumsum(c, axis=ax, dtype=np.float32 if c.dtype.kind == "f" else c.dtype)
        env.buf[okey] = (r.astype(ond, copy=False), v)

    tr.emit("cumsum", run, out, tile_elems=te, ins=(akey,), attrs={"dim": ax})
    return out


@op("cumprod")
def cumprod(input: Any, dim: int = -1) -> Tensor:
    """Inclusive prefix product along dim."""
    tr = require_tracer("cumprod")
    A = reader(tr, input, "cumprod")
    ax = _axis(tr, "cumprod", dim, A.dim)
    te = check_tile(tr, "cumprod", A.dim, dtype=A.dtype)
    out = new_out(tr, A.shape, A.dtype, "cumprod")
    akey, okey, ond = A.key, out.key, numpy_dtype(A.dtype)

    def run(env: Any) -> None:
        x, v = env.get(akey)
        env.buf[okey] = (np.cumprod(compute(x), axis=ax).astype(ond, copy=False), v)

    tr.emit("cumprod", run, out, tile_elems=te, ins=(akey,), attrs={"dim": ax})
    return out


# ---- composites ---------------------------------------------------------------------------------------

@op("softmax")
def softmax(input: Any, dim: int = -1) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along dim; FP32 only."""
    tr = require_tracer("softmax")
    A = reader(tr, input, "softmax")
    if A.dtype != DataType.DT_FP32:
        tr.warn("EMU_DTYPE", f"softmax on {A.dtype.name}: FP32 only on the device", op="softmax")
    ax = _axis(tr, "softmax", dim, A.dim)
    te = check_tile(tr, "softmax", A.dim, dtype=A.dtype, align_error=True)
    out = new_out(tr, A.shape, A.dtype, "softmax")
    akey, okey, ond = A.key, out.key, numpy_dtype(A.dtype)

    def run(env: Any) -> None:
        x, v = env.get(akey)
        c = compute(x).astype(np.float32, copy=True)
        n = v[ax]
        sl = (slice(None),) * ax + (slice(0, n),)
        part = c[sl]
        m = np.max(part, axis=ax, keepdims=True)
        e = np.exp(part - m)
        s = np.sum(e, axis=ax, keepdims=True, dtype=np.float32)
        c[sl] = e / s
        env.buf[okey] = (c.astype(ond, copy=False), v)

    axn = ax - A.dim

    def brun(env: Any, b: Any) -> None:
        c = compute(env.buf[akey][0]).astype(np.float32, copy=False)
        m = np.max(c, axis=axn, keepdims=True)
        e = np.exp(c - m)
        r = e / np.sum(e, axis=axn, keepdims=True, dtype=np.float32)
        env.buf[okey] = (r.astype(ond, copy=False), None)

    tr.emit("softmax", run, out, tile_elems=te, brun=brun, ins=(akey,), attrs={"dim": ax})
    return out


@op("rms_norm")
def rms_norm(input: Any, gamma: Any = None, epsilon: float = 1e-6) -> Tensor:
    """x / sqrt(mean(x^2, -1) + eps) * gamma in FP32, cast back to the input dtype."""
    tr = require_tracer("rms_norm")
    A = reader(tr, input, "rms_norm")
    G = reader(tr, gamma, "rms_norm") if gamma is not None else None
    te = check_tile(tr, "rms_norm", A.dim, dtype=A.dtype, align_error=True)
    out = new_out(tr, A.shape, A.dtype, "rms_norm")
    akey, okey, ond = A.key, out.key, numpy_dtype(A.dtype)
    gkey = G.key if G is not None else None
    eps = np.float32(epsilon)

    def run(env: Any) -> None:
        x, v = env.get(akey)
        xf = compute(x).astype(np.float32)
        n = v[-1]
        ms = np.mean(np.square(xf[..., :n]), axis=-1, keepdims=True, dtype=np.float32)
        r = xf / np.sqrt(ms + eps)
        if gkey is not None:
            g, _ = env.get(gkey)
            r = r * compute(g).astype(np.float32)
        env.buf[okey] = (r.astype(ond), v)

    tr.emit("rms_norm", run, out, tile_elems=te, ins=(akey,) if gkey is None else (akey, gkey),
            attrs={"epsilon": float(epsilon)})
    return out


@op("expand_exp_dif")
def expand_exp_dif(input: Any, other: Any) -> Tensor:
    """exp(input - broadcast(other))."""
    return binary("expand_exp_dif", input, other, lambda x, y: np.exp(x - y), dtypes=F)
