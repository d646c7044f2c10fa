"""Preparation of a program for execution: every op gets its run functions from the kind registry, every
expression its compiled evaluator, every region its guard lookup tables.

The result (`XRegion`/`XPath`/`XOp`/`XGuard`/`XLoop`) lives only inside the executing process; the program
itself stays plain data.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from runtime.emulator.device import _k_core, _k_index, _k_math  # noqa: F401 - register the op kinds
from runtime.emulator.device._divergence import divergence_warning, warning_first
from runtime.emulator.device._expr import compile_expr
from runtime.emulator.device._kreg import KINDS
from runtime.emulator.device._program import Guard, KernelProgram, Loop, Op, Region
from runtime.emulator.device._promote import PROMOTING, bf16_promoted, promote_params
from runtime.emulator.device._types import ProgramError

__all__ = ["XGuard", "XLoop", "XOp", "XPath", "XRegion", "prepare"]

_WRITES = frozenset({"assemble", "move", "setitem"})
_DIVERGING = frozenset({"reduce", "binary"})
"""the kinds `divergence_warning` can name"""
"""op names that write into a destination and count the elements they write themselves"""


class XOp:
    """An op ready to run: its data plus ``run`` / ``brun`` built by its kind."""

    __slots__ = ("op", "name", "ins", "out_key", "tile_elems", "params", "kind", "run", "brun", "free", "param_reads",
                 "counted", "sized")

    def __init__(self, op: Op, run: Callable[[Any], None], brun: Callable[[Any], None] | None) -> None:
        self.op = op
        self.name = op.name
        self.ins = op.ins
        self.out_key = op.out_key
        self.tile_elems = op.tile_elems
        self.params = op.params
        self.kind = op.kind
        self.run = run
        self.brun = brun
        self.free: tuple[int, ...] = ()
        """storage keys nobody reads after this op (`_liveness`): the executor drops them once it has run"""
        self.param_reads: tuple[int, ...] | None = None
        """kernel arguments this op reads whole (`Env.count_param_reads`); None until `prepare` knows the params"""
        self.counted = op.kind != "carry"
        """a kernel op (`_exec._run_region` counts it); the tracer's hand-over of a rolled loop's carried value
        (`_k_core.build_carry`) is not one"""
        self.sized = op.name not in _WRITES
        """its result's elements and tiles are counted after it runs (writers count what they write themselves)"""

    # read where an error or a warning is made, never per op: the program's own fields (one copy less per op)
    @property
    def file(self) -> str | None:
        return self.op.file

    @property
    def line(self) -> int | None:
        return self.op.line

    @property
    def cls(self) -> str:
        return self.op.cls

    @property
    def gm_write(self) -> bool:
        return self.op.gm_write


class XGuard:
    __slots__ = ("cond", "taken", "index", "expr")

    def __init__(self, cond: Callable[[Any], Any], taken: bool, index: int, expr: Any = None) -> None:
        self.expr = expr
        self.cond = cond
        self.taken = taken
        self.index = index


class XPath:
    __slots__ = ("decisions", "items", "guard_pos")

    def __init__(self, decisions: tuple[bool, ...], items: list) -> None:
        self.decisions = decisions
        self.items = items
        self.guard_pos: dict[int, int] = {}


class XRegion:
    __slots__ = ("paths", "lookup", "npuarch", "blas")

    def __init__(self) -> None:
        self.paths: list[XPath] = []
        self.lookup: dict[tuple[bool, ...], XPath] = {}
        self.npuarch: str | None = None
        """the device architecture this body was prepared for (kernel bodies only; `_promote`)"""
        self.blas = True
        """the program has a matmul, the one kernel that calls BLAS (kernel bodies only; `_blas.one_blas_thread`)"""

    def branch(self, path: XPath, guard: XGuard) -> XPath:
        """The path that went the other way at ``guard`` (it continues right after it: `XPath.guard_pos`)."""
        return self.lookup[path.decisions[: guard.index] + (not guard.taken,)]

    def add(self, p: XPath) -> None:
        for i, it in enumerate(p.items):
            if type(it) is XGuard:
                p.guard_pos[it.index] = i
        for g in range(len(p.decisions)):
            self.lookup.setdefault(p.decisions[: g + 1], p)
        self.paths.append(p)


class Retripped:
    """The prepared form of a program run with other stops for some of its loops (lid -> stop): what
    `_trace_cache.retrip` derives - the same program but those trip counts - runs on the prepared form of the program
    it was derived from, so that preparing it (and the loops' batch plans) is not done again per trip count."""

    __slots__ = ("region", "stops", "npuarch")

    def __init__(self, region: XRegion, stops: dict[int, int]) -> None:
        self.region = region
        self.stops = stops
        self.npuarch = region.npuarch


class XLoop:
    """A loop ready to run. Its body is prepared when it is first read (`body`), i.e. when the loop first runs
    an iteration: a ``loop_unroll`` kernel traces one loop per unroll factor (llada2_gate_select: 8, of which one
    or two run at a given size), and preparing the bodies that never run was most of its preparation."""

    __slots__ = ("lid", "name", "start", "stop", "step", "_body", "_cx", "file", "line", "plan", "free", "lp", "lanes")

    def __init__(self, lp: Loop, start: Any, stop: Any, step: Any, cx: _Ctx) -> None:
        self.lp = lp
        self.lid = lp.lid
        self.name = lp.name
        self.start = start
        self.stop = stop
        self.step = step
        self._body: XRegion | None = None
        self._cx = cx
        self.file = lp.file
        self.line = lp.line
        self.plan: Any = None
        """batch plan cache: None = not analysed, False = not batchable, else a `_batch.BatchPlan` or, for a
        loop that carries state, a `_carry.PrefixPlan`"""
        self.free: tuple[int, ...] = ()
        """storage keys last read inside this loop (dropped when it ends)"""
        self.lanes: Any = None
        """lane plan cache (`_lanes`): None = not analysed, False = the body cannot run as lanes"""

    def bounds(self, env: Any) -> tuple[int, int, int]:
        """(start, stop, step) of this run of the loop; the stop of a derived trip count (`Retripped`: ``env.stops``)
        wins over the program's."""
        start = self.start(env)
        stops = env.stops
        stop = stops[self.lid] if stops is not None and self.lid in stops else self.stop(env)
        return start, stop, self.step(env)

    @property
    def body(self) -> XRegion:
        """The prepared body (made on first use and kept: a prepared program is shared by the calls of a cached
        program). Two threads may both prepare it; either result is the same and one is kept. A body the
        builders cannot take raises `ProgramError` when the loop first runs (an unprepared body never runs)."""
        b = self._body
        if b is None:
            try:
                b = _region(self.lp.body, self._cx)
            except ProgramError:
                raise
            except Exception as exc:  # noqa: BLE001 - as `execute` refuses a top-level body it cannot prepare
                raise ProgramError(f"the device cannot prepare this program: {type(exc).__name__}: {exc}") from None
            if self._body is None:
                self._body = b
            b = self._body
        return b


class _Ctx:
    """What builders get besides the op: expression compilation with a per-program memo; and what preparing a
    region later (`XLoop.body`) needs: the drops `_liveness` computed on the program."""

    def __init__(self, declared: dict[int, str] | None = None, params: frozenset[int] = frozenset()) -> None:
        self.memo: dict[int, Callable[[Any], Any]] = {}
        self.params = params
        """storage keys of the kernel arguments and of meta ops' results on them (`_param_aliases`)"""
        self.declared = declared
        """storage key -> declared dtype when BF16 intermediates are promoted (A2/A3), else None"""
        self.free: dict[tuple[int, int], tuple[int, ...]] = {}
        """(id of a single-path program region, item index) -> storage keys to drop after that item"""

    def expr(self, e: Any) -> Callable[[Any], Any]:
        return compile_expr(e, self.memo)

    def exprs(self, es: Any) -> list[Callable[[Any], Any]]:
        return [compile_expr(e, self.memo) for e in es]


def _op(op: Op, cx: _Ctx) -> XOp:
    spec = KINDS.get(op.kind)
    if spec is None:
        raise ProgramError(f"unknown op kind {op.kind!r}")
    params = promote_params(op, cx.declared) if cx.declared is not None and op.kind in PROMOTING else None
    p = params if params is not None else op.params
    if op.kind == "view" and not p["param"] and p["src"] in cx.params:  # a window of a reshape of an argument
        p = params = dict(p, param=True)
    run, brun = spec.build(p, op, cx)
    # what the kernel asked for, before promotion (only these two kinds can diverge: one call less per other op)
    diverged = divergence_warning(op.kind, op.name, op.params) if op.kind in _DIVERGING else None
    if diverged is not None:  # the device says it too, from the program alone (`_divergence`)
        run = warning_first(run, *diverged, op)
        brun = warning_first(brun, *diverged, op) if brun is not None else None
    x = XOp(op, run, brun)
    if params is not None:
        x.params = params
    return x


def _param_reads(op: Op, params: frozenset[int]) -> tuple[int, ...]:
    """The kernel arguments an op reads whole, for the bytes-in counter: not a view (it counts its own window),
    not a meta op (reshape, unsqueeze: no data moves), and not the target of an in-place write (scatter)."""
    if op.name == "view" or op.cls == "meta":
        return ()
    ins = op.ins[1:] if op.gm_write and op.name not in ("move", "assemble") else op.ins
    return tuple(filter(params.__contains__, ins))


def _param_aliases(metas: list[tuple[int, int]], keys: frozenset[int]) -> frozenset[int]:
    """The kernel arguments' storage keys and those of every meta op's result on one (a ``reshape`` or
    ``unsqueeze`` of an argument, of such a result, ...): reading one reads the argument's bytes.

    Why: the bytes-in counter (and the perf stage's estimate built on it) saw a kernel that reads its input through
    ``pypto.reshape(x, ..., inplace=True)`` and views of the result - bn_training_reduce - as reading nothing,
    and an agent could lower its estimate that way. ``metas``: (first input, result) of every meta op with both
    (`_Live.walk` collects them); repeated to a fixed point, so their order does not matter."""
    out = set(keys)
    grew = True
    while grew:
        grew = False
        for src, key in metas:
            if src in out and key not in out:
                out.add(key)
                grew = True
    return frozenset(out)


def _region(r: Region, cx: _Ctx) -> XRegion:
    """The executable form of one program region (its loops' bodies are prepared when they first run)."""
    out = XRegion()
    free = cx.free if len(r.paths) == 1 else None
    rid = id(r)
    for p in r.paths:
        items: list = []
        for i, it in enumerate(p.items):
            x: Any
            if isinstance(it, Op):
                x = _op(it, cx)
                x.param_reads = _param_reads(it, cx.params)
            elif isinstance(it, Guard):
                x = XGuard(cx.expr(it.cond), bool(it.taken), it.index, it.cond)
            elif isinstance(it, Loop):
                x = XLoop(it, cx.expr(it.start), cx.expr(it.stop), cx.expr(it.step), cx)
            else:
                raise ProgramError(f"unknown program item {type(it).__name__}")
            if free is not None:
                f = free.get((rid, i))
                if f:
                    x.free = f
            items.append(x)
        out.add(XPath(tuple(p.decisions), items))
    return out


def prepare(program: KernelProgram, npuarch: str = "DAV_2201") -> XRegion:
    """The executable form of a program's body on a device of architecture ``npuarch`` (``pypto.platform.npuarch``:
    on A2/A3 BF16 intermediates are kept in FP32, `_promote`). Loop bodies are prepared when they first run
    (`XLoop.body`); which values each item drops (`_liveness`) is decided here, on the whole program."""
    keys = frozenset(p.key for p in program.params)
    # one walk of the program for the liveness facts, the declared dtypes (`_promote.declared_dtypes`, in the same
    # order: arguments first, then program order), the meta ops and whether it has a matmul (four walks before)
    lv = _Live({p.key: p.dtype for p in program.params} if bf16_promoted(npuarch) else None)
    lv.walk(program.body)
    cx = _Ctx(lv.declared, _param_aliases(lv.metas, keys))
    cx.free = lv.drops(set(keys))
    body = _region(program.body, cx)
    body.npuarch = npuarch
    body.blas = lv.matmul
    return body


# ---- liveness: drop intermediate tensors after their last reader -------------------------------------------

def _expr_keys(e: Any, out: set[int]) -> None:
    if type(e) is tuple:
        if e[0] == "read":
            out.add(e[1])
            for x in e[2]:
                _expr_keys(x, out)
        elif e[0] == "bin":
            _expr_keys(e[2], out)
            _expr_keys(e[3], out)


_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {}


def _fields(kind: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Parameter names of a kind by type: key, keys, expr, exprs, produced."""
    f = _FIELDS.get(kind)
    if f is None:
        spec = KINDS[kind]
        by: dict[str, list[str]] = {"key": [], "keys": [], "expr": [], "exprs": []}
        for name, t in spec.schema.items():
            base = t.rstrip("?")
            if base in by:
                by[base].append(name)
        f = _FIELDS[kind] = (tuple(by["key"]), tuple(by["keys"]), tuple(by["expr"]), tuple(by["exprs"]),
                             tuple(spec.produces))
    return f


class _Live:
    """The walk of `_liveness` (a class, not a recursive closure: a closure that calls itself is a reference cycle,
    and everything it holds - a list per storage key - was left to the cyclic collector, whose young collection
    when a kernel call ends cost ~2 ms on attn_softmax's 16-tile call)."""

    __slots__ = ("counter", "declared", "first", "last", "matmul", "metas", "multi", "producer", "regions",
                 "written")

    def __init__(self, declared: dict[int, str] | None = None) -> None:
        self.first: dict[int, int] = {}
        """key -> walk number of the first item using it"""
        self.last: dict[int, int] = {}
        """key -> walk number of the last item using it (walk numbers only grow)"""
        self.producer: dict[int, tuple[int, int, int]] = {}
        """key -> (walk number, region id, item index) of the first op producing it"""
        self.multi: set[int] = set()
        """keys produced by more than one op (never dropped)"""
        self.written: set[int] = set()
        self.regions: dict[int, tuple[bool, list[int], int]] = {}
        """region id -> (whether it has a single path, walk numbers of its first path's items, last walk number
        inside it)"""
        self.counter = 0
        self.declared = declared
        """when given (seeded with the arguments' dtypes): storage key -> the dtype the kernel declared for it, the
        first one in program order (`_promote.declared_dtypes`)"""
        self.metas: list[tuple[int, int]] = []
        """(first input, result) of each meta op (`_param_aliases`)"""
        self.matmul = False
        """the program has a matmul (`XRegion.blas`)"""

    def use(self, keys: Any, n: int) -> None:
        first, last = self.first, self.last
        for k in keys:
            if k not in first:
                first[k] = n
            last[k] = n

    def walk(self, r: Region) -> int:  # noqa: C901 - one pass over the items, the per-op key extraction inline
        starts: list[int] = []
        single = len(r.paths) == 1
        first, last, producer, multi = self.first, self.last, self.producer, self.multi
        declared = self.declared
        fields = _FIELDS
        rid = id(r)
        n = self.counter  # a local, stored back around a nested walk and at the end
        for p in r.paths:
            for i, it in enumerate(p.items):
                n += 1
                if single:
                    starts.append(n)
                if isinstance(it, Op):
                    # the keys the op uses in any way, as one set (C-level updates: the per-key Python of this walk
                    # was most of preparation's bytecodes)
                    f = fields.get(it.kind)
                    key_f, keys_f, expr_f, exprs_f, prod_f = f if f is not None else _fields(it.kind)
                    params = it.params
                    outs = it.outs
                    ks: set[Any] = {*it.ins, *outs, *it.writes, it.out_key, *map(params.get, key_f)}
                    for name in keys_f:
                        v = params.get(name)
                        if v is not None:
                            ks.update(v)
                    if expr_f or exprs_f:
                        for name in expr_f:
                            v = params.get(name)
                            if type(v) is tuple:
                                _expr_keys(v, ks)
                        for name in exprs_f:
                            v = params.get(name)
                            if v is not None:
                                for x in v:
                                    if type(x) is tuple:
                                        _expr_keys(x, ks)
                    ks.discard(None)
                    if it.writes:
                        self.written.update(it.writes)
                    kind = it.kind
                    if declared is not None:
                        for k, (dt, _) in zip(outs, it.types, strict=False):
                            declared.setdefault(k, dt)
                        if kind == "assemble":
                            declared.setdefault(params["dst"], params["ddtype"])
                    if it.cls == "meta" and it.ins and it.out_key is not None:
                        self.metas.append((it.ins[0], it.out_key))
                    elif kind == "matmul":
                        self.matmul = True
                    first.update(dict.fromkeys(ks.difference(first), n))
                    last.update(dict.fromkeys(ks, n))
                    # the keys it produces, each once
                    if prod_f:
                        got = {*outs, *map(params.get, prod_f)}
                        got.discard(None)
                        produced: Any = got
                    else:
                        produced = outs
                    if len(produced) == 1:
                        for k in produced:
                            if k in producer:
                                multi.add(k)
                            else:
                                producer[k] = (n, rid, i)
                    elif produced:
                        produced = set(produced)
                        multi.update(produced.intersection(producer))
                        producer.update(dict.fromkeys(produced.difference(producer), (n, rid, i)))
                elif isinstance(it, Loop):
                    ek: set[int] = set()
                    for e in (it.start, it.stop, it.step):
                        _expr_keys(e, ek)
                    self.use(ek, n)
                    self.counter = n
                    n = self.walk(it.body)
                elif isinstance(it, Guard):
                    ek = set()
                    _expr_keys(it.cond, ek)
                    self.use(ek, n)
        self.counter = n
        self.regions[rid] = (single, starts, n)
        return n

    def drops(self, params: set[int]) -> dict[tuple[int, int], tuple[int, ...]]:
        """`_liveness`'s result from the facts of the walk."""
        first, last, producer, regions = self.first, self.last, self.producer, self.regions
        drops: dict[tuple[int, int], list[int]] = {}
        for k in producer.keys() - self.multi - params - self.written:
            n0, rid, pos = producer[k]
            single, starts, end = regions[rid]
            if not single:
                continue
            lu = last.get(k)
            if lu is not None and (first[k] < n0 or lu > end):
                continue  # read before it is produced (carried over from the previous iteration) or outside the region
            lst = bisect_right(starts, lu) - 1 if lu is not None else pos
            drops.setdefault((rid, max(lst, pos)), []).append(k)
        return {ri: tuple(sorted(keys)) for ri, keys in drops.items()}


def _liveness(body: Region, params: set[int]) -> dict[tuple[int, int], tuple[int, ...]]:
    """The keys to drop after each op (and loop) of a program: values produced by an op in a single-path region,
    never written in place, all of whose readers lie later in that region (nested loops included).

    Why: the executor kept every intermediate of a kernel alive until the call ended - a kernel with 20 ops
    on whole 56 MB tiles held 1.2 GB; a dropped buffer is memory the next op can reuse. Anything the analysis
    is unsure about (several control paths, a value read before it is produced - carried from the previous
    iteration -, a value read outside the region that produces it, an in-place target) is kept, as before.

    How: items are numbered in walk order (an item's nested items follow it), so the items of a region from its
    ``pos``-th item to its end are one interval of numbers; a value can be dropped iff every use falls in the
    interval that starts at its producer. (This replaced a walk that kept each use's chain of enclosing items
    and compared chains: the same answer - `tests/emulator/test_liveness.py` checks both on every corpus
    kernel - for about a third of the cost, which was half of `prepare` on a small kernel.) It reads the program,
    not its prepared form, so that loop bodies can be prepared later: the result is keyed by (id of the program
    region, index of the item in its only path).
    """
    lv = _Live()
    lv.walk(body)
    return lv.drops(params)
