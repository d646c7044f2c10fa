"""Batched execution of independent loop iterations (the speed path).

A loop whose body is a single control path of batchable ops, whose views and assembles have offsets affine
in the loop index, and which carries no data from one iteration to the next (nothing the body writes is
read by the body, no whole-tensor moves) is executed for many iterations at once: every body tensor gets a
leading iteration axis, views become strided windows of the source, assembles write strided windows of
the destination. Only a leading run of iterations whose views have the same valid shape and the same
padding is batched (the tail runs through the per-iteration interpreter, which owns all the checks). The
result is bit-identical to the per-iteration execution: each op computes the same elementwise/axis-wise numpy
function.

A tile with a partial valid shape (sigmoid's 1 x 16384 input viewed in 16 x 512 tiles: one valid row) is
batched too when every op of the body computes over the whole tile in the per-iteration interpreter as well
(`_VALID`): the padding is built the same way (poison rows of a window that leaves its source, or the source's
own data beyond the valid box), flows through the same ufuncs, and each assemble writes only the valid box.
"""

from __future__ import annotations

import math
import os
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

PASS_BYTES = int(os.environ.get("PTO_FORGE_BATCH_PASS", str(1 << 20)))
"""A batched run goes through its iterations in passes whose largest view tile, stacked, is about this many bytes as
float32 (at least `_MIN_BATCH` iterations a pass; ``PTO_FORGE_BATCH_PASS=0``: one pass). Why: every value of the
body gets the iteration axis, so one pass over all iterations holds the body's whole working set at once - sum_lstm's
8 iterations of [4, 16384] tiles made 2 MB arrays, ~8.5 MB of fresh memory whose page faults (~2 us per 4 KB page
here) cost more than its arithmetic. Passes of 1 MB reuse the first pass's dead arrays (`Env.take_spare`, `scratch`):
its first call faulted 2,100 pages -> 1,100, peak memory over its arguments 3.7x -> 3.0x, execution ~1 ms less. Each
pass is the batch of a shorter run, so the bits are the same (`tests/emulator/test_batch_passes.py`)."""


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
    partial_ok: bool = False
    """every op of the body has a valid-shape rule (`_VALID`): tiles with a partial valid shape may be batched"""
    vfns: dict[int, Any] = field(default_factory=dict)
    """id(view) -> its compiled valid-extent evaluators (`_vs_fns`)"""
    refused: set[tuple] = field(default_factory=set)
    """partial tiles a valid-shape rule refused: (views' `_Window`s, shapes of the values read from outside)"""
    writes: set[int] = field(default_factory=set)
    """assemble destinations: none may share memory with a value read from outside the body (`_aliased`)"""
    view_srcs: tuple[int, ...] = ()
    """the storage keys the views read from outside the body (their shapes bound the windows, `_views_full`)"""
    full: dict[tuple, tuple[int, dict[int, _Window]]] = field(default_factory=dict)
    """`_views_full`'s results by (loop range, symbols, the `view_srcs` shapes)"""


def _analyse(node: Any) -> BatchPlan | bool:
    body = node.body
    if body is None or len(body.paths) != 1:
        return False
    items = body.paths[0].items
    if not items or any(type(it) is not XOp for it in items):
        return False
    for it in items:  # an op without a batched form (a loop's carried `move`): refused before any other work
        if it.brun is None and it.kind != "view" and it.kind != "assemble":
            return False
    produced: set[int] = set()
    reads: set[int] = set()
    written: set[int] = set()
    plan = BatchPlan(items=list(items), produced=produced, invariant_reads=set())
    lid = node.lid
    made = {k for it in items for k in (it.out_key, *it.op.outs)}  # values the body makes, assemble destinations
    for it in items:
        kind = it.kind if it.kind in ("view", "assemble") else None
        p = it.params
        if kind is None and it.brun is None:
            return False
        if kind is None and _index_dependent(it, lid):
            return False  # a batched op evaluates its expressions once, at the first iteration
        if kind == "assemble":
            # the source: a value of this iteration, or one from before the loop that the body neither makes
            # nor writes (llada2's bias row assembled into every row of a tile: the same tile in every window)
            if p["src"] not in produced and p["src"] in made:
                return False
            if not p["owned"] or p["parallel"]:
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
    plan.writes = written
    plan.view_srcs = tuple(it.params["src"] for it in items if it.kind == "view" and it.params["src"] not in produced)
    for it, nxt in zip(items, items[1:], strict=False):
        if (it.kind in _PLACEABLE and nxt.kind == "assemble" and it.out_key is not None
                and nxt.params["src"] == it.out_key and it.out_key in nxt.free and not nxt.params.get("store_bf16")
                and sum(it.out_key in x.ins for x in items) == 1):
            plan.place[id(it)] = nxt
    plan.partial_ok = all(it.kind in ("view", "assemble") or it.kind in _VALID for it in items)
    return plan


_PLACEABLE = frozenset({"binary", "unary"})
"""kinds whose batched run may compute into the window of the assemble that consumes the result (`Env.place`)"""


_EXPR_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
"""kind -> (names of its ``expr`` parameters, names of its ``exprs`` parameters), read once from the schema"""


def _expr_params(kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    got = _EXPR_PARAMS.get(kind)
    if got is None:
        schema = KINDS[kind].schema
        got = _EXPR_PARAMS[kind] = (tuple(n for n, t in schema.items() if t.rstrip("?") == "expr"),
                                    tuple(n for n, t in schema.items() if t.rstrip("?") == "exprs"))
    return got


def _index_dependent(it: Any, lid: int) -> bool:
    """Whether an op's expression parameters (shapes, diagonals, fill values ...) change with loop ``lid``."""
    got = _EXPR_PARAMS.get(it.kind)
    one, many = got if got is not None else _expr_params(it.kind)
    if not one and not many:
        return False
    params = it.params
    for name in one:
        v = params.get(name)
        if v is not None and type(v) is not int and depends_on(v, lid):
            return True
    for name in many:
        v = params.get(name)
        if v is not None and any(type(x) is not int and depends_on(x, lid) for x in v):
            return True
    return False


class _VecEnv:
    def __init__(self, sym: dict) -> None:
        self.sym = sym


@dataclass
class _Window:
    """What a view gives every batched iteration: its valid shape and the extent it has in its source (smaller
    than the view's shape on an axis where the window leaves the source: the rest is poison padding)."""

    valid: tuple[int, ...]
    ext: tuple[int, ...]


def _vs_fns(plan: BatchPlan, it: Any, lid: int) -> list[tuple[Callable[[Any], Any], bool]] | None:
    """A view's valid-extent evaluators, compiled once per plan: (function, whether it varies with the loop -
    then vectorised over the iterations, else a scalar), or None when one cannot be vectorised."""
    got = plan.vfns.get(id(it), False)
    if got is False:
        try:
            got = [(compile_vector(v), True) if depends_on(v, lid) else (compile_expr(v), False)
                   for v in (it.params["vs"] or [])]
        except ValueError:
            got = None
        plan.vfns[id(it)] = got
    return got


_FULL_MEMO_LIMIT = 16


def _views_full(plan: BatchPlan, env: Any, key: int, rng: range) -> tuple[int, dict[int, _Window]]:
    """`_views_full_of`, remembered per plan for the call's symbols, loop range and the shapes of the sources the
    views read from outside the body - everything it reads: the batch takes only views whose offsets and valid
    extents are symbol / loop-index / constant expressions (`_analyse`, `_vs_fns`: a tensor read or a loop flag
    is refused), so a warm call of the same sizes gets the same run and windows (~50 us of a small kernel's
    call: its vectorised checks over the iterations). The windows are only read, never changed."""
    env.sym[key] = rng[0]
    buf = env.buf
    try:
        mk = (rng.start, rng.stop, rng.step, tuple(env.sym.items()),
              tuple([None if (b := buf.get(s)) is None else b[0].shape for s in plan.view_srcs]))
        got = plan.full.get(mk)
    except TypeError:  # an unhashable symbol value: not remembered
        return _views_full_of(plan, env, key, rng)
    if got is None:
        if len(plan.full) >= _FULL_MEMO_LIMIT:
            plan.full.clear()
        got = plan.full[mk] = _views_full_of(plan, env, key, rng)
    return got


def _views_full_of(plan: BatchPlan, env: Any, key: int, rng: range) -> tuple[int, dict[int, _Window]]:
    """The leading run of iterations the batch may take, and each view's `_Window` in it.

    An iteration is in the run when its views are those the per-iteration interpreter takes without an error or
    a warning (offset inside the source, valid extent inside the view shape and inside the source) and each view
    has the same valid shape and source extent as in the first iteration. Views of a value the body computed
    are only held to a constant valid extent here (their bounds are checked at run time, `_run_view`).
    Offsets are affine in the loop index (`_analyse`): first value + coefficient x iteration; what does not
    vary with the loop is checked once, in Python ints, the rest on vectors over the iterations."""
    n = len(rng)
    env.sym[key] = rng[0]
    steps = np.arange(n, dtype=np.int64) * rng.step
    venv: _VecEnv | None = None
    ok = np.ones(n, dtype=bool)
    wins: dict[int, _Window] = {}

    def holds(c: Any) -> bool:
        """Fold one condition in; False when it already fails in the first iteration (no batch at all)."""
        nonlocal ok
        if isinstance(c, np.ndarray):
            ok &= c
            return bool(c[0])
        return bool(c)

    for it in plan.items:
        if it.kind != "view":
            continue
        p = it.params
        shp = p["shape"]
        fns = _vs_fns(plan, it, key)
        if fns is None:
            return 0, wins
        try:
            wants: list[Any] = []
            for d, (f, vec) in enumerate(fns):
                if vec:
                    if venv is None:
                        venv = _VecEnv(dict(env.sym))
                        venv.sym[key] = rng.start + steps
                    w = f(venv)
                else:
                    w = f(env)
                wants.append(w)
                if isinstance(w, np.ndarray):
                    if not (holds(w == w[0]) and holds(w <= shp[d])):
                        return 0, wins
                elif not (w == w and w <= shp[d]):  # `holds` of a non-array is its truth
                    return 0, wins
            if not wants:
                wants = list(shp)
            exts = list(shp)
            if p["src"] not in plan.produced:
                ext = env.buf[p["src"]][0].shape
                geo = plan.geo[id(it)]
                for d, f in enumerate(geo.fns):
                    o = f(env)
                    if not geo.coef[d] and not isinstance(wants[d], np.ndarray):
                        # an axis that does not move with the loop: the checks below on scalars, where `holds` is
                        # the truth of each condition (and the extent equals its own first value)
                        e = min(o + shp[d], ext[d]) - o
                        if not (o >= 0 and o < ext[d] and o + wants[d] <= ext[d] and e == e):
                            return 0, wins
                        exts[d] = e
                        continue
                    ov = o + geo.coef[d] * steps if geo.coef[d] else o
                    e = np.minimum(ov + shp[d], ext[d]) - ov if geo.coef[d] else min(o + shp[d], ext[d]) - o
                    e0 = int(e[0]) if isinstance(e, np.ndarray) else e
                    if not (holds(ov >= 0) and holds(ov < ext[d]) and holds(ov + wants[d] <= ext[d])
                            and holds(e == e0)):
                        return 0, wins
                    exts[d] = e0
        except (ValueError, TypeError, KeyError):
            return 0, wins
        wins[id(it)] = _Window(tuple(int(w[0]) if isinstance(w, np.ndarray) else int(w) for w in wants),
                               tuple(exts))
    bad = np.flatnonzero(~ok)
    return (int(bad[0]) if bad.size else n), wins


def _strided(arr: np.ndarray, o0: list[int], coef: list[int], step: int, k: int, shape: tuple) -> np.ndarray:
    base = arr[tuple([slice(o, None) for o in o0])]
    lead = 0
    for c, s in zip(coef, arr.strides, strict=True):
        lead += c * step * s
    return as_strided(base, shape=(k, *shape), strides=(lead, *arr.strides), writeable=True)


def _account(env: Any, it: Any, k: int, batched: set[int]) -> None:
    """The counters of ``k`` per-iteration runs of ``it``. A result without the iteration axis (an op on loop
    invariants, computed once here) is counted ``k`` times, as the interpreter computes it in every iteration
    (it was counted once: elements too low, and tiles guessed from a leading axis that happened to equal k)."""
    ops = env.ops
    ops[it.name] = ops.get(it.name, 0) + k
    if it.param_reads:
        env.count_param_reads(it, k)
    if it.out_key is None or not it.sized:
        return
    v = env.buf.get(it.out_key)
    if v is None:
        return
    n = v[0].size
    per = n // k if it.out_key in batched else n
    env.elements += per * k
    te = it.tile_elems
    if te:
        env.tiles += k * max(1, (per + te - 1) // te)  # ceil in ints


@dataclass
class _Batch:
    """State of one batched run: which storage keys carry the leading iteration axis."""

    plan: BatchPlan
    env: Any
    step: int
    kcount: int
    batched: set[int] = field(default_factory=set)
    wins: dict[int, _Window] = field(default_factory=dict)
    valid: dict[int, tuple[int, ...]] | None = None
    """partial mode (a view's valid shape or source extent is not its whole shape): storage key -> the valid
    shape of one iteration's tile, as the per-iteration interpreter has it; None when every tile is full"""

    def tile(self, key: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """One iteration's shape and valid shape of the value under ``key`` (partial mode)."""
        arr, valid = self.env.buf[key]
        shape = arr.shape[1:] if key in self.batched else arr.shape
        assert self.valid is not None
        v = self.valid.get(key, valid)
        if v is None:  # a batched buffer the batch did not make: nothing to derive a valid shape from
            raise EmulatorError("EMU_BATCH", "valid shape unknown (fall back)")
        return shape, tuple(v)


def _run_view(b: _Batch, it: Any) -> None:
    """A view: a strided window per iteration of its source (or of the batched source); a window leaving its
    source is copied into poison padding, as the per-iteration view does."""
    env, p = b.env, it.params
    geo = b.plan.geo[id(it)]
    arr = env.buf[p["src"]][0]
    o0 = [f(env) for f in geo.fns]
    shp = tuple(p["shape"])
    if p["src"] in b.plan.produced:
        if b.valid is not None:
            _view_valid(b, it, o0)
        if p["src"] in b.batched:
            res = arr[(slice(None),) + tuple(slice(o, o + s) for o, s in zip(o0, shp, strict=True))]
            b.batched.add(p["out"])
        else:
            res = arr[tuple(slice(o, o + s) for o, s in zip(o0, shp, strict=True))]
    else:
        win = b.wins[id(it)]
        lead: tuple = ()
        if any(geo.coef):
            part = _strided(arr, o0, geo.coef, b.step, b.kcount, win.ext)
            lead = (b.kcount,)
            b.batched.add(p["out"])
        else:
            part = arr[tuple(slice(o, o + e) for o, e in zip(o0, win.ext, strict=True))]
        if win.ext != shp:
            res = env.poison(lead + shp, arr.dtype)
            res[(slice(None),) * len(lead) + tuple(slice(0, e) for e in win.ext)] = part
        else:
            res = part
        if b.valid is not None:
            b.valid[p["out"]] = win.valid
    env.buf[p["out"]] = (res, None)
    if p["param"]:
        env.bytes_in += res.nbytes if p["out"] in b.batched else res.nbytes * b.kcount


def _view_valid(b: _Batch, it: Any, o0: list[int]) -> None:
    """Partial mode, a view that does not move with the loop: its valid shape from its source's, as the
    per-iteration view computes it; a window the interpreter would clip or refuse falls back."""
    p = it.params
    ext, valid = b.tile(p["src"])
    want = b.wins[id(it)].valid
    out = []
    for d, (o, s, w) in enumerate(zip(o0, p["shape"], want, strict=True)):
        if o < 0 or o + s > ext[d] or w > s:
            raise EmulatorError("EMU_BATCH", "view window not inside its source (fall back)")
        out.append(max(0, min(w, valid[d] - o)))
    assert b.valid is not None
    b.valid[p["out"]] = tuple(out)


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
    if b.valid is not None:  # only the valid box is written (the per-iteration assemble's `part`)
        tile, valid = b.tile(p["src"])
        if valid != tile:
            box = tuple(slice(0, v) for v in valid)
            src = src[(slice(None),) + box] if p["src"] in b.batched else src[box]
            shape = valid
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


def _run_op(b: _Batch, it: Any, boxed: bool = False) -> None:
    """Any other op runs its own batched implementation (``brun``, built by its kind). ``boxed``: a unary op whose
    result only the assemble right after it reads (`BatchPlan.place`), over partial tiles - it computes the valid
    part alone (`Env.box`; sigmoid's decode case: 1 valid row of 16 in every tile)."""
    valid = _VALID[it.kind](b, it) if b.valid is not None else None  # before: an operand may die in brun
    if boxed and valid is not None:
        a = it.params["a"]
        if b.tile(a)[0] != valid and all(valid):
            b.env.box = ((slice(None),) if a in b.batched else ()) + tuple(slice(0, v) for v in valid)
    try:
        it.brun(b.env)
    finally:
        b.env.box = None
    if it.out_key is not None and not b.batched.isdisjoint(it.ins):
        b.batched.add(it.out_key)
    if b.valid is not None and it.out_key is not None:
        b.valid[it.out_key] = valid if valid is not None else b.tile(it.out_key)[0]


# ---- valid shapes in partial mode ------------------------------------------------------------------------
# One rule per kind whose per-iteration `run` computes over the whole tile (padding included) - as its `brun`
# does - and derives its result's valid shape from its operands' alone: the rule gives that valid shape, or
# raises EMU_BATCH where the per-iteration op would compute on the valid part only (a reduction over a
# partial axis), so that batching it would change the padding's bits. A kind without a rule is never batched
# over partial tiles (`BatchPlan.partial_ok`).

class _Refused(EmulatorError):
    """A valid-shape rule refuses the partial tiles: the same tiles are refused on every call (`run_batched`
    remembers them in `BatchPlan.refused` and does not start that batch again)."""


def _fail(why: str) -> EmulatorError:
    return _Refused("EMU_BATCH", f"{why} (fall back)")


def _common_valid(shape: tuple, operands: list[tuple[tuple, tuple]]) -> tuple:
    """`_k_math.valid_of` on (shape, valid) pairs of one iteration's tiles."""
    v = list(shape)
    for shp, valid in operands:
        for d, n in enumerate(shp):
            if (n != 1 or shape[d] == 1) and valid[d] < v[d]:
                v[d] = valid[d]
    return tuple(v)


def _padded(b: _Batch, key: int, pad: int) -> tuple[tuple, tuple]:
    shape, valid = b.tile(key)
    return (1,) * pad + shape, (1,) * pad + valid


def _valid_same(b: _Batch, it: Any) -> tuple:
    return b.tile(it.params["a"])[1]


def _valid_binary(b: _Batch, it: Any) -> tuple:
    p = it.params
    sa, va = _padded(b, p["a"], p["pad_a"])
    if p["b"] is None:
        return va
    sb, vb = _padded(b, p["b"], p["pad_b"])
    try:
        shape = np.broadcast_shapes(sa, sb)
    except ValueError:
        raise _fail("operands do not broadcast") from None
    return _common_valid(shape, [(sa, va), (sb, vb)])


def _valid_where(b: _Batch, it: Any) -> tuple:
    p = it.params
    ops = [b.tile(k) for k in (p["c"], p["i"], p["o"]) if k is not None]
    try:
        shape = np.broadcast_shapes(*(s for s, _ in ops))
    except ValueError:
        raise _fail("operands do not broadcast") from None
    return _common_valid(shape, ops)


def _valid_reduce(b: _Batch, it: Any) -> tuple:
    p = it.params
    shape, v = b.tile(p["a"])
    ax = p["ax"]
    if len(shape) != p["rank"] or v[ax] != shape[ax]:
        raise _fail("reduction over a partially valid axis")
    if p["keepdim"]:
        return v[:ax] + (1,) + v[ax + 1:]
    return v[:ax] + v[ax + 1:] if p["rank"] > 1 else (1,)


def _valid_softmax(b: _Batch, it: Any) -> tuple:
    p = it.params
    shape, v = b.tile(p["a"])
    if len(shape) != p["rank"] or v[p["ax"]] != shape[p["ax"]]:
        raise _fail("softmax over a partially valid axis")
    return v


def _valid_full(b: _Batch, it: Any) -> None:
    """matmul: the per-iteration op multiplies the valid parts only; batched when they are whole tiles."""
    p = it.params
    for k in (p["a"], p["b"]):
        shape, v = b.tile(k)
        if v != shape:
            raise _fail("matmul over a partial tile")


_VALID: dict[str, Callable[[_Batch, Any], tuple | None]] = {
    "unary": _valid_same, "cast": _valid_same, "binary": _valid_binary, "where": _valid_where,
    "reduce": _valid_reduce, "softmax": _valid_softmax, "matmul": _valid_full,
}


# geometry kinds whose batching the planner owns; every other op brings its own `brun`
_RULES = {"view": _run_view, "assemble": _run_assemble}


def _aliased(env: Any, reads: set[int], writes: Any) -> bool:
    """Whether a value read from outside the body shares memory with a destination the body writes (the same
    array passed as an input and an output of the kernel): the batch reads every iteration's window before any
    write, the per-iteration run reads what the earlier iterations wrote there."""
    buf = env.buf
    targets = [buf[w][0] for w in writes if w in buf]
    if not targets:
        return False
    for k in reads:
        a = buf[k][0]
        for t in targets:
            if np.may_share_memory(a, t):
                return True
    return False


def run_batched(node: Any, env: Any, rng: range) -> int:
    """Execute a leading run of iterations batched, in passes of `PASS_BYTES`; returns how many were done (0 =
    none; fewer than the run when a later pass fell back)."""
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
    if _aliased(env, plan.invariant_reads, plan.writes):
        return 0
    key = node.lid
    kcount, wins = _views_full(plan, env, key, rng)
    if kcount < _MIN_BATCH:
        return 0
    partial = any(w.valid != tuple(it.params["shape"]) or w.ext != tuple(it.params["shape"])
                  for it in plan.items if it.kind == "view" for w in (wins[id(it)],))
    sig: tuple = ()
    if partial:
        if not plan.partial_ok:
            return 0
        sig = (tuple((w.valid, w.ext) for w in wins.values()),
               tuple(env.buf[k][0].shape for k in sorted(plan.invariant_reads)))
        if sig in plan.refused:
            return 0
    per = _pass_iterations(plan, kcount)
    done = 0
    while done < kcount:
        k = kcount - done if kcount - done < per + _MIN_BATCH else per  # no short last pass
        if not _run_pass(plan, env, key, rng[done:done + k], wins, partial, sig, done + k == len(rng)):
            return done  # the iterations before it are done; the rest run per iteration (they own the errors)
        done += k
    return done


def _pass_iterations(plan: BatchPlan, kcount: int) -> int:
    """Iterations per pass (`PASS_BYTES`): the views' largest tile as float32 - the size every value of the body
    is computed at - decides."""
    tile = max((math.prod(it.params["shape"]) * 4 for it in plan.items if it.kind == "view"), default=0)
    if PASS_BYTES <= 0 or tile <= 0:
        return kcount
    return max(_MIN_BATCH, PASS_BYTES // tile)


def _run_pass(plan: BatchPlan, env: Any, key: int, rng: range, wins: dict[int, _Window], partial: bool,
              sig: tuple, last: bool) -> bool:
    """One pass: the iterations ``rng`` batched, with the windows `_views_full` found for the whole run (each
    pass's are the same: the run's views all have one valid shape and extent); False when it fell back (its
    counters restored, nothing of it counted). ``last``: the loop's last iteration is in it - the values the body
    made are then left as that iteration leaves them, for what follows the loop."""
    kcount = len(rng)
    env.sym[key] = rng[0]
    saved = (dict(env.ops), env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops)
    batch = _Batch(plan, env, rng.step, kcount, wins=wins, valid={} if partial else None)
    if env.max_steps is not None:
        env.step(kcount * (len(plan.items) + 1))
    try:
        for it in plan.items:
            env.node = it
            asm = plan.place.get(id(it)) if not partial else None  # padding must not reach the destination
            if asm is not None:
                env.place = _placement(batch, asm)
                try:
                    _run_op(batch, it)
                finally:
                    env.place = None
            elif partial and it.kind == "unary" and id(it) in plan.place and not env.noisy and not env.record:
                _run_op(batch, it, boxed=True)  # its padding is never read: only its valid part is computed
            else:
                _RULES.get(it.kind, _run_op)(batch, it)
            if env.noisy:
                env.perturb_result(it)
            _account(env, it, kcount, batch.batched)
            if it.free:
                env.release(it.free)
    except EmulatorError as exc:
        if isinstance(exc, _Refused):
            plan.refused.add(sig)
        # fall back to the per-iteration interpreter (it owns the precise errors); the batch wrote nothing
        # that the sequential run will not write again identically, so only the counters are restored
        env.ops, env.tiles, env.elements, env.bytes_in, env.bytes_out, env.flops = saved
        return False
    if last:
        env.sym[key] = rng[kcount - 1]
        for k in plan.produced:
            v = env.buf.get(k)
            if v is None:
                continue
            arr = v[0][-1] if k in batch.batched else v[0]
            arr = np.array(arr, copy=True)
            env.buf[k] = (arr, arr.shape if batch.valid is None else batch.valid[k])
    return True


