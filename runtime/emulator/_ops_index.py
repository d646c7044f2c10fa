"""Transform and indexing ops: transpose, concat, expand_clone, gather family, scatter family, topk/sort."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.emulator._buffers import poison_array
from runtime.emulator._enums import DataType
from runtime.emulator._numerics import compute
from runtime.emulator._ops_core import check_tile, clone, new_out, reader, static_shape
from runtime.emulator._registry import op
from runtime.emulator._symbolic import SymbolicScalar, evaluate
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import Tracer, current_scope, require_tracer

__all__ = ["simple_op"]

_IDX = (DataType.DT_INT32, DataType.DT_INT64)


def simple_op(tr: Tracer, opname: str, ins: list[Tensor], shapes: list[list], dtypes: list[DataType],
              fn: Callable[..., Any], *, tile_rank: int | None = None, align_error: bool = False,
              tile: bool = True, attrs: dict | None = None) -> list[Tensor]:
    """Record an op with tensor inputs and 1+ outputs; ``fn(env, *(arr, valid)) -> [(arr, valid), ...]``."""
    te = 0
    if tile:
        te = check_tile(tr, opname, tile_rank if tile_rank is not None else len(shapes[0]),
                        dtype=ins[0].dtype if ins else None, align_error=align_error)
    outs = [new_out(tr, s, d, opname) for s, d in zip(shapes, dtypes, strict=True)]
    keys = [t.key for t in ins]
    okeys = [o.key for o in outs]

    def run(env: Any) -> None:
        res = fn(env, *[env.get(k) for k in keys])
        for k, (arr, valid) in zip(okeys, res, strict=True):
            env.buf[k] = (arr, tuple(valid))

    tr.emit(opname, run, outs[0], tile_elems=te, ins=tuple(keys), attrs=attrs)
    return outs


def _full_valid(arr: np.ndarray, valid: tuple) -> np.ndarray:
    if tuple(valid) == arr.shape:
        return arr
    return arr[tuple(slice(0, v) for v in valid)]


def _pad_to(arr: np.ndarray, shape: tuple) -> tuple[np.ndarray, tuple]:
    if arr.shape == tuple(shape):
        return arr, arr.shape
    res = poison_array(tuple(shape), arr.dtype)
    res[tuple(slice(0, n) for n in arr.shape)] = arr
    return res, arr.shape


_T4 = {(0, 2), (1, 3), (2, 3), (1, 2)}


@op("transpose")
def transpose(input: Any, dim0: int, dim1: int) -> Tensor:
    """Swap two axes (4-D: (0,2),(1,3),(2,3),(1,2); 5-D: (3,4))."""
    tr = require_tracer("transpose")
    A = reader(tr, input, "transpose")
    r = A.dim
    d0, d1 = sorted((dim0 % r, dim1 % r))
    if r == 4 and d0 != d1 and (d0, d1) not in _T4 or r == 5 and (d0, d1) != (3, 4) or r > 5:
        raise tr.error("FC0002", f"transpose of axes ({dim0}, {dim1}) is not supported for rank {r}",
                       op="transpose")
    shp = A.shape
    noop = d0 == d1 or (shp[d0] == 1 and shp[d1] == 1)
    shp2 = list(shp)
    shp2[d0], shp2[d1] = shp[d1], shp[d0]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        vv = list(v)
        vv[d0], vv[d1] = v[d1], v[d0]
        return [(np.ascontiguousarray(np.swapaxes(arr, d0, d1)), vv)]

    return simple_op(tr, "transpose", [A], [shp2], [A.dtype], fn, align_error=noop,
                     attrs={"dim0": int(dim0), "dim1": int(dim1)})[0]


@op("permute")
def permute(input: Any, dims: Any) -> Tensor:
    """Reorder axes."""
    tr = require_tracer("permute")
    A = reader(tr, input, "permute")
    dims = [d % A.dim for d in dims]
    shp = [A.shape[d] for d in dims]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        return [(np.ascontiguousarray(np.transpose(arr, dims)), [v[d] for d in dims])]

    return simple_op(tr, "permute", [A], [shp], [A.dtype], fn)[0]


@op("concat", method=False)
def concat(tensors: Any, dim: int = 0) -> Tensor:
    """Concatenate 2..128 tensors along dim (inputs must be fully valid along dim)."""
    tr = require_tracer("concat")
    ts = [reader(tr, t, "concat") for t in tensors]
    if not ts:
        raise tr.pyerror("ValueError", "concat: empty tensor list", op="concat")
    if len(ts) == 1:
        tr.warn("EMU_CONCAT_ONE", "concat of a single tensor: 'works, precision not guaranteed'", op="concat")
    if len(ts) > 128:
        raise tr.pyerror("ValueError", "concat: at most 128 tensors", op="concat")
    r = ts[0].dim
    ax = dim % r
    for t in ts[1:]:
        if t.dtype != ts[0].dtype or t.dim != r:
            raise tr.error("FC0001", "concat: tensors must share dtype and rank", op="concat")
    total: Any = 0
    for t in ts:
        total = total + t.shape[ax]
    shp = list(ts[0].shape)
    shp[ax] = total if not isinstance(total, SymbolicScalar) or total._value is None else total._value

    def fn(env: Any, *vals: tuple) -> list:
        parts = []
        for i, (arr, v) in enumerate(vals):
            if v[ax] != arr.shape[ax]:
                raise env.error("EMU_CONCAT_VALID", f"concat: input {i} is not fully valid along dim {ax} "
                                f"(valid {v[ax]} of {arr.shape[ax]}); padding would land inside the result")
            parts.append(arr)
        try:
            res = np.concatenate(parts, axis=ax)
        except ValueError as exc:
            raise env.error("FC0000", f"concat: {exc}") from None
        vv = list(res.shape)
        for d in range(r):
            if d != ax:
                vv[d] = min(v[d] for _, v in vals)
        return [(res, vv)]

    return simple_op(tr, "concat", ts, [shp], [ts[0].dtype], fn)[0]


@op("expand_clone")
def expand_clone(input: Any, shape: Any, *, valid_shape: Any = None) -> Tensor:
    """Materialised broadcast (torch expand(...).clone())."""
    tr = require_tracer("expand_clone")
    A = reader(tr, input, "expand_clone")
    shp = list(shape)
    vs = list(valid_shape) if valid_shape is not None else None

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        full = tuple(evaluate(s, env) for s in shp)
        try:
            res = np.broadcast_to(arr, full).copy()
        except ValueError:
            raise env.error("FC0000", f"expand_clone: {list(arr.shape)} cannot expand to {list(full)}") from None
        if vs is not None:
            vv = [evaluate(x, env) for x in vs]
        else:
            vv = [f if arr.shape[d] == 1 else v[d] for d, f in enumerate(full)]
        return [(res, vv)]

    return simple_op(tr, "expand_clone", [A], [shp], [A.dtype], fn)[0]


def _check_index(env: Any, idx: np.ndarray, n: int, opname: str) -> None:
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise env.error("EMU_INDEX_OOB", f"{opname}: index value out of range [0, {n}) "
                        f"(min {int(idx.min())}, max {int(idx.max())})")


@op("index_select")
def index_select(input: Any, dim: int, index: Any) -> Tensor:
    """Select along dim by a 1-D/2-D INT32/INT64 index (output replaces axis dim by the index shape)."""
    tr = require_tracer("index_select")
    A = reader(tr, input, "index_select")
    Ix = reader(tr, index, "index_select")
    if Ix.dtype not in _IDX or Ix.dim not in (1, 2):
        raise tr.error("FC0001", "index_select: index must be 1-D/2-D INT32/INT64", op="index_select")
    ax = dim % A.dim
    shp = A.shape[:ax] + Ix.shape + A.shape[ax + 1:]

    def fn(env: Any, a: tuple, i: tuple) -> list:
        arr, v = a
        idx = _full_valid(*i)
        _check_index(env, idx, v[ax], "index_select")
        res = np.take(arr, idx.astype(np.int64), axis=ax)
        vv = list(v[:ax]) + list(idx.shape) + list(v[ax + 1:])
        return [(res, vv)]

    return simple_op(tr, "index_select", [A, Ix], [shp], [A.dtype], fn)[0]


@op("gather")
def gather(input: Any, dim: int, index: Any) -> Tensor:
    """torch.gather: out[i][j] = input[index[i][j]][j] (dim 0), out shape = index shape."""
    tr = require_tracer("gather")
    A = reader(tr, input, "gather")
    Ix = reader(tr, index, "gather")
    if Ix.dtype not in _IDX or Ix.dim != A.dim:
        raise tr.error("FC0001", "gather: index must be INT32/INT64 with the input's rank", op="gather")
    ax = dim % A.dim

    def fn(env: Any, a: tuple, i: tuple) -> list:
        arr, v = a
        idx = i[0].astype(np.int64)
        _check_index(env, idx, v[ax], "gather")
        src = arr[tuple(slice(0, idx.shape[d]) if d != ax else slice(None) for d in range(arr.ndim))]
        return [(np.take_along_axis(src, idx, axis=ax), i[1])]

    return simple_op(tr, "gather", [A, Ix], [Ix.shape], [A.dtype], fn)[0]


_GM = {1: (0, 2), 2: (1, 2), 3: (0, 4), 4: (1, 4), 5: (2, 4), 6: (3, 4), 7: (0, 1)}


@op("gathermask")
def gathermask(input: Any, pattern_mode: int) -> Tensor:
    """Last-axis pattern select: 1 even, 2 odd, 3..6 k::4, 7 all."""
    tr = require_tracer("gathermask")
    A = reader(tr, input, "gathermask")
    if pattern_mode not in _GM:
        raise tr.pyerror("ValueError", f"gathermask: pattern_mode must be 1..7, got {pattern_mode}", op="gathermask")
    k, s = _GM[pattern_mode]
    last = A.shape[-1]
    if isinstance(last, int) and last % s:
        raise tr.error("FC0000", f"gathermask: last dim {last} must be divisible by {s}", op="gathermask")
    shp = A.shape[:-1] + [last // s if isinstance(last, int) else last / s]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        return [(np.ascontiguousarray(arr[..., k::s]), list(v[:-1]) + [(v[-1] - k + s - 1) // s])]

    return simple_op(tr, "gathermask", [A], [shp], [A.dtype], fn)[0]


def _inplace(tr: Tracer, opname: str, target: Tensor, others: list[Tensor], fn: Callable[..., None],
             *, returns: bool = True) -> Tensor | None:
    """Record an op that mutates ``target``'s storage in place; optionally returns a copy as a new tensor."""
    te = check_tile(tr, opname, target.dim)
    target._written = True
    tkey = target.key
    keys = [t.key for t in others]
    out = new_out(tr, target.shape, target.dtype, opname) if returns else None
    okey = out.key if out is not None else None
    is_param = target.kind == "param"

    owned = target.kind in ("param", "local")

    def run(env: Any) -> None:
        cur = env.get(tkey)
        if not owned:  # op outputs may share memory with a read-only argument: copy before mutating
            cur = env.buf[tkey] = (cur[0].copy(), cur[1])
        fn(env, cur[0], cur[1], *[env.get(k) for k in keys])
        if is_param:
            env.bytes_out += cur[0].nbytes
        if okey is not None:
            env.buf[okey] = (cur[0].copy(), cur[1])

    tr.emit(opname, run, out, tile_elems=te, gm_write=is_param, target=target.name, ins=(tkey, *keys))
    return out


@op("scatter_update")
def scatter_update(input: Any, dim: int, index: Any, src: Any) -> Tensor:
    """In place: 4-D cache form input[idx//bs][idx%bs][0] = src[i][j][0]; 2-D form row index[i][j] <- src row
    i*s+j."""
    tr = require_tracer("scatter_update")
    A = reader(tr, input, "scatter_update")
    Ix = reader(tr, index, "scatter_update")
    S = reader(tr, src, "scatter_update")
    if Ix.dtype not in _IDX:
        raise tr.error("FC0001", "scatter_update: index must be INT32/INT64", op="scatter_update")
    if A.dim not in (2, 4):
        raise tr.error("FC0002", "scatter_update: input must be 2-D or 4-D", op="scatter_update")
    tile = current_scope()["vec_tile"]
    rows = static_shape(S.shape)
    if A.dim == 2 and tile and rows is not None and len(tile) >= 2:
        tr_rows, sr = tile[-2], rows[0]
        if tr_rows % sr and sr % tr_rows:
            tr.warn("EMU_SCATTER_TILE", f"scatter_update: tile rows {tr_rows} vs {sr} source rows (neither divides "
                    "the other) failed in the 0.2.0 oracle with FC1000 'tileshape 0 is invalid'", op="scatter_update")

    def fn(env: Any, arr: np.ndarray, v: tuple, i: tuple, s: tuple) -> None:
        idx = _full_valid(*i).astype(np.int64)
        sv = s[0]
        if arr.ndim == 4:
            bs = arr.shape[1]
            flat = idx.reshape(-1)
            _check_index(env, flat, arr.shape[0] * bs, "scatter_update")
            rows = sv.reshape(-1, sv.shape[-2], sv.shape[-1]) if sv.ndim == 4 else sv.reshape(flat.size, 1, -1)
            if rows.shape[0] != flat.size:
                raise env.error("EMU_SCATTER_SHAPE", f"scatter_update: {flat.size} indices but src has "
                                f"{rows.shape[0]} rows")
            arr[flat // bs, flat % bs] = rows
        else:
            flat = idx.reshape(-1)
            _check_index(env, flat, arr.shape[0], "scatter_update")
            rows = sv.reshape(-1, arr.shape[1])
            if rows.shape[0] < flat.size:
                raise env.error("EMU_SCATTER_SHAPE", f"scatter_update: {flat.size} indices but src has "
                                f"{rows.shape[0]} rows")
            arr[flat] = rows[: flat.size]

    return _inplace(tr, "scatter_update", A, [Ix, S], fn)


def _scatter_fn(ax: int, reduce: Any, scalar: Any) -> Callable[..., None]:
    def fn(env: Any, arr: np.ndarray, v: tuple, i: tuple, *s: tuple) -> None:
        idx = i[0].astype(np.int64)
        _check_index(env, idx, arr.shape[ax], "scatter")
        grids = list(np.indices(idx.shape, sparse=True))
        grids[ax] = idx
        val = s[0][0][tuple(slice(0, n) for n in idx.shape)] if s else np.full(idx.shape, scalar)
        val = val.astype(arr.dtype)
        if reduce is None:
            arr[tuple(grids)] = val
        elif reduce == "add":
            tmp = compute(arr).astype(np.float32) if arr.dtype.kind == "V" or arr.dtype.itemsize < 4 else arr
            np.add.at(tmp, tuple(grids), compute(val))
            arr[...] = tmp.astype(arr.dtype)
        elif reduce == "multiply":
            tmp = compute(arr).astype(np.float32) if arr.dtype.itemsize < 4 else arr
            np.multiply.at(tmp, tuple(grids), compute(val))
            arr[...] = tmp.astype(arr.dtype)
        else:
            raise env.error("F00002", f"scatter: reduce must be None, 'add' or 'multiply', got {reduce!r}",
                            kind="ValueError")

    return fn


def _scatter(opname: str, input: Any, dim: int, index: Any, src: Any, reduce: Any, inplace: bool) -> Any:
    tr = require_tracer(opname)
    A = reader(tr, input, opname)
    Ix = reader(tr, index, opname)
    ax = dim % A.dim
    others = [Ix]
    scalar = None
    if isinstance(src, Tensor):
        others.append(reader(tr, src, opname))
    else:
        scalar = src
    fn = _scatter_fn(ax, reduce, scalar)
    if inplace:
        return _inplace(tr, opname, A, others, fn)
    c = clone(A)
    c._written = True
    return _inplace(tr, opname, c, others, fn)


@op("scatter")
def scatter(input: Any, dim: int, index: Any, src: Any, *, reduce: Any = None) -> Tensor:
    """Out-of-place torch.scatter (src tensor or scalar; reduce None/'add'/'multiply')."""
    return _scatter("scatter", input, dim, index, src, reduce, False)


@op("scatter_")
def scatter_(input: Any, dim: int, index: Any, src: Any, *, reduce: Any = None) -> Tensor:
    """In-place torch.scatter_."""
    return _scatter("scatter_", input, dim, index, src, reduce, True)


def _index_add(opname: str, input: Any, dim: int, index: Any, source: Any, alpha: Any, inplace: bool) -> Any:
    tr = require_tracer(opname)
    A = reader(tr, input, opname)
    Ix = reader(tr, index, opname)
    S = reader(tr, source, opname)
    ax = dim % A.dim

    def fn(env: Any, arr: np.ndarray, v: tuple, i: tuple, s: tuple) -> None:
        idx = i[0].astype(np.int64).reshape(-1)
        _check_index(env, idx, arr.shape[ax], opname)
        tmp = compute(arr).astype(np.float32) if arr.dtype.kind != "i" else arr.copy()
        src_v = compute(s[0]) * alpha
        sl = [slice(None)] * arr.ndim
        sl[ax] = idx
        np.add.at(tmp, tuple(sl), src_v)
        arr[...] = tmp.astype(arr.dtype)

    if inplace:
        return _inplace(tr, opname, A, [Ix, S], fn)
    c = clone(A)
    return _inplace(tr, opname, c, [Ix, S], fn)


@op("index_add")
def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
    """torch.index_add (out of place)."""
    return _index_add("index_add", input, dim, index, source, alpha, False)


@op("index_add_")
def index_add_(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
    """torch.index_add_ (in place)."""
    return _index_add("index_add_", input, dim, index, source, alpha, True)


@op("index_put_")
def index_put_(input: Any, indices: Any, values: Any, accumulate: bool = False) -> None:
    """torch.index_put_ with a tuple of index tensors (in place, returns None)."""
    tr = require_tracer("index_put_")
    A = reader(tr, input, "index_put_")
    idx_ts = [reader(tr, t, "index_put_") for t in indices]
    V = reader(tr, values, "index_put_")
    n = len(idx_ts)

    def fn(env: Any, arr: np.ndarray, v: tuple, *rest: tuple) -> None:
        idx = tuple(r[0].astype(np.int64) for r in rest[:n])
        val = rest[n][0]
        for d, ix in enumerate(idx):
            _check_index(env, ix, arr.shape[d], "index_put_")
        if accumulate:
            tmp = compute(arr).astype(np.float32) if arr.dtype.kind != "i" else arr.copy()
            np.add.at(tmp, idx, compute(val))
            arr[...] = tmp.astype(arr.dtype)
        else:
            arr[idx] = val

    _inplace(tr, "index_put_", A, idx_ts + [V], fn, returns=False)
    return None


def _sort_common(tr: Tracer, opname: str, A: Tensor, k: int | None, largest: bool) -> tuple[Tensor, Tensor]:
    last = A.shape[-1]
    kk = k if k is not None else last
    shp = A.shape[:-1] + [kk]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        n = v[-1]
        x = compute(arr[..., :n])
        order = np.argsort(-x if largest else x, axis=-1, kind="stable")[..., :kk]
        vals = np.take_along_axis(arr[..., :n], order, axis=-1)
        vv = list(v[:-1]) + [min(kk, n)]
        order = order.astype(np.int32)
        if vals.shape[-1] < kk:
            full = tuple(vals.shape[:-1]) + (kk,)
            vals = _pad_to(vals, full)[0]
            order = _pad_to(order, full)[0]
        return [(vals, vv), (order, vv)]

    if A.dtype == DataType.DT_FP32 and (last if isinstance(last, int) else 0) * 4 >= 22 * 1024:
        tr.warn("EMU_TOPK_SIZE", "topk MERGE_SORT needs tile[-1]*4 < 22 KB", op=opname)
    vals, idx = simple_op(tr, opname, [A], [shp, shp], [A.dtype, DataType.DT_INT32],
                          fn, align_error=True)
    return vals, idx


@op("topk")
def topk(input: Any, k: int, dim: int = -1, largest: bool = True, algo: Any = None) -> tuple[Tensor, Tensor]:
    """(values, INT32 indices) of the k largest/smallest along the last axis (stable order)."""
    tr = require_tracer("topk")
    A = reader(tr, input, "topk")
    if dim % A.dim != A.dim - 1:
        raise tr.error("FC0002", "topk: only the last axis is supported", op="topk")
    last = A.shape[-1]
    if isinstance(last, int) and not 1 <= k <= last:
        raise tr.pyerror("ValueError", f"topk: k={k} must be in [1, {last}]", op="topk")
    return _sort_common(tr, "topk", A, k, largest)


@op("sort")
def sort(input: Any, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    """(values, INT32 indices) sorted along the last axis (stable)."""
    tr = require_tracer("sort")
    A = reader(tr, input, "sort")
    if dim % A.dim != A.dim - 1:
        raise tr.error("FC0002", "sort: only the last axis is supported", op="sort")
    return _sort_common(tr, "sort", A, None, descending)


@op("argsort")
def argsort(input: Any, dim: int = -1, descending: bool = False) -> Tensor:
    """INT32 indices that sort the last axis (stable)."""
    tr = require_tracer("argsort")
    A = reader(tr, input, "argsort")
    return _sort_common(tr, "argsort", A, None, descending)[1]


def _tri(opname: str, input: Any, diagonal: Any, lower: bool) -> Tensor:
    tr = require_tracer(opname)
    A = reader(tr, input, opname)

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        d = evaluate(diagonal, env)
        f = np.tril if lower else np.triu
        return [(f(arr, d), v)]

    return simple_op(tr, opname, [A], [A.shape], [A.dtype], fn)[0]


@op("tril")
def tril(input: Any, diagonal: Any = 0) -> Tensor:
    """Lower triangle of the last two axes."""
    return _tri("tril", input, diagonal, True)


@op("triu")
def triu(input: Any, diagonal: Any = 0) -> Tensor:
    """Upper triangle of the last two axes."""
    return _tri("triu", input, diagonal, False)


@op("pad")
def pad(input: Any, pad: Any, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Constant right/bottom padding (torch pad order: last axis first)."""
    tr = require_tracer("pad")
    A = reader(tr, input, "pad")
    if mode != "constant":
        raise tr.pyerror("ValueError", "pad: only mode='constant' is supported", op="pad")
    if value not in (0.0, float("inf"), float("-inf")):
        raise tr.pyerror("ValueError", "pad: value must be 0, inf or -inf", op="pad")
    p = list(pad)
    widths = [(0, 0)] * A.dim
    for i in range(0, len(p), 2):
        ax = A.dim - 1 - i // 2
        if p[i] != 0:
            raise tr.pyerror("ValueError", "pad: left/top padding must be 0", op="pad")
        widths[ax] = (0, int(p[i + 1]))
    shp = [s + w[1] for s, w in zip(A.shape, widths, strict=True)]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        res = np.pad(arr, widths, mode="constant", constant_values=value)
        return [(res, res.shape)]

    return simple_op(tr, "pad", [A], [shp], [A.dtype], fn)[0]


@op("fillpad")
def fillpad(input: Any, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Fill the region outside the valid shape with value (result fully valid)."""
    tr = require_tracer("fillpad")
    A = reader(tr, input, "fillpad")

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        res = np.full(arr.shape, value, dtype=np.float32).astype(arr.dtype)
        box = tuple(slice(0, n) for n in v)
        res[box] = arr[box]
        return [(res, res.shape)]

    return simple_op(tr, "fillpad", [A], [A.shape], [A.dtype], fn)[0]


@op("one_hot")
def one_hot(input: Any, num_classes: int) -> Tensor:
    """One-hot encoding along a new last axis (input dtype)."""
    tr = require_tracer("one_hot")
    A = reader(tr, input, "one_hot")

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        res = (arr[..., None] == np.arange(num_classes)).astype(arr.dtype)
        return [(res, list(v) + [num_classes])]

    return simple_op(tr, "one_hot", [A], [A.shape + [num_classes]], [A.dtype], fn)[0]


@op("deinterleave", method=False)
def deinterleave(x: Any, y: Any = None) -> tuple[Tensor, Tensor]:
    """(even, odd) elements of the last axis (of x, or of x and y concatenated per pair)."""
    tr = require_tracer("deinterleave")
    A = reader(tr, x, "deinterleave")
    last = A.shape[-1]
    shp = A.shape[:-1] + [last // 2 if isinstance(last, int) else last / 2]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        return [(np.ascontiguousarray(arr[..., 0::2]), list(v[:-1]) + [(v[-1] + 1) // 2]),
                (np.ascontiguousarray(arr[..., 1::2]), list(v[:-1]) + [v[-1] // 2])]

    a, b = simple_op(tr, "deinterleave", [A], [shp, shp], [A.dtype, A.dtype], fn)
    return a, b


@op("interleave", method=False)
def interleave(x: Any, y: Any) -> Tensor:
    """Interleave x and y along the last axis."""
    tr = require_tracer("interleave")
    A = reader(tr, x, "interleave")
    B = reader(tr, y, "interleave")
    last = A.shape[-1]
    shp = A.shape[:-1] + [last * 2]

    def fn(env: Any, a: tuple, b: tuple) -> list:
        res = np.stack([a[0], b[0]], axis=-1).reshape(a[0].shape[:-1] + (-1,))
        return [(res, list(a[1][:-1]) + [2 * min(a[1][-1], b[1][-1])])]

    return simple_op(tr, "interleave", [A, B], [shp], [A.dtype], fn)[0]
