"""Batched execution of independent loop iterations (the speed path).

A loop whose body is a single control path of batchable ops, whose views and assembles have offsets affine
in the loop index, and which carries no data from one iteration to the next (nothing the body writes is
read by the body, no whole-tensor moves) is executed for many iterations at once: every body tensor gets a
leading iteration axis, views become strided windows of the source, assembles write strided windows of
the destination. Only iterations whose views are fully valid and in bounds are batched (the tail runs
through the per-iteration interpreter, which owns all the checks). The result is bit-identical to the
per-iteration execution: each op computes the same elementwise/axis-wise numpy function.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from runtime.emulator._buffers import is_poison
from runtime.emulator._errors import EmulatorError
from runtime.emulator._numerics import to_bf16
from runtime.emulator.device._expr import compile_expr, compile_vector, depends_on, loop_coef
from runtime.emulator.device._kreg import KINDS, np_dtype
from runtime.emulator.device._prepare import XOp

__all__ = ["run_batched"]

_MIN_BATCH = 4


@dataclass
class _Geo:
    offs: list  # offset expressions
    coef: list[int]  # d offset / d loop index, per axis
    fns: list[Callable[[Any], Any]] = field(default_factory=list)
    """compiled scalar evaluators of ``offs``"""


@dataclass
class BatchPlan:
    items: list[Any]
    produced: set[int]
    invariant_reads: set[int]
    geo: dict[int, _Geo] = field(default_factory=dict)  # id(node) -> geometry
    place: dict[int, Any] = field(default_factory=dict)
    """id(op) -> the assemble right after it that consumes its result, which dies there (`_placement`)"""


def _analyse(node: Any) -> BatchPlan | bool:
    body = node.body
    if body is None or len(body.paths) != 1:
        return False
    items = body.paths[0].items
    if not items or any(type(it) is not XOp for it in items):
        return False
    produced: set[int] = set()
    reads: set[int] = set()
    written: set[int] = set()
    plan = BatchPlan(items=list(items), produced=produced, invariant_reads=set())
    lid = node.lid
    for it in items:
        kind = it.kind if it.kind in ("view", "assemble") else None
        p = it.params
        if kind is None and it.brun is None:
            return False
        if kind is None and _index_dependent(it, lid):
            return False  # a batched op evaluates its expressions once, at the first iteration
        if kind == "assemble":
            if p["src"] not in produced or not p["owned"] or p["parallel"]:
                return False
            coef = [loop_coef(o, lid) for o in p["offs"]]
            if any(c is None for c in coef):
                return False
            written.add(p["dst"])
            reads.add(p["src"])
            plan.geo[id(it)] = _Geo(p["offs"], [c for c in coef if c is not None],
                                    [compile_expr(o) for o in p["offs"]])
            continue
        if kind == "view":
            coef = [loop_coef(o, lid) for o in p["offs"]]
            if any(c is None for c in coef):
                return False
            if p["src"] in produced and any(coef):
                return False
            plan.geo[id(it)] = _Geo(p["offs"], [c for c in coef if c is not None],
                                    [compile_expr(o) for o in p["offs"]])
        for k in it.ins:
            reads.add(k)
        if it.out_key is not None:
            produced.add(it.out_key)
    if written & reads or written & produced:
        return False
    plan.invariant_reads = reads - produced
    for it, nxt in zip(items, items[1:], strict=False):
        if (it.kind in _PLACEABLE and nxt.kind == "assemble" and it.out_key is not None
                and nxt.params["src"] == it.out_key and it.out_key in nxt.free and not nxt.params.get("store_bf16")
                and sum(it.out_key in x.ins for x in items) == 1):
            plan.place[id(it)] = nxt
    return plan


_PLACEABLE = frozenset({"binary", "unary"})
"""kinds whose batched run may compute into the window of the assemble that consumes the result (`Env.place`)"""


def _index_dependent(it: Any, lid: int) -> bool:
    """Whether an op's expression parameters (shapes, diagonals, fill values ...) change with loop ``lid``."""
    for name, t in KINDS[it.kind].schema.items():
        v = it.params.get(name)
        if v is None:
            continue
        base = t.rstrip("?")
        if base == "expr" and depends_on(v, lid):
            return True
        if base == "exprs" and any(depends_on(x, lid) for x in v):
            return True
    return False


class _VecEnv:
    def __init__(self, sym: dict) -> None:
        self.sym = sym


def _views_full(plan: BatchPlan, env: Any, key: int, rng: range) -> int:
    """Number of leading iterations whose views are fully valid and inside their source (vectorised)."""
    n = len(rng)
    idx = np.arange(rng.start, rng.start + rng.step * n, rng.step, dtype=np.int64)
    venv = _VecEnv(dict(env.sym))
    venv.sym[key] = idx
    ok = np.ones(n, dtype=bool)
    for it in plan.items:
        if it.kind != "view":
            continue
        p = it.params
        shp = p["shape"]
        try:
            if p["src"] not in plan.produced:
                arr = env.buf[p["src"]][0]
                for d, o in enumerate(plan.geo[id(it)].offs):
                    ov = compile_vector(o)(venv)
                    ok &= (ov >= 0) & (ov + shp[d] <= arr.shape[d])
            for d, v in enumerate(p["vs"] or []):
                ok &= compile_vector(v)(venv) == shp[d]
        except (ValueError, TypeError, KeyError):
            return 0
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else n


def _strided(arr: np.ndarray, o0: list[int], coef: list[int], step: int, k: int, shape: tuple) -> np.ndarray:
    base = arr[tuple(slice(o, None) for o in o0)]
    lead = sum(c * step * s for c, s in zip(coef, arr.strides, strict=True))
    return as_strided(base, shape=(k, *shape), strides=(lead, *arr.strides), writeable=True)


def _account(env: Any, it: Any, k: int) -> None:
    env.ops[it.name] = env.ops.get(it.name, 0) + k
    env.count_param_reads(it, k)
    if it.out_key is None or it.name in ("assemble", "move", "setitem"):
        return
    v = env.buf.get(it.out_key)
    if v is None:
        return
    n = v[0].size
    env.elements += n
    if it.tile_elems:
        per = n // k if v[0].ndim and v[0].shape[0] == k else n
        env.tiles += k * max(1, math.ceil(per / it.tile_elems))


@dataclass
class _Batch:
    """State of one batched run: which storage keys carry the leading iteration axis."""

    plan: BatchPlan
    env: Any
    step: int
    kcount: int
    batched: set[int] = field(default_factory=set)


def _run_view(b: _Batch, it: Any) -> None:
    """A view: a strided window per iteration of its source (or of the batched source)."""
    env, p = b.env, it.params
    geo = b.plan.geo[id(it)]
    arr = env.buf[p["src"]][0]
    o0 = [f(env) for f in geo.fns]
    if p["src"] in b.batched:
        res = arr[(slice(None),) + tuple(slice(o, o + s) for o, s in zip(o0, p["shape"], strict=True))]
        b.batched.add(p["out"])
    elif any(geo.coef):
        res = _strided(arr, o0, geo.coef, b.step, b.kcount, tuple(p["shape"]))
        b.batched.add(p["out"])
    else:
        res = arr[tuple(slice(o, o + s) for o, s in zip(o0, p["shape"], strict=True))]
    env.buf[p["out"]] = (res, None)
    if p["param"]:
        env.bytes_in += res.nbytes if p["out"] in b.batched else res.nbytes * b.kcount


def _assemble_dst(b: _Batch, it: Any) -> np.ndarray:
    """The destination array of an assemble (a local's first write allocates it poisoned, as the interpreter does)."""
    env, p = b.env, it.params
    cur = env.buf.get(p["dst"])
    if cur is None:
        full = tuple(compile_expr(d)(env) for d in p["dshape"])
        cur = env.buf[p["dst"]] = (env.poison(full, np_dtype(p["ddtype"])), full)
    return cur[0]


def _window_error(b: _Batch, geo: _Geo, o0: list[int], shape: tuple, dst: np.ndarray) -> str | None:
    """Why the batch's assemble windows cannot be written at once (overlap, bounds), or None."""
    if not any(abs(c * b.step) >= s for c, s in zip(geo.coef, shape, strict=True)):
        return "overlapping assemble windows (fall back)"
    last = [o + c * b.step * (b.kcount - 1) for o, c in zip(o0, geo.coef, strict=True)]
    for d in range(len(shape)):
        lo, hi = min(o0[d], last[d]), max(o0[d], last[d]) + shape[d]
        if lo < 0 or hi > dst.shape[d]:
            return "assemble out of bounds (fall back)"
    return None


def _placement(b: _Batch, asm: Any) -> Callable[[tuple, np.dtype], np.ndarray | None]:
    """``Env.place`` for the op whose result ``asm`` assembles: ``(shape, dtype) ->`` the strided window of every
    iteration in the destination, when the op's result is batched with that dtype and the windows are what
    `_run_assemble` would write (in bounds, not overlapping, rows contiguous). Why: the result of the last op of
    a tile (sigmoid's tile, a normalised row) was a fresh multi-MB array copied into the output right after;
    computed in place it costs neither the array's page faults nor the copy. The ufunc is the same and its
    inner loop runs on unit-stride rows either way, so are the bits. A poison write into a kernel argument
    still falls back (the per-iteration run rewrites every window identically and reports it), except under
    ``poison_check="iteration"``, where nothing is placed: that run stops before the poisoned window."""
    env, p = b.env, asm.params
    geo = b.plan.geo[id(asm)]

    def place(shape: tuple, dt: np.dtype) -> np.ndarray | None:
        if p["param"] and env.options.check_poison and env.options.poison_check == "iteration":
            return None
        tile = tuple(shape[1:])
        if len(shape) != len(geo.offs) + 1 or shape[0] != b.kcount or not tile or 0 in tile:
            return None
        dst = _assemble_dst(b, asm)
        if dst.dtype != dt:
            return None
        o0 = [f(env) for f in geo.fns]
        if _window_error(b, geo, o0, tile, dst) is not None:
            return None
        view = _strided(dst, o0, geo.coef, b.step, b.kcount, tile)
        return view if view.strides[-1] == dst.itemsize or tile[-1] == 1 else None

    return place


def _same_window(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays are the same elements of the same memory (a result computed into its window)."""
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _run_assemble(b: _Batch, it: Any) -> None:
    """An assemble: every iteration's window written at once; anything unusual falls back (EMU_BATCH)."""
    env, p = b.env, it.params
    geo = b.plan.geo[id(it)]
    src = env.buf[p["src"]][0]
    dst = _assemble_dst(b, it)
    o0 = [f(env) for f in geo.fns]
    shape = src.shape[1:] if p["src"] in b.batched else src.shape
    why = _window_error(b, geo, o0, shape, dst)
    if why is not None:
        raise EmulatorError("EMU_BATCH", why)
    if p.get("store_bf16"):  # A2/A3: a BF16 value held in FP32 is rounded where it is written (`_promote`)
        src = to_bf16(src)
    if p["param"] and env.options.check_poison and is_poison(src):
        raise EmulatorError("EMU_BATCH", "poison (fall back for the precise error)")
    if src.dtype != dst.dtype and not (p.get("store_bf16") and src.dtype.name == "bfloat16"):
        raise EmulatorError("EMU_BATCH", "dtype mismatch (fall back)")
    view = _strided(dst, o0, geo.coef, b.step, b.kcount, shape)
    if not _same_window(view, src):  # else the op before computed straight into it (`_placement`)
        view[...] = src
    if env.masks is not None and p["dst"] in env.param_keys:
        env.wrote(p["dst"], None, None)
        m = env.masks.get(p["dst"])
        if m is None:
            m = env.masks[p["dst"]] = np.zeros(dst.shape, dtype=bool)
        _strided(m, o0, geo.coef, b.step, b.kcount, shape)[...] = True
    else:
        env.wrote(p["dst"])
    env.elements += view.size
    if p["param"]:
        env.bytes_out += view.nbytes


def _run_op(b: _Batch, it: Any) -> None:
    """Any other op runs its own batched implementation (``brun``, built by its kind)."""
    it.brun(b.env)
    if any(k in b.batched for k in it.ins) and it.out_key is not None:
        b.batched.add(it.out_key)


# geometry kinds whose batching the planner owns; every other op brings its own `brun`
_RULES = {"view": _run_view, "assemble": _run_assemble}


def run_batched(node: Any, env: Any, rng: range) -> int:
    """Execute a leading run of iterations in one batch; returns how many were done (0 = none)."""
    plan = node.plan
    if plan is None:
        plan = node.plan = _analyse(node)
    if plan is False:
        return 0
    assert isinstance(plan, BatchPlan)
    for k in plan.invariant_reads:
        v = env.buf.get(k)
        if v is None or tuple(v[1]) != v[0].shape:
            return 0
    key = node.lid
    kcount = _views_full(plan, env, key, rng)
    if kcount < _MIN_BATCH:
        return 0
    env.sym[key] = rng[0]
    saved = (dict(env.ops), env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops)
    batch = _Batch(plan, env, rng.step, kcount)
    if env.max_steps is not None:
        env.step(kcount * (len(plan.items) + 1))
    try:
        for it in plan.items:
            env.node = it
            asm = plan.place.get(id(it))
            if asm is not None:
                env.place = _placement(batch, asm)
                try:
                    _run_op(batch, it)
                finally:
                    env.place = None
            else:
                _RULES.get(it.kind, _run_op)(batch, it)
            if env.noisy:
                env.perturb_result(it)
            _account(env, it, kcount)
            for k in it.free:
                env.buf.pop(k, None)
    except EmulatorError:
        # fall back to the per-iteration interpreter (it owns the precise errors); the batch wrote nothing
        # that the sequential run will not write again identically, so only the counters are restored
        env.ops, env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops = saved
        return 0
    if kcount == len(rng):
        env.sym[key] = rng[kcount - 1]
        for k in plan.produced:
            v = env.buf.get(k)
            if v is None:
                continue
            arr = v[0][-1] if k in batch.batched else v[0]
            arr = np.array(arr, copy=True)
            env.buf[k] = (arr, arr.shape)
    return kcount
