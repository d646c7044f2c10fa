"""Lanes: the iterations of a loop whose body holds nested loops and guards, run side by side.

Why: the batch executor (`_batch`) and the carried-loop prefix (`_carry`) take a loop whose body is one path of
ops. Attention-style kernels put the parallel loop outside: flash_attention_score_grad loops over batch and heads,
and inside each head over query and key blocks, with ``is_loop_begin`` / ``is_loop_end`` accumulators - so every
head ran op by op (~15-50 us of Python per op on 128 x 128 tiles), although the heads never read each other's data.

What: a loop (the *lane loop*) of at least four iterations whose body the batch executor refuses runs all its
iterations at once, as lanes: each value gets a leading lane axis, and the body - its nested loops and guards
included - is walked once, every op running its batched implementation (``brun``) on the stacked tiles. This holds
when the lanes are independent and take the same control path, which is checked:

* statically (`analyse`): no nested loop is one the batch executor takes whole (batching its iterations beats
  walking them for a few lanes: sigmoid's 32 tiles of a row); every op has a ``brun`` (or is a view, an assemble,
  a move into a local, or a carry, or reads nothing that differs between lanes - gated_delta_rule's
  ``state = full(...)`` - and runs once for all) and no expression parameter depending on the lane index; nested loop bounds and guards depend neither on the
  lane index nor on tensor data (flags of nested loops are allowed: they are the same in every lane); an assemble
  writes a tensor the body never reads, and nothing else writes a tensor from outside the body;
* at run time: every view is a whole tile (valid shape = shape, inside its source) whose offsets are affine in
  the lane index (evaluated for every lane, so symbolic strides such as ``(b * 8 + n) * S`` work); a value the
  body makes or writes is read only after this pass made or wrote it (else it carries from one iteration to the
  next); a move writes a whole local; the windows different lanes assemble into one tensor lie in disjoint slabs
  (one axis on which each lane's writes span at most the lane stride) - so the order of the writes, which lanes
  change, cannot matter; no value read from outside shares memory with a written tensor.

Anything else - or any error, warning or poison on the way - abandons the pass: counters, warnings, loop trips and
the buffers of the body's values are restored, and the loop runs per iteration from the first lane not done,
which owns the precise errors. What the pass wrote into outputs the per-iteration run writes again, identically.

Bit-identical to the per-iteration run: each op is the batch executor's (same ufunc or BLAS call per element /
per matrix); counters are counted per lane. Lanes are run in groups of at most `MAX_LANES` (memory: each lane
value is ``MAX_LANES`` tiles), each group a pass of its own. ``PTO_FORGE_EMU_LANES=0`` turns lanes off (the
comparison tests run both ways). A body whose views take tiles above 1 MB (as float32) is left per iteration (each op's
arithmetic then outweighs its Python, and a lane value would be lanes x that size); larger tiles get fewer lanes a
pass (`_LANE_BYTES`).
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime.emulator._buffers import is_poison
from runtime.emulator._numerics import to_bf16
from runtime.emulator.device._batch import _account, _Batch, _index_dependent, _strided, _VecEnv
from runtime.emulator.device._batch import _analyse as _batch_analyse
from runtime.emulator.device._expr import compile_expr, compile_vector, depends_on
from runtime.emulator.device._kreg import np_dtype
from runtime.emulator.device._prepare import XGuard, XLoop, XOp, XRegion

__all__ = ["ENABLED", "MAX_LANES", "LanePlan", "analyse", "run_lanes"]

log = logging.getLogger(__name__)

ENABLED = os.environ.get("PTO_FORGE_EMU_LANES", "1") != "0"
MAX_LANES = 32
"""lanes per pass: each value of the body is held for this many iterations at once"""
_MAX_TILE_BYTES = 1 << 20
"""a body whose views take tiles above this (as float32) is left per iteration: its ops' arithmetic outweighs the
Python lanes save, and each lane value would be lanes x that size"""
_LANE_BYTES = 128 << 20
"""a pass takes at most this many bytes / (16 x its largest view tile) lanes: ~16 values of the body live at once"""
_MAX_ABANDONED = 3
"""passes abandoned before a loop is no longer offered to lanes (its prepared form is kept across calls)"""
_WRITERS = frozenset({"assemble", "move", "carry"})
_FRESH = frozenset({"binary", "unary", "where", "cast", "reduce", "var", "cumsum", "cumprod", "softmax", "rms_norm",
                    "matmul", "fill", "arange", "clone", "expand_clone", "concat", "index_select", "gather",
                    "gathermask", "sort", "one_hot", "view_dtype"})
"""kinds whose result is a new array (or one written over a dead operand nothing else holds, `_k_math.scratch`):
never a view of an operand, so a write into it reaches nothing it was made from. Every other kind (view, reshape,
unsqueeze, carry, transpose of a tile already in that layout ...) is taken to alias its operands."""


class _Abandon(Exception):
    """The pass cannot go on as lanes: the loop runs per iteration from the group's first lane."""


@dataclass
class LanePlan:
    """What `analyse` found: the body's made and written values, what it reads from outside, where it writes."""

    made: frozenset[int]
    """values the body produces or writes in place (closed over what they are views of): read only once fresh"""
    outside_reads: frozenset[int]
    """values read from outside the body"""
    out_dsts: frozenset[int]
    """tensors the body assembles into (never read by it)"""
    vec: dict[int, list] = field(default_factory=dict)
    """id(view/assemble) -> per offset: (depends on the lane index, vector evaluator, scalar evaluator)"""
    vs: dict[int, list] = field(default_factory=dict)
    """id(view) -> its valid-extent evaluators, as ``vec``"""
    abandoned: int = 0
    max_lanes: int = MAX_LANES
    """lanes per pass: `MAX_LANES`, fewer for larger tiles (`_LANE_BYTES`)"""


def _lane_dependent(e: Any, lid: int) -> bool:
    """A guard or loop bound that may differ between lanes: the lane index, its loop flags, or tensor data."""
    if type(e) is int:
        return False
    tag = e[0]
    if tag == "idx":
        return e[1] == lid
    if tag == "flag":
        return e[2] == lid
    if tag == "read":
        return True
    if tag == "bin":
        return _lane_dependent(e[2], lid) or _lane_dependent(e[3], lid)
    return False


def _has_leaf(e: Any) -> bool:
    """Whether an offset holds a run-time leaf (a tensor read or a loop flag): not evaluated per lane."""
    if type(e) is int:
        return False
    if e[0] in ("read", "flag"):
        return True
    return e[0] == "bin" and (_has_leaf(e[2]) or _has_leaf(e[3]))


def _regions(region: XRegion, out: list[tuple[XRegion, list]]) -> bool:
    """Every region of the body with its items (all paths, nested loops included); False if a loop's bounds or a
    guard differ between lanes is decided by the caller - this only collects."""
    for p in region.paths:
        out.append((region, p.items))
        for it in p.items:
            if type(it) is XLoop and not _regions(it.body, out):
                return False
    return True


def _no(node: XLoop, why: str) -> bool:
    """Refuse a loop, saying why at debug level (``runtime.emulator.device._lanes``)."""
    log.debug("loop %s does not run as lanes: %s", node.name, why)
    return False


def analyse(node: XLoop) -> LanePlan | bool:
    """The loop's lane plan, or False when its body cannot run as lanes (see the module docstring)."""
    lid = node.lid
    found: list[tuple[XRegion, list]] = []
    _regions(node.body, found)
    ops: list[XOp] = []
    for _, items in found:
        for it in items:
            t = type(it)
            if t is XGuard:
                if it.expr is None or _lane_dependent(it.expr, lid):
                    return _no(node, "a guard that may differ between lanes")
            elif t is XLoop:
                lp = it.lp
                if any(_lane_dependent(e, lid) for e in (lp.start, lp.stop, lp.step)):
                    return _no(node, f"loop {it.name}'s bounds may differ between lanes")
                if _batch_analyse(it) is not False:
                    return _no(node, f"the batch takes loop {it.name} whole")  # the batch executor takes the nested loop whole (sigmoid's row of 32 tiles)
            elif t is XOp:
                ops.append(it)
            else:
                return _no(node, "an unknown item")
    if not any(it.kind in ("view", "assemble") and any(depends_on(o, lid) for o in it.params["offs"])
               for it in ops):
        return _no(node, "no view or assemble moves with the lane index")
    produced: set[int] = set()
    writes: set[int] = set()
    made_from: dict[int, set[int]] = {}
    reads: set[int] = set()
    dsts: set[int] = set()
    for it in ops:
        op, kind, p = it.op, it.kind, it.params
        if kind == "view":
            if any(_has_leaf(o) for o in p["offs"]) or any(_has_leaf(v) for v in (p["vs"] or ())):
                return _no(node, "a view whose window is read from a tensor or a loop flag")
        elif kind == "assemble":
            if not p["owned"] or p["parallel"] or any(_has_leaf(o) for o in p["offs"]):
                return _no(node, "an assemble that is parallel, not owned, or placed by a tensor read")
            if any(depends_on(d, lid) for d in p["dshape"]):
                return _no(node, "an assemble destination sized by the lane index")
            dsts.add(p["dst"])
        elif kind == "move":
            if p["param"] or any(depends_on(d, lid) for d in p["dshape"]):
                return _no(node, "a move into a kernel argument")
        elif kind == "carry":
            pass
        elif _index_dependent(it, lid):
            return _no(node, f"{it.name}'s parameters depend on the lane index")
        if op.writes and kind not in _WRITERS:
            return _no(node, f"{it.name} writes in place")
        outs = set(op.outs)
        if it.out_key is not None and not op.writes:
            outs.add(it.out_key)
        produced |= outs
        if kind not in _FRESH:
            for k in outs:
                made_from.setdefault(k, set()).update(op.ins)
        if kind != "assemble":
            writes.update(op.writes)
        if kind == "carry":
            writes.update(op.ins)
        reads.update(op.ins)
    todo = list(writes)
    while todo:  # a value written in place may be a view of what it was made from
        for k in made_from.get(todo.pop(), ()):
            if k not in writes:
                writes.add(k)
                todo.append(k)
    made = produced | writes
    if dsts & (reads | made):
        return _no(node, "an assembled tensor the body reads or makes (lanes would read each other's writes)")
    tile = max((math.prod(it.params["shape"]) for it in ops if it.kind == "view"), default=0) * 4
    if tile > _MAX_TILE_BYTES:
        return _no(node, f"tiles of {tile} bytes: an op's arithmetic outweighs its Python")
    varying = _varying(ops, lid, made_from)
    for it in ops:
        if it.kind not in _RUN and it.brun is None and any(k in varying for k in it.ins):
            return _no(node, f"{it.name} has no batched run and reads a value that differs between lanes")
    return LanePlan(made=frozenset(made), outside_reads=frozenset(reads - made), out_dsts=frozenset(dsts),
                    max_lanes=max(2, min(MAX_LANES, _LANE_BYTES // max(1, 16 * tile))))


def _varying(ops: list[XOp], lid: int, made_from: dict[int, set[int]]) -> set[int]:
    """The values that may differ between lanes: views moving with the lane index and everything computed, moved or
    carried from them (a write into a value reaches what it is a view of), to a fixed point (loops carry values
    backwards). An op without a batched run is allowed on the others: it computes the same tile for every lane."""
    varying: set[int] = set()
    for _ in range(len(ops) + 1):
        before = len(varying)
        for it in ops:
            p = it.params
            if it.kind == "view":
                moving = any(depends_on(e, lid) for e in (*p["offs"], *(p["vs"] or ())))
                if moving or p["src"] in varying:
                    varying.add(p["out"])
            elif it.kind == "assemble":
                continue
            elif any(k in varying for k in it.ins):
                outs = set(it.op.outs) | set(it.op.writes)
                if it.out_key is not None:
                    outs.add(it.out_key)
                if it.kind == "carry":
                    outs.add(p["dst"])
                todo = list(outs)
                while todo:
                    k = todo.pop()
                    if k not in varying:
                        varying.add(k)
                        todo.extend(made_from.get(k, ()))
        if len(varying) == before:
            break
    return varying


# ---- one pass ------------------------------------------------------------------------------------------

@dataclass
class _Pass:
    plan: LanePlan
    env: Any
    lid: int
    lanes: np.ndarray
    """the lane index values (int64)"""
    batch: _Batch
    fresh: set[int] = field(default_factory=set)
    slabs: dict[int, tuple[tuple[int, ...], list[int], list[int]]] = field(default_factory=dict)
    """assembled tensor -> (lane stride per axis, lowest offset, highest end) over this pass's writes"""
    windows: set[int] = field(default_factory=set)
    """views whose lanes are windows of a tensor from outside: each lane's value is a view of that tensor"""
    undo: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    """(window written, what it held before), per assemble: restored in reverse when the pass is abandoned"""
    allocated: list[int] = field(default_factory=list)
    """assembled tensors this pass allocated (dropped when it is abandoned)"""
    new_masks: list[int] = field(default_factory=list)
    replaced: dict[int, Any] = field(default_factory=dict)
    """locals this pass first wrote by a move while an array from before the pass held them: key -> that entry"""

    @property
    def k(self) -> int:
        return len(self.lanes)


def _evaluators(cache: dict[int, list], it: Any, exprs: Any, lid: int) -> list:
    got = cache.get(id(it))
    if got is None:
        got = cache[id(it)] = [(depends_on(e, lid), compile_vector(e) if depends_on(e, lid) else None,
                                compile_expr(e)) for e in exprs]
    return got


def _per_lane(ps: _Pass, fns: list) -> list[tuple[int, int]]:
    """(value in lane 0, stride per lane) of each expression; abandons when one is not affine in the lane."""
    env, out = ps.env, []
    venv = None
    for dep, vfn, sfn in fns:
        if not dep:
            out.append((int(sfn(env)), 0))
            continue
        if venv is None:
            venv = _VecEnv(dict(env.sym))
            venv.sym[ps.lid] = ps.lanes
        v = np.asarray(vfn(venv), dtype=np.int64)
        if v.shape != ps.lanes.shape:
            v = np.broadcast_to(v, ps.lanes.shape)
        c = int(v[1] - v[0]) if ps.k > 1 else 0
        if not np.array_equal(v, v[0] + c * np.arange(ps.k, dtype=np.int64)):
            raise _Abandon("an offset not affine in the lane index")
        out.append((int(v[0]), c))
    return out


def _check_reads(ps: _Pass, keys: Any) -> None:
    buf, made, fresh = ps.env.buf, ps.plan.made, ps.fresh
    for k in keys:
        if k in fresh:
            continue
        if k in made:
            n = ps.env.node
            raise _Abandon(f"a value of an earlier iteration is read (carried): {n.name if n else '?'} at line "
                           f"{n.line if n else '?'}")
        v = buf.get(k)
        if v is None or tuple(v[1]) != v[0].shape:
            raise _Abandon("a value from outside is missing or partly valid")


def _view(ps: _Pass, it: Any) -> None:
    env, p, b = ps.env, it.params, ps.batch
    src = p["src"]
    _check_reads(ps, (src,))
    arr = env.buf[src][0]
    shp = tuple(p["shape"])
    offs = _per_lane(ps, _evaluators(ps.plan.vec, it, p["offs"], ps.lid))
    if p["vs"] is not None:
        for (w, c), n in zip(_per_lane(ps, _evaluators(ps.plan.vs, it, p["vs"], ps.lid)), shp, strict=True):
            if w != n or c:
                raise _Abandon("a partial tile")
    lane_src = src in b.batched
    ext = arr.shape[1:] if lane_src else arr.shape
    if len(ext) != len(shp):
        raise _Abandon("view rank")
    last = ps.k - 1
    for (o, c), n, e in zip(offs, shp, ext, strict=True):
        if min(o, o + c * last) < 0 or max(o, o + c * last) + n > e:
            raise _Abandon("a view window outside its source")
    if lane_src:
        if any(c for _, c in offs):
            raise _Abandon("a moving view of a lane value")
        res = arr[(slice(None),) + tuple(slice(o, o + n) for (o, _), n in zip(offs, shp, strict=True))]
        b.batched.add(p["out"])
    elif any(c for _, c in offs):
        res = _strided(arr, [o for o, _ in offs], [c for _, c in offs], 1, ps.k, shp)
        b.batched.add(p["out"])
        if not p["copy"]:
            ps.windows.add(p["out"])
    else:
        res = arr[tuple(slice(o, o + n) for (o, _), n in zip(offs, shp, strict=True))]
    if p["copy"]:
        res = res.copy()
    env.buf[p["out"]] = (res, None)
    if p["param"]:
        env.bytes_in += res.nbytes if p["out"] in b.batched else res.nbytes * ps.k
    ps.fresh.add(p["out"])


def _source(ps: _Pass, key: int) -> tuple[np.ndarray, bool, tuple[int, ...]]:
    """The value an assemble or a move writes: (its array, whether it is a lane value, one lane's tile shape)."""
    _check_reads(ps, (key,))
    src = ps.env.buf[key][0]
    lane = key in ps.batch.batched
    return src, lane, src.shape[1:] if lane else src.shape


def _assemble(ps: _Pass, it: Any) -> None:
    env, p = ps.env, it.params
    dkey = p["dst"]
    src, _, shape = _source(ps, p["src"])
    cur = env.buf.get(dkey)
    if cur is None:
        full = tuple(compile_expr(d)(env) for d in p["dshape"])
        cur = env.buf[dkey] = (env.poison(full, np_dtype(p["ddtype"])), full)
        ps.allocated.append(dkey)
    dst = cur[0]
    if len(shape) != dst.ndim:
        raise _Abandon("assemble rank")
    offs = _per_lane(ps, _evaluators(ps.plan.vec, it, p["offs"], ps.lid))
    coef = tuple(c for _, c in offs)
    last = ps.k - 1
    for (o, c), n, e in zip(offs, shape, dst.shape, strict=True):
        if min(o, o + c * last) < 0 or max(o, o + c * last) + n > e:
            raise _Abandon("an assemble window outside its destination")
    slab = ps.slabs.get(dkey)
    lo = [o for o, _ in offs]
    hi = [o + n for (o, _), n in zip(offs, shape, strict=True)]
    if slab is not None:
        if slab[0] != coef:
            raise _Abandon("assembles into one tensor move differently with the lane")
        lo = [min(a, x) for a, x in zip(slab[1], lo, strict=True)]
        hi = [max(a, x) for a, x in zip(slab[2], hi, strict=True)]
    if not any(c and h - lo_ <= abs(c) for c, lo_, h in zip(coef, lo, hi, strict=True)):
        raise _Abandon("lanes' assemble windows may overlap")
    ps.slabs[dkey] = (coef, lo, hi)
    if p.get("store_bf16"):
        src = to_bf16(src)
    if p["param"] and env.options.check_poison and is_poison(src):
        raise _Abandon("poison (the per-iteration run reports it)")
    if src.dtype != dst.dtype and not (p.get("store_bf16") and src.dtype.name == "bfloat16"):
        raise _Abandon("dtype mismatch")
    o0 = [o for o, _ in offs]
    view = _strided(dst, o0, list(coef), 1, ps.k, shape)
    ps.undo.append((view, view.copy()))  # an abandoned pass leaves what the per-iteration run found
    view[...] = src
    if env.masks is not None and dkey in env.param_keys:
        env.wrote(dkey, None, None)
        m = env.masks.get(dkey)
        if m is None:
            m = env.masks[dkey] = np.zeros(dst.shape, dtype=bool)
            ps.new_masks.append(dkey)
        mview = _strided(m, o0, list(coef), 1, ps.k, shape)
        ps.undo.append((mview, mview.copy()))
        mview[...] = True
    else:
        env.wrote(dkey)
    env.elements += view.size
    if p["param"]:
        env.bytes_out += view.nbytes


def _move(ps: _Pass, it: Any) -> None:
    """A move into a local, written whole: the per-iteration move's copy (first write) or in-place write."""
    env, p, b = ps.env, it.params, ps.batch
    dkey = p["dst"]
    src, lane_src, tile = _source(ps, p["src"])
    full = tuple(compile_expr(d)(env) for d in p["dshape"])
    if tile != full:
        raise _Abandon("a move of a part")
    cur = env.buf.get(dkey)
    if dkey in ps.fresh and cur is not None:
        darr = cur[0]
        if darr.dtype != src.dtype:
            raise _Abandon("move dtype")
        if lane_src and dkey not in b.batched:
            # a local the pass made the same for every lane (gated_delta_rule's `state = full(...)`) now takes a
            # value per lane: it becomes a lane value, unless another value of the pass is a view of its array
            if any(k != dkey and np.may_share_memory(v[0], darr) for k in ps.fresh if (v := env.buf.get(k))):
                raise _Abandon("a lane value moved into a local that other values view")
            env.buf[dkey] = (src.copy(), None)
            b.batched.add(dkey)
        else:
            darr[...] = src
    else:
        if cur is not None:  # an array from before the pass: written in place by lane 0 on, per iteration
            held = cur[0]
            for k in ps.plan.outside_reads:
                v = env.buf.get(k)
                if v is not None and np.may_share_memory(v[0], held):
                    raise _Abandon("a value read from outside shares memory with a written local")
            if held.shape != full or held.dtype != src.dtype:
                raise _Abandon("move into a local of another shape")
            ps.replaced.setdefault(dkey, cur)
        env.buf[dkey] = (src.copy(), None)
        if lane_src:
            b.batched.add(dkey)
        else:
            b.batched.discard(dkey)
    env.elements += src.size if lane_src else src.size * ps.k
    ps.fresh.add(dkey)


def _carry(ps: _Pass, it: Any) -> None:
    env, p, b = ps.env, it.params, ps.batch
    _check_reads(ps, (p["src"],))
    env.buf[p["dst"]] = env.buf[p["src"]]
    if p["src"] in b.batched:
        b.batched.add(p["dst"])
    else:
        b.batched.discard(p["dst"])
    ps.fresh.add(p["dst"])


def _op(ps: _Pass, it: Any) -> None:
    env, b = ps.env, ps.batch
    _check_reads(ps, it.ins)
    lane = any(k in b.batched for k in it.ins)
    if it.brun is not None:
        it.brun(env)
    elif lane:
        raise _Abandon(f"{it.name} has no batched run")
    else:
        it.run(env)  # the same tile in every lane (`_varying`): computed once, as the per-iteration run does
    outs = set(it.op.outs)
    if it.out_key is not None and not it.op.writes:
        outs.add(it.out_key)
    for k in outs:
        if lane:
            b.batched.add(k)
        else:
            b.batched.discard(k)
            v = env.buf.get(k)
            if v is not None:
                if v[1] is not None and tuple(v[1]) != v[0].shape:
                    raise _Abandon("a partly valid value")
                env.buf[k] = (v[0], v[0].shape)  # a per-iteration `run` after it reads its valid shape
        ps.fresh.add(k)


_RUN = {"view": _view, "assemble": _assemble, "move": _move, "carry": _carry}


def _region(ps: _Pass, region: XRegion) -> None:
    if not region.paths:
        return
    env = ps.env
    path = region.paths[0]
    items = path.items
    n = len(items)
    i = 0
    k = ps.k
    limited = env.max_steps is not None
    while i < n:
        it = items[i]
        t = type(it)
        if t is XOp:
            env.node = it
            if limited:
                env.step(k)
            _RUN.get(it.kind, _op)(ps, it)
            if it.kind != "carry":
                _account(env, it, k, ps.batch.batched)
            if it.free:
                env.release(it.free)
                ps.fresh.difference_update(it.free)
        elif t is XGuard:
            if bool(it.cond(env)) != it.taken:
                path = region.branch(path, it)
                items = path.items
                n = len(items)
                i = path.guard_pos[it.index]
        else:
            _loop(ps, it)
            if it.free:
                env.release(it.free)
                ps.fresh.difference_update(it.free)
        i += 1


def _loop(ps: _Pass, node: XLoop) -> None:
    """A nested loop, all lanes at once: the same trip count in every lane (`analyse`)."""
    env = ps.env
    start, stop, step = node.bounds(env)
    if step == 0:
        raise _Abandon("a zero step (the per-iteration run reports it)")
    rng = range(start, stop, step)
    env.loop_range[node.lid] = (start, stop, step)
    env.iter_stack.append((node.name, node.lid))
    try:
        if env.max_steps is not None:
            env.step(len(rng) * ps.k)
        for v in rng:
            env.sym[node.lid] = v
            _region(ps, node.body)
    finally:
        env.iter_stack.pop()
    env.trips[node.name] = env.trips.get(node.name, 0) + len(rng) * ps.k
    env.batched += len(rng) * ps.k  # each of them ran for every lane at once


def _snapshot(env: Any, made: frozenset[int]) -> tuple:
    return (dict(env.ops), env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops, dict(env.trips),
            env.steps, len(env.warnings), set(env._warned), dict(env.poison_first), dict(env.sym), env.batched,
            {k: env.buf.get(k) for k in made})


def _restore(env: Any, snap: tuple) -> None:
    (env.ops, env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops, env.trips, env.steps, nwarn,
     env._warned, env.poison_first, env.sym, env.batched, bufs) = snap
    del env.warnings[nwarn:]
    for k, v in bufs.items():
        if v is None:
            env.buf.pop(k, None)
        else:
            env.buf[k] = v


def _one_pass(plan: LanePlan, node: XLoop, env: Any, lanes: range) -> bool:
    """Run ``lanes`` of the loop as one pass; False (nothing changed but what the per-iteration run redoes) when
    it is abandoned."""
    snap = _snapshot(env, plan.made)
    key = node.lid
    dst_arrays = [env.buf[d][0] for d in plan.out_dsts if d in env.buf]
    if dst_arrays:
        for k in plan.outside_reads:
            v = env.buf.get(k)
            if v is not None and any(np.may_share_memory(v[0], d) for d in dst_arrays):
                return False
        for i, a in enumerate(dst_arrays):
            if any(np.may_share_memory(a, d) for d in dst_arrays[i + 1:]):
                return False
    env.sym[key] = lanes[0]
    written = set(env.written)
    ps = _Pass(plan, env, key, np.arange(lanes.start, lanes.stop, lanes.step, dtype=np.int64),
               _Batch(None, env, 1, len(lanes)))  # type: ignore[arg-type]
    if len(ps.lanes) < 2:
        return False
    try:
        if env.max_steps is not None:
            env.step(ps.k)
        _region(ps, node.body)
        if len(env.warnings) != snap[8]:
            raise _Abandon("a warning (the per-iteration run gives it at its iteration)")
    except Exception as exc:  # noqa: BLE001 - anything: the per-iteration run owns errors and their messages
        for view, before in reversed(ps.undo):
            view[...] = before
        for k in ps.allocated:
            env.buf.pop(k, None)
        if env.masks is not None:
            for k in ps.new_masks:
                env.masks.pop(k, None)
        env.written = written
        _restore(env, snap)
        env.node = None
        plan.abandoned += 1
        log.debug("lanes of loop %s abandoned: %s", node.name, exc)
        return False
    # the body's values as the last iteration leaves them: a local written in place keeps its array, a view of a
    # tensor from outside stays a view of it, a computed lane value is copied out of its stack
    env.sym[key] = lanes[-1]
    for k in plan.made:
        v = env.buf.get(k)
        if v is None:
            continue
        arr = v[0]
        if k in ps.batch.batched:
            arr = arr[-1] if k in ps.windows else np.array(arr[-1], copy=True)
        old = ps.replaced.get(k)
        if old is not None and k in ps.fresh:
            old[0][...] = arr
            arr = old[0]
        env.buf[k] = (arr, arr.shape)
    return True


def run_lanes(node: XLoop, env: Any, rng: range) -> int:
    """Run a leading run of ``rng`` as lanes; returns how many iterations were done (0: none)."""
    plan = getattr(node, "lanes", None)
    if plan is None:
        try:
            plan = analyse(node)
        except Exception:  # noqa: BLE001 - a body this analysis does not understand runs per iteration
            log.debug("lane analysis of loop %s failed", node.name, exc_info=True)
            plan = False
        node.lanes = plan
    if plan is False or env.noisy or env.record:
        return 0
    assert isinstance(plan, LanePlan)
    if plan.abandoned >= _MAX_ABANDONED:
        return 0
    done = 0
    while done < len(rng):
        group = rng[done:done + plan.max_lanes]
        if len(group) < 2 or not _one_pass(plan, node, env, group):
            break
        done += len(group)
    env.batched += done
    return done
