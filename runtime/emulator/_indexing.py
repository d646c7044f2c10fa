"""Lowering of tensor indexing (spec §2.3): getitem -> view (+reshape), setitem -> assemble / move, and
INT32 scalar reads/writes that become runtime SymbolicScalars."""

from __future__ import annotations

from typing import Any

from runtime.emulator._enums import DataType
from runtime.emulator._ops_core import assemble, move, reader, reshape, view
from runtime.emulator._symbolic import SymbolicScalar, simplify_int
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import Tracer, require_tracer

__all__ = ["tensor_getitem", "tensor_setitem"]


# ---------------------------------------------------------------------------------------------------
# indexing lowering (spec §2.3)


def _norm_key(tr: Tracer, t: Tensor, key: Any) -> list:
    if not isinstance(key, tuple):
        key = (key,)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise tr.pyerror("ValueError", "Only one ... is supported")
    if Ellipsis in [k for k in key if k is Ellipsis]:
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        fill = t.dim - (len(key) - 1)
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    if len(key) > t.dim:
        raise tr.pyerror("IndexError", f"Too many indices for tensor with dimension {t.dim}")
    key = tuple(key) + (slice(None),) * (t.dim - len(key))
    out = []
    for d, k in enumerate(key):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise tr.pyerror("ValueError", "step must be 1 or None")
            out.append(k)
        elif isinstance(k, bool) or isinstance(k, Tensor):
            raise tr.pyerror("TypeError", f"unsupported index type {type(k).__name__}")
        elif isinstance(k, int | SymbolicScalar) or hasattr(k, "__index__"):
            k = k if isinstance(k, SymbolicScalar) else int(k)
            if isinstance(k, int) and k < 0:
                dim = t.shape[d]
                if isinstance(dim, SymbolicScalar) and dim._value is None:
                    raise tr.pyerror("ValueError", "negative index on a dynamic axis")
                k = k + int(dim)
            out.append(k)
        else:
            raise tr.pyerror("TypeError", f"unsupported index type {type(k).__name__}")
    return out


def _slice_geom(tr: Tracer, t: Tensor, keys: list, *, setitem: bool) -> tuple[list, list]:
    offs, shp = [], []
    for d, k in enumerate(keys):
        dim = t.shape[d]
        if isinstance(k, slice):
            start, stop = k.start, k.stop
            for v in (start, stop):
                if isinstance(v, int) and v < 0:
                    if isinstance(dim, SymbolicScalar) and dim._value is None:
                        raise tr.pyerror("ValueError", "negative slice bound on a dynamic axis")
            if isinstance(start, int) and start < 0:
                start = start + int(dim)
            if isinstance(stop, int) and stop < 0:
                stop = stop + int(dim)
            s0 = 0 if start is None else start
            s1 = dim if stop is None else stop
            if setitem:
                gap = simplify_int(stop - dim) if start is None and stop is not None else 0
                if not (isinstance(gap, int) and gap == 0):
                    tr.warn("EMU_SLICE_QUIRK", "`t[:k] = v`: 0.2.0 lowers the offset to `stop - dim` (negative); "
                            "the emulator uses offset 0 - write `t[0:k] = v` to be explicit", op="assemble")
                offs.append(s0)
                shp.append(None)
                continue
            n = simplify_int(s1 - s0)
            if isinstance(n, SymbolicScalar):
                if n._value is not None:
                    n = n._value
                else:
                    raise tr.pyerror("TypeError", "Cannot convert symbols to int")
            offs.append(s0)
            shp.append(int(n))
        else:
            offs.append(k)
            shp.append(1)
    return offs, shp


def tensor_getitem(t: Tensor, key: Any) -> Any:
    tr = require_tracer("view")
    if isinstance(key, slice) and key == slice(None) or key is Ellipsis:
        return t
    keys = _norm_key(tr, t, key)
    if all(not isinstance(k, slice) for k in keys):
        return _read_scalar(tr, t, keys)
    offs, shp = _slice_geom(tr, t, keys, setitem=False)
    v = view(t, shp, offs)
    if any(not isinstance(k, slice) for k in keys):
        keep = [s for s, k in zip(shp, keys, strict=True) if isinstance(k, slice)]
        v = reshape(v, keep, inplace=True, _internal=True)
    return v


def tensor_setitem(t: Tensor, key: Any, value: Any) -> None:
    tr = require_tracer("assemble")
    if isinstance(key, slice) and key == slice(None) or key is Ellipsis:
        move(t, value)
        return
    keys = _norm_key(tr, t, key)
    if all(not isinstance(k, slice) for k in keys):
        _write_scalar(tr, t, keys, value)
        return
    if not isinstance(value, Tensor):
        raise tr.pyerror("TypeError", f"slice assignment needs a Tensor value, got {type(value).__name__}",
                         op="assemble")
    offs, shp = _slice_geom(tr, t, keys, setitem=True)
    if any(not isinstance(k, slice) for k in keys):
        nslice = sum(1 for k in keys if isinstance(k, slice))
        if nslice != value.dim:
            raise tr.pyerror("AssertionError", f"number of slices ({nslice}) must equal the value rank "
                             f"({value.dim})", op="assemble")
        it = iter(value.shape)
        newshape = [next(it) if isinstance(k, slice) else 1 for k in keys]
        value = reshape(value, newshape, inplace=True, _internal=True)
    assemble(value, offs, t)


def _read_scalar(tr: Tracer, t: Tensor, keys: list) -> SymbolicScalar:
    reader(tr, t, "getitem")
    if t.dtype != DataType.DT_INT32:
        raise tr.pyerror("AssertionError", "tensor dtype must be DT_INT32.")
    name = t.name
    return SymbolicScalar.runtime(f"{name or 'tensor'}{keys}", ("read", t.key, list(keys), name))


def _write_scalar(tr: Tracer, t: Tensor, keys: list, value: Any) -> None:
    if t.dtype != DataType.DT_INT32:
        raise tr.pyerror("AssertionError", "tensor dtype must be DT_INT32.")
    if not isinstance(value, int | SymbolicScalar):
        raise tr.pyerror("TypeError", "scalar write needs an int or SymbolicScalar value")
    t._written = True
    tr.emit("setitem", "setitem", {"dst": t.key, "shape": t.shape, "index": list(keys), "value": value}, None,
            kind="move", gm_write=t.kind == "param", target=t.name, writes=(t.key,))
