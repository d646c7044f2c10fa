"""Device implementations of the transform and indexing ops: transpose, permute, concat, expand_clone, the
gather family, the in-place scatter family, sort/topk, tril/triu, pad, fillpad, one_hot, (de)interleave.

Most are "simple" ops: read their operands (array, valid shape), produce one or more outputs. The in-place
ones mutate their target's storage (copying first when the target may share memory with a read-only argument).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.emulator._numerics import compute
from runtime.emulator.device._kreg import kind

__all__ = ["check_index"]


def _simple(ins: list[int], outs: list[int], fn: Callable[..., list]) -> Callable[[Any], None]:
    def run(env: Any) -> None:
        res = fn(env, *[env.get(k) for k in ins])
        for k, (arr, valid) in zip(outs, res, strict=True):
            env.buf[k] = (arr, tuple(valid))

    return run


def _full_valid(arr: np.ndarray, valid: tuple) -> np.ndarray:
    if tuple(valid) == arr.shape:
        return arr
    return arr[tuple(slice(0, v) for v in valid)]


def _pad_to(env: Any, arr: np.ndarray, shape: tuple) -> tuple[np.ndarray, tuple]:
    if arr.shape == tuple(shape):
        return arr, arr.shape
    res = env.poison(tuple(shape), arr.dtype)
    res[tuple(slice(0, n) for n in arr.shape)] = arr
    return res, arr.shape


def _out_rank(op: Any) -> int | None:
    """Rank of the op's first output (``Op.types``), None when the program does not say."""
    types = getattr(op, "types", None)
    return int(types[0][1]) if types else None


def check_index(env: Any, idx: np.ndarray, n: int, opname: str, negative: bool = False) -> None:
    """An index out of ``[0, n)`` is an error, as in torch's index_select / gather / scatter / index_add ("index out
    of range in self"). Only ``index_put_`` (torch's advanced indexing) counts a negative index from the end
    (``negative``). s38 accident2: numpy's wrap let ``index_select(cache, 0, idx - N)`` - the slot counted from the
    end, Python's habit - pick the right rows and pass every verification."""
    low = -n if negative else 0
    if idx.size and (idx.min() < low or idx.max() >= n):
        raise env.error("EMU_INDEX_OOB", f"{opname}: index value out of range [{low}, {n}) "
                        f"(min {int(idx.min())}, max {int(idx.max())})")


@kind("transpose", {"src": "key", "out": "key", "d0": "int", "d1": "int"}, reads=("src",))
def build_transpose(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    d0, d1 = p["d0"], p["d1"]
    skey, okey, rank = p["src"], p["out"], _out_rank(op)

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        vv = list(v)
        vv[d0], vv[d1] = v[d1], v[d0]
        return [(np.ascontiguousarray(np.swapaxes(arr, d0, d1)), vv)]

    def brun(env: Any) -> None:
        arr = env.buf[skey][0]
        lead = arr.ndim - rank
        env.buf[okey] = (np.ascontiguousarray(np.swapaxes(arr, lead + d0, lead + d1)), None)

    return _simple([p["src"]], [p["out"]], fn), brun if rank is not None and d0 >= 0 and d1 >= 0 else None


@kind("permute", {"src": "key", "out": "key", "dims": "ints"}, reads=("src",))
def build_permute(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    dims = list(p["dims"])
    skey, okey, rank = p["src"], p["out"], _out_rank(op)

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        return [(np.ascontiguousarray(np.transpose(arr, dims)), [v[d] for d in dims])]

    def brun(env: Any) -> None:
        arr = env.buf[skey][0]
        lead = arr.ndim - len(dims)
        env.buf[okey] = (np.ascontiguousarray(np.transpose(arr, list(range(lead)) + [lead + d for d in dims])),
                         None)

    ok = rank == len(dims) and sorted(dims) == list(range(len(dims)))
    return _simple([p["src"]], [p["out"]], fn), brun if ok else None


@kind("concat", {"srcs": "keys", "out": "key", "ax": "int", "rank": "int"}, reads=("srcs",))
def build_concat(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    ax, r = p["ax"], p["rank"]

    def fn(env: Any, *vals: tuple) -> list:
        parts = []
        for i, (arr, v) in enumerate(vals):
            if v[ax] != arr.shape[ax]:
                raise env.error("EMU_CONCAT_VALID", f"concat: input {i} is not fully valid along dim {ax} "
                                f"(valid {v[ax]} of {arr.shape[ax]}); padding would land inside the result")
            parts.append(arr)
        if env.max_alloc is not None:
            env.check_alloc((sum(a.size for a in parts),), max((a.dtype.itemsize for a in parts), default=1))
        try:
            res = np.concatenate(parts, axis=ax)
        except ValueError as exc:
            raise env.error("FC0000", f"concat: {exc}") from None
        vv = list(res.shape)
        for d in range(r):
            if d != ax:
                vv[d] = min(v[d] for _, v in vals)
        return [(res, vv)]

    return _simple(list(p["srcs"]), [p["out"]], fn), None


@kind("expand_clone", {"src": "key", "out": "key", "shape": "exprs", "vs": "exprs?"}, reads=("src",))
def build_expand_clone(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    shp = cx.exprs(p["shape"])
    vs = cx.exprs(p["vs"]) if p["vs"] is not None else None

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        full = tuple(f(env) for f in shp)
        if env.max_alloc is not None:
            env.check_alloc(full, arr.dtype.itemsize)
        try:
            res = np.broadcast_to(arr, full).copy()
        except ValueError:
            raise env.error("FC0000", f"expand_clone: {list(arr.shape)} cannot expand to {list(full)}") from None
        if vs is not None:
            vv = [f(env) for f in vs]
        else:
            vv = [f if arr.shape[d] == 1 else v[d] for d, f in enumerate(full)]
        return [(res, vv)]

    return _simple([p["src"]], [p["out"]], fn), None


@kind("index_select", {"src": "key", "index": "key", "out": "key", "ax": "int"}, reads=("src", "index"))
def build_index_select(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    ax = p["ax"]

    def fn(env: Any, a: tuple, i: tuple) -> list:
        arr, v = a
        idx = _full_valid(*i)
        check_index(env, idx, v[ax], "index_select")
        if env.max_alloc is not None:
            env.check_alloc(arr.shape[:ax] + idx.shape + arr.shape[ax + 1:], arr.dtype.itemsize)
        res = np.take(arr, idx.astype(np.int64), axis=ax)
        vv = list(v[:ax]) + list(idx.shape) + list(v[ax + 1:])
        # a tail block's index tile: the rows it selects, in a tile of the index tile's extent (poison below, as
        # `gather`). It was the valid rows alone, and the next op with a full-tile operand failed (s32 fidelity: an
        # embedding lookup times a [TB, 1] weight - FC0000 [3, 32] vs [8, 1]; the wheel compiles it)
        res, _ = _pad_to(env, res, arr.shape[:ax] + i[0].shape + arr.shape[ax + 1:])
        return [(res, vv)]

    return _simple([p["src"], p["index"]], [p["out"]], fn), None


@kind("gather", {"src": "key", "index": "key", "out": "key", "ax": "int"}, reads=("src", "index"))
def build_gather(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    ax = p["ax"]

    def fn(env: Any, a: tuple, i: tuple) -> list:
        arr, v = a
        idx = _full_valid(*i).astype(np.int64)  # an index tile's padding picks nothing (a tail block's last tile)
        check_index(env, idx, v[ax], "gather")
        src = arr[tuple(slice(0, idx.shape[d]) if d != ax else slice(None) for d in range(arr.ndim))]
        return [_pad_to(env, np.take_along_axis(src, idx, axis=ax), i[0].shape)]

    return _simple([p["src"], p["index"]], [p["out"]], fn), None


@kind("gathermask", {"src": "key", "out": "key", "k": "int", "s": "int"},
      check=lambda p: None if 0 <= p["k"] < p["s"] <= 4 else "gathermask pattern out of range", reads=("src",))
def build_gathermask(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    k, s = p["k"], p["s"]
    skey, okey = p["src"], p["out"]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        return [(np.ascontiguousarray(arr[..., k::s]), list(v[:-1]) + [(v[-1] - k + s - 1) // s])]

    def brun(env: Any) -> None:  # the last axis: the same with leading iteration axes
        env.buf[okey] = (np.ascontiguousarray(env.buf[skey][0][..., k::s]), None)

    return _simple([p["src"]], [p["out"]], fn), brun


# ---- in-place ops -------------------------------------------------------------------------------------

def _scatter_update(env: Any, arr: np.ndarray, v: tuple, i: tuple, s: tuple) -> None:
    idx = _full_valid(*i).astype(np.int64)
    sv = s[0]
    if arr.ndim == 4:
        bs = arr.shape[1]
        flat = idx.reshape(-1)
        check_index(env, flat, arr.shape[0] * bs, "scatter_update")
        rows = sv.reshape(-1, sv.shape[-2], sv.shape[-1]) if sv.ndim == 4 else sv.reshape(flat.size, 1, -1)
        if rows.shape[0] != flat.size:
            raise env.error("EMU_SCATTER_SHAPE", f"scatter_update: {flat.size} indices but src has "
                            f"{rows.shape[0]} rows")
        arr[flat // bs, flat % bs] = rows
    else:
        flat = idx.reshape(-1)
        check_index(env, flat, arr.shape[0], "scatter_update")
        rows = sv.reshape(-1, arr.shape[1])
        if rows.shape[0] < flat.size:
            raise env.error("EMU_SCATTER_SHAPE", f"scatter_update: {flat.size} indices but src has "
                            f"{rows.shape[0]} rows")
        arr[flat] = rows[: flat.size]


def _scatter_fn(ax: int, reduce: Any, scalar: Any) -> Callable[..., None]:
    def fn(env: Any, arr: np.ndarray, v: tuple, i: tuple, *s: tuple) -> None:
        idx = _full_valid(*i).astype(np.int64)  # only the index tile's valid entries scatter
        check_index(env, idx, arr.shape[ax], "scatter")
        grids: list[Any] = list(np.indices(idx.shape, sparse=True))
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


def _index_add_fn(ax: int, alpha: Any, opname: str) -> Callable[..., None]:
    def fn(env: Any, arr: np.ndarray, v: tuple, i: tuple, s: tuple) -> None:
        idx = _full_valid(*i).astype(np.int64).reshape(-1)  # only the valid entries, and their source slices
        check_index(env, idx, arr.shape[ax], opname)
        tmp = compute(arr).astype(np.float32) if arr.dtype.kind != "i" else arr.copy()
        src = s[0]
        if src.ndim > ax and src.shape[ax] > idx.size and i[0].size != idx.size:
            src = src[(slice(None),) * ax + (slice(0, idx.size),)]
        src_v = compute(src) * alpha
        sl: list[Any] = [slice(None)] * arr.ndim
        sl[ax] = idx
        np.add.at(tmp, tuple(sl), src_v)
        arr[...] = tmp.astype(arr.dtype)

    return fn


def _index_put_fn(n: int, accumulate: bool) -> Callable[..., None]:
    def fn(env: Any, arr: np.ndarray, v: tuple, *rest: tuple) -> None:
        idx = tuple(_full_valid(*r).astype(np.int64) for r in rest[:n])  # only the valid entries
        val = rest[n][0]
        full = rest[0][0].shape
        if idx and idx[0].shape != full and val.shape[:len(full)] == full:  # and the values they index
            val = val[tuple(slice(0, k) for k in idx[0].shape)]
        for d, ix in enumerate(idx):
            check_index(env, ix, arr.shape[d], "index_put_", negative=True)
        if accumulate:
            tmp = compute(arr).astype(np.float32) if arr.dtype.kind != "i" else arr.copy()
            np.add.at(tmp, idx, compute(val))
            arr[...] = tmp.astype(arr.dtype)
        else:
            arr[idx] = val

    return fn


def _check_inplace(p: dict[str, Any]) -> str | None:
    f, n = p["fn"], len(p["others"])
    if f == "scatter_update" and n != 2 or f == "index_add" and n != 2:
        return f"{f} needs index and source"
    if f == "scatter" and n not in (1, 2):
        return "scatter needs an index and an optional source"
    if f == "index_put" and n < 1:
        return "index_put needs values"
    if f not in ("scatter_update", "scatter", "index_add", "index_put"):
        return f"unknown in-place function {f!r}"
    return None


@kind("inplace", {"target": "key", "others": "keys", "out": "key?", "fn": "str", "ax": "int", "reduce": "str?",
                  "scalar": "num?", "alpha": "num?", "accumulate": "bool", "opname": "str", "param": "bool",
                  "owned": "bool"},
      check=_check_inplace, reads=("others",), writes=("target",))
def build_inplace(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    f = p["fn"]
    fn: Callable[..., None]
    if f == "scatter_update":
        fn = _scatter_update
    elif f == "scatter":
        fn = _scatter_fn(p["ax"], p["reduce"], p["scalar"])
    elif f == "index_add":
        fn = _index_add_fn(p["ax"], p["alpha"], p["opname"])
    else:
        fn = _index_put_fn(len(p["others"]) - 1, p["accumulate"])
    tkey, keys, okey, is_param, owned = p["target"], list(p["others"]), p["out"], p["param"], p["owned"]

    def run(env: Any) -> None:
        cur = env.get(tkey)
        if not owned:  # op outputs may share memory with a read-only argument: copy before mutating
            cur = env.buf[tkey] = (cur[0].copy(), cur[1])
        fn(env, cur[0], cur[1], *[env.get(k) for k in keys])
        env.wrote(tkey, None, cur[0])
        if is_param:
            env.bytes_out += cur[0].nbytes
        if okey is not None:
            env.buf[okey] = (cur[0].copy(), cur[1])

    return run, None


# ---- sort / misc --------------------------------------------------------------------------------------

@kind("sort", {"src": "key", "vals": "key", "idx": "key", "kk": "int?", "largest": "bool", "axis": "int?"},
      reads=("src",), produces=("vals", "idx"))
def build_sort(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    largest, kk, axis = p["largest"], p["kk"], p.get("axis")

    def fn(env: Any, a: tuple) -> list:
        if axis is not None:  # argsort along another axis: the same sort with that axis moved last, and back
            arr, v = a
            vm = [*v[:axis], *v[axis + 1:], v[axis]]
            res = fn_last(env, (np.moveaxis(arr, axis, -1), vm))
            return [(np.moveaxis(r, -1, axis), [*rv[:axis], rv[-1], *rv[axis:-1]]) for r, rv in res]
        return fn_last(env, a)

    def fn_last(env: Any, a: tuple) -> list:
        arr, v = a
        if kk is None:  # a dynamic last axis: the slice below needs an int (as in the traced closure)
            raise TypeError("slice indices must be integers or None or have an __index__ method")
        n = v[-1]
        x = compute(arr[..., :n])
        order = np.argsort(-x if largest else x, axis=-1, kind="stable")[..., :kk]
        vals = np.take_along_axis(arr[..., :n], order, axis=-1)
        vv = list(v[:-1]) + [min(kk, n)]
        order = order.astype(np.int32)
        if vals.shape[-1] < kk:
            full = tuple(vals.shape[:-1]) + (kk,)
            vals = _pad_to(env, vals, full)[0]
            order = _pad_to(env, order, full)[0]
        return [(vals, vv), (order, vv)]

    return _simple([p["src"]], [p["vals"], p["idx"]], fn), None


@kind("tri", {"src": "key", "out": "key", "diagonal": "expr", "lower": "bool"}, reads=("src",))
def build_tri(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    diag = cx.expr(p["diagonal"])
    f = np.tril if p["lower"] else np.triu
    skey, okey, rank = p["src"], p["out"], _out_rank(op)

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        return [(f(arr, diag(env)), v)]

    def brun(env: Any) -> None:  # numpy's tril/triu work on the last two axes whatever leads them
        env.buf[okey] = (f(env.buf[skey][0], diag(env)), None)

    return _simple([p["src"]], [p["out"]], fn), brun if rank is not None and rank >= 2 else None


@kind("pad", {"src": "key", "out": "key", "widths": "ints", "value": "num"},
      check=lambda p: None if all(0 <= w <= 1 << 20 for w in p["widths"]) else "pad width out of range",
      reads=("src",))
def build_pad(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    widths = [(0, int(w)) for w in p["widths"]]
    value = p["value"]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        if env.max_alloc is not None:
            env.check_alloc(tuple(s + w[1] for s, w in zip(arr.shape, widths, strict=False)), arr.dtype.itemsize)
        res = np.pad(arr, widths, mode="constant", constant_values=value)
        # the valid part: an axis valid to the tile's end grows by its pad width, a partly valid one (a tail block's
        # rows) keeps its valid extent - the whole padded tile was valid, and a tail block's padding rows reached
        # the output (s32 fidelity: EMU_ASSEMBLE_OOB on a kernel the wheel compiles)
        vv = tuple(n + w if n == s else n for n, s, (_, w) in zip(v, arr.shape, widths, strict=True))
        return [(res, vv)]

    return _simple([p["src"]], [p["out"]], fn), None


@kind("fillpad", {"src": "key", "out": "key", "value": "num"}, reads=("src",))
def build_fillpad(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    value = p["value"]
    skey, okey = p["src"], p["out"]

    def brun(env: Any) -> None:  # a batch holds fully valid tiles only: no padding to fill
        env.buf[okey] = (env.buf[skey][0].copy(), None)

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        res = np.full(arr.shape, value, dtype=np.float32).astype(arr.dtype)
        box = tuple(slice(0, n) for n in v)
        res[box] = arr[box]
        return [(res, res.shape)]

    return _simple([p["src"]], [p["out"]], fn), brun


@kind("one_hot", {"src": "key", "out": "key", "num_classes": "int"},
      check=lambda p: None if 0 <= p["num_classes"] <= 1 << 20 else "num_classes out of range", reads=("src",))
def build_one_hot(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    num_classes = p["num_classes"]

    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        if env.max_alloc is not None:
            env.check_alloc(arr.shape + (num_classes,), arr.dtype.itemsize)
        res = (arr[..., None] == np.arange(num_classes)).astype(np.int64)  # DT_INT64, as the wheel
        return [(res, list(v) + [num_classes])]

    return _simple([p["src"]], [p["out"]], fn), None


@kind("deinterleave", {"src": "key", "even": "key", "odd": "key"}, reads=("src",), produces=("even", "odd"))
def build_deinterleave(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    def fn(env: Any, a: tuple) -> list:
        arr, v = a
        return [(np.ascontiguousarray(arr[..., 0::2]), list(v[:-1]) + [(v[-1] + 1) // 2]),
                (np.ascontiguousarray(arr[..., 1::2]), list(v[:-1]) + [v[-1] // 2])]

    return _simple([p["src"]], [p["even"], p["odd"]], fn), None


@kind("interleave", {"a": "key", "b": "key", "out": "key"}, reads=("a", "b"))
def build_interleave(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    def fn(env: Any, a: tuple, b: tuple) -> list:
        res = np.stack([a[0], b[0]], axis=-1).reshape(a[0].shape[:-1] + (-1,))
        return [(res, list(a[1][:-1]) + [2 * min(a[1][-1], b[1][-1])])]

    return _simple([p["a"], p["b"]], [p["out"]], fn), None
