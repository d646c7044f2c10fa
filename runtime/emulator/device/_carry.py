"""Loops that carry state: the leading write-free ops of the body run batched, the rest per iteration.

Why: the batch executor (`_batch`) takes a loop only when its iterations are independent. Real kernels often
carry a value from one iteration to the next - attn_softmax's running max ``gmax[:] = maximum(gmax, tm)`` and
running sum, flash_attention_score_grad's accumulators - so their whole body ran op by op, ~10-20 us of Python
per op, although its leading ops (``view, cast, mul, amax`` of a tile) do not depend on the carried value.

What: the *prefix* of such a loop is the longest run of leading items of the body's first path (before any
guard or nested loop) that the batch executor can run (views with offsets affine in the loop index, ops with a
``brun`` whose parameters do not change with the loop), that read nothing the body produces or writes (but what
the prefix itself produced before), and whose results nothing in the body writes. The prefix runs once for the
leading run of iterations whose views are those of the per-iteration interpreter (`_batch._views_full`), with
stacked tiles as in `_batch.run_batched`; then each iteration binds the prefix results still live after the
prefix to its slice of the stacked values and runs only the rest of the body (`_exec.run_region` from the
prefix's end, guards and nested loops included).

Bit-identical to the per-iteration run: the prefix ops are the batch executor's (same ufuncs per element);
their counters are added per iteration, just before that iteration's suffix (an error in iteration j leaves
the counters of the per-iteration run), with one step per op against ``Limits.max_steps``; a prefix that fails,
warns or is refused anywhere in the batch is abandoned before any iteration ran (counters, warnings and buffers
restored) and the loop runs per iteration from the start. The slices are views (``owndata`` False): no op writes
its result over them (`_k_math.scratch`). Aliasing: a prefix read may not share memory with anything the body
writes in place (checked on the arrays at loop start, `_aliased`); a value the body writes, or carries, is
written - and so is what it was derived from in the body.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from operator import floordiv, mod, sub
from typing import Any

import numpy as np

from runtime.emulator._errors import EmulatorError
from runtime.emulator.device._batch import (
    _MIN_BATCH,
    _RULES,
    _VALID,
    BatchPlan,
    _account,
    _aliased,
    _analyse,
    _Batch,
    _Geo,
    _index_dependent,
    _Refused,
    _run_op,
    _views_full,
)
from runtime.emulator.device._expr import compile_expr, loop_coef
from runtime.emulator.device._kreg import np_dtype
from runtime.emulator.device._prepare import XLoop, XOp
from runtime.emulator.device._program import Loop, Op, Region

__all__ = ["Fold", "PrefixPlan", "Prefixed", "analyse", "counters", "start"]

log = logging.getLogger(__name__)

_MIN_PREFIX_OPS = 1
"""a prefix of views only saves nothing: at least this many computing ops (``brun``)"""


@dataclass
class PrefixPlan:
    """The batchable prefix of a loop body that carries state (`analyse`)."""

    batch: BatchPlan
    """the prefix items as a batch plan (no assembles)"""
    n: int
    """number of prefix items: each iteration runs the body's first path from here"""
    writes: frozenset[int]
    """storage keys the body writes in place (whatever path, nested loops included), closed over the values they
    were derived from in the body: a prefix read must not alias any of them (`_aliased`)"""
    refused: set[tuple] = field(default_factory=set)
    """partial-tile signatures a valid-shape rule refused (as `BatchPlan.refused`)"""
    fold: Fold | None = None
    """the rest of the body is one running fold of a prefix result (`_fold_of`): iterations 2.. run as one
    ``ufunc.accumulate``"""


_FOLDS: dict[str, np.ufunc] = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
                               "minimum": np.minimum}
"""binary functions whose per-iteration op is exactly this ufunc on float operands (`_k_math.BINARY`)"""
_FOLD_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass
class Fold:
    """``acc = f(acc, y)`` then ``acc[:] = reshape(...)``: attn_softmax's running max and running sum.

    The items after the prefix are exactly a binary op ``f`` (one of `_FOLDS`, no scalar or alpha)
    whose first operand is the carried value ``acc`` and whose second is a prefix result ``y``, maybe a reshape of
    its result, and a move of that into ``acc`` (a local the loop owns, not a kernel argument); the two results die in
    the body. Per iteration that is ``acc = f(acc, y_i)`` elementwise, in order - which is what
    ``f.accumulate`` over ``[acc, y_1, ..., y_k]`` computes, one step after the other on the same dtype (no
    reassociation, unlike ``reduce``), so the same bits. Why: each of those iterations cost three ops of
    per-iteration Python (~30 us) for a one-element ``maximum``."""

    ufunc: np.ufunc
    acc: int
    y: int
    odt: np.dtype
    """the binary op's result dtype (float32 / float64): the accumulator's and the operand's, or the fold does not
    apply (a result cast before the move)"""
    ops: tuple[XOp, ...]


def _fold_of(body: Any, n: int, mine: set[int]) -> Fold | None:
    """The `Fold` of a loop body whose items after the first ``n`` (the prefix, producing ``mine``) are one."""
    if len(body.paths) != 1:
        return None
    rest = body.paths[0].items[n:]
    if len(rest) not in (2, 3) or any(type(it) is not XOp for it in rest):
        return None
    bi, mv = rest[0], rest[-1]
    if (bi.kind, mv.kind) != ("binary", "move") or len(rest) == 3 and rest[1].kind != "reshape":
        return None
    b, m = bi.params, mv.params
    uf = _FOLDS.get(b["fn"])
    if uf is None or b["b"] is None or b["alpha"] is not None:
        return None  # rank padding (attn_softmax's [1] max against a [1, 1] tile) only puts unit axes in front
    acc, y = b["a"], b["b"]
    if y not in mine or acc in mine or acc == y or m["dst"] != acc or m["param"] or not m["owned"]:
        return None
    last = b["out"]
    for it in rest[1:]:  # the reshape (a view of the result), then the move: each reads the one before
        src = it.params["src"]
        if src != last or src not in it.free or it.kind == "reshape" and it.params["vs"] is not None:
            return None  # a result read after the loop (the fold does not make it), a reshape with its own valid
        last = it.params.get("out")
    odt = np_dtype(b["odt"])
    if odt not in _FOLD_DTYPES or any(it.param_reads for it in rest):
        return None  # a 16-bit result is rounded at every step
    return Fold(ufunc=uf, acc=acc, y=y, odt=odt, ops=tuple(rest))


def analyse(node: XLoop) -> BatchPlan | PrefixPlan | bool:
    """The loop's batch plan (`_batch._analyse`), else its prefix plan, else False (``XLoop.plan``)."""
    plan = _analyse(node)
    if plan is not False:
        return plan
    try:
        pre = _prefix(node)
    except Exception:  # noqa: BLE001 - a body this analysis does not understand is run per iteration
        log.debug("prefix analysis of loop %s failed", node.name, exc_info=True)
        return False
    return pre if pre is not None else False


def _walk_ops(region: Region, out: list[Op]) -> None:
    """Every op of a program region, all paths, nested loops included."""
    for p in region.paths:
        for it in p.items:
            if isinstance(it, Op):
                out.append(it)
            elif isinstance(it, Loop):
                _walk_ops(it.body, out)


def _body_effects(node: XLoop) -> tuple[set[int], set[int]]:
    """(keys the body produces, keys it writes in place - closed over what they alias in the body)."""
    ops: list[Op] = []
    for p in node.body.paths:
        for it in p.items:
            if type(it) is XOp:
                ops.append(it.op)
            elif type(it) is XLoop:
                _walk_ops(it.lp.body, ops)
    produced: set[int] = set()
    writes: set[int] = set()
    made_from: dict[int, set[int]] = {}
    for op in ops:
        outs = set(op.outs)
        if op.out_key is not None and not op.writes:
            outs.add(op.out_key)
        produced |= outs
        for k in outs:
            made_from.setdefault(k, set()).update(op.ins)
        writes.update(op.writes)
        if op.kind == "carry":  # dst now holds src's very array: a later write into dst writes src
            writes.update(op.ins)
    todo = list(writes)
    while todo:  # a value written in place may be a view of what it was made from (view, reshape ...)
        for k in made_from.get(todo.pop(), ()):
            if k not in writes:
                writes.add(k)
                todo.append(k)
    return produced, writes


def _prefix(node: XLoop) -> PrefixPlan | None:
    body = node.body
    if not body.paths:
        return None
    produced_all, writes = _body_effects(node)
    lid = node.lid
    items: list[XOp] = []
    mine: set[int] = set()
    geo: dict[int, _Geo] = {}
    for it in body.paths[0].items:
        if type(it) is not XOp:
            break  # a guard or a nested loop ends the prefix
        op = it.op
        if op.writes or it.kind in ("assemble", "move", "setitem", "carry"):
            break
        if it.kind == "view":
            coef = [loop_coef(o, lid) for o in it.params["offs"]]
            if any(c is None for c in coef):
                break
            if it.params["src"] in mine and any(coef):
                break
            g = _Geo(it.params["offs"], [c for c in coef if c is not None],
                     [compile_expr(o) for o in it.params["offs"]])
        elif it.brun is None or _index_dependent(it, lid):
            break
        else:
            g = None
        carried = False
        for k in it.ins:
            if k not in mine and (k in produced_all or k in writes):
                carried = True  # reads a value of an earlier iteration (carried) or one the body writes
                break
        if carried:
            break
        outs = set(op.outs)
        if it.out_key is not None:
            outs.add(it.out_key)
        if outs & writes or not (mine | outs).issuperset(it.free):
            break
        if g is not None:
            geo[id(it)] = g
        items.append(it)
        mine |= outs
    while items and items[-1].kind == "view":  # trailing views: nothing computed on them in the batch
        items.pop()
    if sum(it.kind != "view" for it in items) < _MIN_PREFIX_OPS:
        return None
    mine = set()
    reads: set[int] = set()
    for it in items:
        reads.update(k for k in it.ins if k not in mine)
        mine.update(it.op.outs)
        if it.out_key is not None:
            mine.add(it.out_key)
    plan = BatchPlan(items=list(items), produced=mine, invariant_reads=reads,
                     geo={id(it): geo[id(it)] for it in items if id(it) in geo})
    plan.partial_ok = all(it.kind == "view" or it.kind in _VALID for it in items)
    plan.view_srcs = tuple(it.params["src"] for it in items if it.kind == "view" and it.params["src"] not in mine)
    return PrefixPlan(batch=plan, n=len(items), writes=frozenset(writes), fold=_fold_of(body, len(items), mine))


@dataclass
class Prefixed:
    """The batched prefix of one run of a loop: per iteration, what to bind and what to count (`enter`)."""

    plan: PrefixPlan
    kcount: int
    """iterations the prefix ran for (the leading run of the loop's range)"""
    live: list[tuple[int, np.ndarray, bool, tuple[int, ...]]]
    """(storage key, stacked or invariant array, whether it has the iteration axis, valid shape of one tile)"""
    counts: list[tuple[Any, int, int, int, int, int]]
    """per prefix op: (op, tiles, elements, bytes_in, bytes_out, flops) of one iteration"""

    def enter(self, env: Any, i: int, limited: bool) -> None:
        """Iteration ``i``: count the prefix ops as the per-iteration run does (step, counters, op by op), then
        bind the prefix results still live to this iteration's slice."""
        ops = env.ops
        for it, tiles, elements, bin_, bout, flops in self.counts:
            env.node = it  # as in the per-iteration run: the last op run locates an error raised before the next
            if limited:
                env.step()
            name = it.name
            ops[name] = ops.get(name, 0) + 1
            env.tiles += tiles
            env.elements += elements
            env.bytes_in += bin_
            env.bytes_out += bout
            env.flops += flops
        buf = env.buf
        for k, arr, stacked, valid in self.live:
            buf[k] = (arr[i] if stacked else arr[...], valid)

    def fold_rest(self, env: Any, before: tuple, nwarn: int, rng: range, key: int) -> int:
        """After the first iteration ran op by op (counters ``before`` it, ``nwarn`` warnings): the others of the
        prefix's run as one `Fold`, with the counters of that many more iterations like the first; returns how many
        ran (0: the fold does not apply to these values, nothing changed - run them per iteration)."""
        f = self.plan.fold
        k = self.kcount
        if f is None or k < 2 or len(env.warnings) != nwarn:
            return 0
        cur = env.buf.get(f.acc)
        live = next((x for x in self.live if x[0] == f.y), None)
        if cur is None or live is None:
            return 0
        acc, valid = cur
        _, ys, stacked, yvalid = live
        if acc.dtype != f.odt or ys.dtype != f.odt or tuple(valid) != acc.shape or not stacked or ys.shape[0] != k or \
                tuple(yvalid) != ys.shape[1:] or ys[0].size != acc.size:
            return 0
        z = np.empty((k, acc.size), dtype=acc.dtype)
        z[0] = acc.reshape(-1)
        z[1:] = ys[1:].reshape(k - 1, -1)
        acc[...] = f.ufunc.accumulate(z, axis=0)[-1].reshape(acc.shape)  # the move writes the carried array
        ops0, *c0 = before
        ops1, *c1 = counters(env)
        for name, cnt in ops1.items() - ops0.items():  # the names the first iteration counted (a set difference in C)
            env.ops[name] = cnt + (cnt - ops0.get(name, 0)) * (k - 1)
        m = k - 1
        env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops = \
            [now + (now - was) * m for now, was in zip(c1, c0, strict=True)]
        env.sym[key] = rng[k - 1]
        env.node = f.ops[-1]
        buf = env.buf
        for kk, arr, st, vv in self.live:  # what the last iteration leaves: its slices bound, the dead dropped
            buf[kk] = (arr[k - 1] if st else arr[...], vv)
        for op in f.ops:
            for kk in op.free:
                buf.pop(kk, None)
        return k - 1

    def leave(self, env: Any) -> None:
        """After the last batched iteration: a prefix result still held (read after the loop) owns its memory,
        as a per-iteration result does."""
        buf = env.buf
        for k, _, _, _ in self.live:
            v = buf.get(k)
            if v is not None and not v[0].flags.owndata:
                buf[k] = (np.array(v[0], copy=True), v[1])


def counters(env: Any) -> tuple:
    """What `Prefixed.fold_rest` multiplies: (ops by name, tiles, elements, bytes in, bytes out, flops)."""
    return dict(env.ops), env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops


def _check_inner_view(b: _Batch, it: Any) -> None:
    """A view of a value the prefix computed (its offsets do not move with the loop, `_prefix`): the window
    must lie inside one iteration's tile, else the per-iteration view raises and numpy would clip silently."""
    env, p = b.env, it.params
    arr = env.buf[p["src"]][0]
    tile = arr.shape[1:] if p["src"] in b.batched else arr.shape
    o0 = [f(env) for f in b.plan.geo[id(it)].fns]
    if len(o0) != len(tile) or any(o < 0 or o + s > e for o, s, e in zip(o0, p["shape"], tile, strict=True)):
        raise EmulatorError("EMU_BATCH", "view window not inside its source tile (fall back)")


def start(node: XLoop, plan: PrefixPlan, env: Any, rng: range) -> Prefixed | None:
    """Run the prefix of ``plan`` batched over a leading run of ``rng``; None when it does not apply (then the
    loop runs per iteration and nothing here changed ``env``)."""
    bp = plan.batch
    if env.noisy:
        return None  # the test-mode noise injector perturbs per-iteration results
    buf = env.buf
    for k in bp.invariant_reads:
        v = buf.get(k)
        if v is None or tuple(v[1]) != v[0].shape:
            return None
    if _aliased(env, bp.invariant_reads, plan.writes):
        return None
    key = node.lid
    kcount, wins = _views_full(bp, env, key, rng)
    if kcount < _MIN_BATCH:
        return None
    partial = any(w.valid != tuple(it.params["shape"]) or w.ext != tuple(it.params["shape"])
                  for it in bp.items if it.kind == "view" for w in (wins[id(it)],))
    sig: tuple = ()
    if partial:
        if not bp.partial_ok:
            return None
        sig = (tuple((w.valid, w.ext) for w in wins.values()),
               tuple(buf[k][0].shape for k in sorted(bp.invariant_reads)))
        if sig in plan.refused:
            return None
    env.sym[key] = rng[0]
    saved = counters(env)
    node0 = env.node
    nwarn = len(env.warnings)
    batch = _Batch(bp, env, rng.step, kcount, wins=wins, valid={} if partial else None)
    counts: list[tuple[Any, int, int, int, int, int]] = []
    try:
        ks = (kcount,) * 5
        for it in bp.items:
            env.node = it
            if it.kind == "view" and it.params["src"] in bp.produced:
                _check_inner_view(batch, it)
            c0 = (env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops)
            _RULES.get(it.kind, _run_op)(batch, it)
            _account(env, it, kcount, batch.batched)
            d = tuple(map(sub, (env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops), c0))
            if any(map(mod, d, ks)):
                raise EmulatorError("EMU_BATCH", "counters not a multiple of the iterations (fall back)")
            counts.append((it, *map(floordiv, d, ks)))
            for k in it.free:
                buf.pop(k, None)
        if len(env.warnings) != nwarn:
            raise EmulatorError("EMU_BATCH", "a prefix op warned (fall back for the per-iteration order)")
        live = []
        for k in bp.produced:
            v = buf.pop(k, None)
            if v is None:
                continue
            arr = v[0]
            stacked = k in batch.batched
            if batch.valid is not None:
                valid = tuple(batch.valid[k])
            else:
                valid = tuple(arr.shape[1:] if stacked else arr.shape)
            live.append((k, arr, stacked, valid))
    except Exception as exc:  # noqa: BLE001 - any failure: the per-iteration run owns the precise behaviour
        if isinstance(exc, _Refused):
            plan.refused.add(sig)
        log.debug("prefix of loop %s not batched: %s", node.name, exc)
        for k in bp.produced:
            buf.pop(k, None)
        for w in env.warnings[nwarn:]:
            env._warned.discard((w.code, w.file, w.line, w.message))
        del env.warnings[nwarn:]
        return None
    finally:
        env.ops, env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops = saved
        env.node = node0
    return Prefixed(plan=plan, kcount=kcount, live=live, counts=counts)
