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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from runtime.emulator._buffers import Env, eval_shape, is_poison, poison_array
from runtime.emulator._errors import EmulatorError
from runtime.emulator._ir import LoopNode, OpNode
from runtime.emulator._symbolic import SymbolicScalar, evaluate_vector, linear_form

__all__ = ["run_batched"]

_MIN_BATCH = 4


@dataclass
class _Geo:
    offs: list  # offset expressions (int | SymbolicScalar)
    coef: list[int]  # d offset / d loop index, per axis


@dataclass
class BatchPlan:
    items: list[OpNode]
    produced: set[int]
    invariant_reads: set[int]
    geo: dict[int, _Geo] = field(default_factory=dict)  # id(node) -> geometry


def _depends_on(x: Any, loop: Any) -> bool:
    if not isinstance(x, SymbolicScalar) or x._value is not None:
        return False
    if x._kind == "idx":
        return x._loop is loop
    if x._kind == "rt":
        return True  # opaque (tensor reads, loop flags): treat as dependent
    if x._kind == "bin":
        return _depends_on(x._a, loop) or _depends_on(x._b, loop)
    return False


def _coef(expr: Any, loop: Any) -> int | None:
    """Coefficient of the loop index in an affine offset, or None if not affine in it."""
    if not _depends_on(expr, loop):
        return 0
    lf = linear_form(expr)
    if lf is None:
        return None
    coef = 0
    for atom, c in lf[0].values():
        if isinstance(atom, SymbolicScalar) and atom._kind == "idx" and atom._loop is loop:
            coef += c
        elif _depends_on(atom, loop):
            return None
    return coef


def _analyse(node: LoopNode) -> BatchPlan | bool:
    body = node.body
    if body is None or len(body.paths) != 1:
        return False
    items = body.paths[0].items
    if not items or any(type(it) is not OpNode for it in items):
        return False
    produced: set[int] = set()
    reads: set[int] = set()
    written: set[int] = set()
    plan = BatchPlan(items=list(items), produced=produced, invariant_reads=set())
    loop = node.loop
    for it in items:
        info = it.info
        kind = info["kind"] if info else None
        if kind is None and it.brun is None:
            return False
        if kind == "assemble":
            if info["src"] not in produced or not info.get("owned") or info.get("parallel"):
                return False
            coef = [_coef(o, loop) for o in info["offs"]]
            if any(c is None for c in coef):
                return False
            written.add(info["dst"])
            reads.add(info["src"])
            plan.geo[id(it)] = _Geo(info["offs"], [c for c in coef if c is not None])  # none is None here
            continue
        if kind == "view":
            coef = [_coef(o, loop) for o in info["offs"]]
            if any(c is None for c in coef):
                return False
            if info["src"] in produced and any(coef):
                return False
            plan.geo[id(it)] = _Geo(info["offs"], [c for c in coef if c is not None])  # none is None here
        for k in it.ins:
            reads.add(k)
        if it.out_key is not None:
            produced.add(it.out_key)
    if written & reads or written & produced:
        return False
    plan.invariant_reads = reads - produced
    return plan


class _VecEnv:
    def __init__(self, sym: dict) -> None:
        self.sym = sym


def _views_full(plan: BatchPlan, env: Env, key: int, rng: range) -> int:
    """Number of leading iterations whose views are fully valid and inside their source (vectorised)."""
    n = len(rng)
    idx = np.arange(rng.start, rng.start + rng.step * n, rng.step, dtype=np.int64)
    venv = _VecEnv(dict(env.sym))
    venv.sym[key] = idx
    ok = np.ones(n, dtype=bool)
    for it in plan.items:
        info = it.info
        if not info or info["kind"] != "view":
            continue
        shp = info["shape"]
        try:
            if info["src"] not in plan.produced:
                arr = env.buf[info["src"]][0]
                for d, o in enumerate(plan.geo[id(it)].offs):
                    ov = evaluate_vector(o, venv)
                    ok &= (ov >= 0) & (ov + shp[d] <= arr.shape[d])
            for d, v in enumerate(info["vs"] or []):
                ok &= evaluate_vector(v, venv) == shp[d]
        except (ValueError, TypeError, KeyError):
            return 0
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else n


def _strided(arr: np.ndarray, o0: list[int], coef: list[int], step: int, k: int, shape: tuple) -> np.ndarray:
    base = arr[tuple(slice(o, None) for o in o0)]
    lead = sum(c * step * s for c, s in zip(coef, arr.strides, strict=True))
    return as_strided(base, shape=(k, *shape), strides=(lead, *arr.strides), writeable=True)


def _account(env: Env, it: OpNode, k: int) -> None:
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
    env: Env
    step: int
    kcount: int
    batched: set[int] = field(default_factory=set)


def _run_view(b: _Batch, it: OpNode) -> None:
    """A view: a strided window per iteration of its source (or of the batched source)."""
    env, info = b.env, it.info
    assert info is not None
    geo = b.plan.geo[id(it)]
    arr = env.buf[info["src"]][0]
    o0 = [o.evaluate(env) if isinstance(o, SymbolicScalar) else int(o) for o in geo.offs]
    if info["src"] in b.batched:
        res = arr[(slice(None),) + tuple(slice(o, o + s) for o, s in zip(o0, info["shape"], strict=True))]
        b.batched.add(info["okey"])
    elif any(geo.coef):
        res = _strided(arr, o0, geo.coef, b.step, b.kcount, info["shape"])
        b.batched.add(info["okey"])
    else:
        res = arr[tuple(slice(o, o + s) for o, s in zip(o0, info["shape"], strict=True))]
    env.buf[info["okey"]] = (res, None)
    if info["param"]:
        env.bytes_in += res.nbytes if info["okey"] in b.batched else res.nbytes * b.kcount


def _run_assemble(b: _Batch, it: OpNode) -> None:
    """An assemble: every iteration's window written at once; anything unusual falls back (EMU_BATCH)."""
    env, info = b.env, it.info
    assert info is not None
    geo = b.plan.geo[id(it)]
    src = env.buf[info["src"]][0]
    cur = env.buf.get(info["dst"])
    if cur is None:  # first write of a local: allocate it poisoned, like the interpreter does
        full = eval_shape(info["dshape"], env)
        cur = env.buf[info["dst"]] = (poison_array(full, info["ddtype"]), full)
    dst = cur[0]
    o0 = [o.evaluate(env) if isinstance(o, SymbolicScalar) else int(o) for o in geo.offs]
    shape = src.shape[1:] if info["src"] in b.batched else src.shape
    if not any(abs(c * b.step) >= s for c, s in zip(geo.coef, shape, strict=True)):
        raise EmulatorError("EMU_BATCH", "overlapping assemble windows (fall back)")
    last = [o + c * b.step * (b.kcount - 1) for o, c in zip(o0, geo.coef, strict=True)]
    for d in range(len(shape)):
        lo, hi = min(o0[d], last[d]), max(o0[d], last[d]) + shape[d]
        if lo < 0 or hi > dst.shape[d]:
            raise EmulatorError("EMU_BATCH", "assemble out of bounds (fall back)")
    if info["param"] and info["check"] and is_poison(src):
        raise EmulatorError("EMU_BATCH", "poison (fall back for the precise error)")
    if src.dtype != dst.dtype:
        raise EmulatorError("EMU_BATCH", "dtype mismatch (fall back)")
    view = _strided(dst, o0, geo.coef, b.step, b.kcount, shape)
    view[...] = src
    env.elements += view.size
    if info["param"]:
        env.bytes_out += view.nbytes


def _run_op(b: _Batch, it: OpNode) -> None:
    """Any other op runs its own batched implementation (``brun``, registered by the op when it records)."""
    assert it.brun is not None  # _analyse admits only ops that have one
    it.brun(b.env, None)
    if any(k in b.batched for k in it.ins) and it.out_key is not None:
        b.batched.add(it.out_key)


# geometry kinds whose batching the planner owns; every other op brings its own `brun`
_RULES = {"view": _run_view, "assemble": _run_assemble}


def run_batched(node: LoopNode, env: Env, rng: range) -> int:
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
    key = id(node.loop)
    kcount = _views_full(plan, env, key, rng)
    if kcount < _MIN_BATCH:
        return 0
    env.sym[key] = rng[0]
    saved = (dict(env.ops), env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops)
    batch = _Batch(plan, env, rng.step, kcount)
    try:
        for it in plan.items:
            env.node = it
            kind = it.info["kind"] if it.info else None
            _RULES.get(kind or "", _run_op)(batch, it)
            env.perturb_result(it)
            _account(env, it, kcount)
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
