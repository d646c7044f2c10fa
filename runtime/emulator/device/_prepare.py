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
from runtime.emulator.device._expr import compile_expr
from runtime.emulator.device._kreg import KINDS
from runtime.emulator.device._program import Guard, KernelProgram, Loop, Op, Region
from runtime.emulator.device._promote import bf16_promoted, declared_dtypes, promote_params
from runtime.emulator.device._types import ProgramError

__all__ = ["XGuard", "XLoop", "XOp", "XPath", "XRegion", "prepare"]


class XOp:
    """An op ready to run: its data plus ``run`` / ``brun`` built by its kind."""

    __slots__ = ("op", "name", "file", "line", "ins", "out_key", "tile_elems", "cls", "gm_write", "params",
                 "kind", "run", "brun", "free", "param_reads")

    def __init__(self, op: Op, run: Callable[[Any], None], brun: Callable[[Any], None] | None) -> None:
        self.op = op
        self.name = op.name
        self.file = op.file
        self.line = op.line
        self.ins = op.ins
        self.out_key = op.out_key
        self.tile_elems = op.tile_elems
        self.cls = op.cls
        self.gm_write = op.gm_write
        self.params = op.params
        self.kind = op.kind
        self.run = run
        self.brun = brun
        self.free: tuple[int, ...] = ()
        """storage keys nobody reads after this op (`_liveness`): the executor drops them once it has run"""
        self.param_reads: tuple[int, ...] | None = None
        """kernel arguments this op reads whole (`Env.count_param_reads`); None until `prepare` knows the params"""


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
    __slots__ = ("paths", "lookup", "npuarch")

    def __init__(self) -> None:
        self.paths: list[XPath] = []
        self.lookup: dict[tuple[bool, ...], XPath] = {}
        self.npuarch: str | None = None
        """the device architecture this body was prepared for (kernel bodies only; `_promote`)"""

    def add(self, p: XPath) -> None:
        for i, it in enumerate(p.items):
            if type(it) is XGuard:
                p.guard_pos[it.index] = i
        for g in range(len(p.decisions)):
            self.lookup.setdefault(p.decisions[: g + 1], p)
        self.paths.append(p)


class XLoop:
    __slots__ = ("lid", "name", "start", "stop", "step", "body", "file", "line", "plan", "free", "lp")

    def __init__(self, lp: Loop, start: Any, stop: Any, step: Any, body: XRegion) -> None:
        self.lp = lp
        self.lid = lp.lid
        self.name = lp.name
        self.start = start
        self.stop = stop
        self.step = step
        self.body = body
        self.file = lp.file
        self.line = lp.line
        self.plan: Any = None
        """batch plan cache: None = not analysed, False = not batchable, else a `_batch.BatchPlan`"""
        self.free: tuple[int, ...] = ()
        """storage keys last read inside this loop (dropped when it ends)"""


class _Ctx:
    """What builders get besides the op: expression compilation with a per-program memo."""

    def __init__(self, declared: dict[int, str] | None = None, params: frozenset[int] = frozenset()) -> None:
        self.memo: dict[int, Callable[[Any], Any]] = {}
        self.params = params
        """storage keys of the kernel arguments"""
        self.declared = declared
        """storage key -> declared dtype when BF16 intermediates are promoted (A2/A3), else None"""

    def expr(self, e: Any) -> Callable[[Any], Any]:
        return compile_expr(e, self.memo)

    def exprs(self, es: Any) -> list[Callable[[Any], Any]]:
        return [compile_expr(e, self.memo) for e in es]


def _op(op: Op, cx: _Ctx) -> XOp:
    spec = KINDS.get(op.kind)
    if spec is None:
        raise ProgramError(f"unknown op kind {op.kind!r}")
    params = promote_params(op, cx.declared) if cx.declared is not None else None
    run, brun = spec.build(params if params is not None else op.params, op, cx)
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
    return tuple(k for k in ins if k in params)


def _region(r: Region, cx: _Ctx) -> XRegion:
    out = XRegion()
    for p in r.paths:
        items: list = []
        for it in p.items:
            if isinstance(it, Op):
                x = _op(it, cx)
                x.param_reads = _param_reads(it, cx.params)
                items.append(x)
            elif isinstance(it, Guard):
                items.append(XGuard(cx.expr(it.cond), bool(it.taken), it.index, it.cond))
            elif isinstance(it, Loop):
                items.append(XLoop(it, cx.expr(it.start), cx.expr(it.stop), cx.expr(it.step), _region(it.body, cx)))
            else:
                raise ProgramError(f"unknown program item {type(it).__name__}")
        out.add(XPath(tuple(p.decisions), items))
    return out


def prepare(program: KernelProgram, npuarch: str = "DAV_2201") -> XRegion:
    """The executable form of a program's body on a device of architecture ``npuarch`` (``pypto.platform.npuarch``:
    on A2/A3 BF16 intermediates are kept in FP32, `_promote`)."""
    keys = frozenset(p.key for p in program.params)
    body = _region(program.body, _Ctx(declared_dtypes(program) if bf16_promoted(npuarch) else None, keys))
    body.npuarch = npuarch
    _liveness(body, set(keys))
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


def _op_keys(op: Op) -> tuple[set[int], set[int]]:
    """(keys the op uses in any way, keys it produces as new values)."""
    used = set(op.ins)
    used.update(op.outs)
    used.update(op.writes)
    if op.out_key is not None:
        used.add(op.out_key)
    key_f, keys_f, expr_f, exprs_f, prod_f = _fields(op.kind)
    params = op.params
    for name in key_f:
        v = params.get(name)
        if v is not None:
            used.add(v)
    for name in keys_f:
        v = params.get(name)
        if v is not None:
            used.update(v)
    for name in expr_f:
        v = params.get(name)
        if type(v) is tuple:
            _expr_keys(v, used)
    for name in exprs_f:
        v = params.get(name)
        if v is not None:
            for x in v:
                if type(x) is tuple:
                    _expr_keys(x, used)
    produced = set(op.outs)
    for name in prod_f:
        v = params.get(name)
        if v is not None:
            produced.add(v)
    return used, produced


def _liveness(body: XRegion, params: set[int]) -> None:
    """Give each op (and loop) the keys to drop after it: values produced by an op in a single-path region,
    never written in place, all of whose readers lie later in that region (nested loops included).

    Why: the executor kept every intermediate of a kernel alive until the call ended - a kernel with 20 ops
    on whole 56 MB tiles held 1.2 GB; a dropped buffer is memory the next op can reuse. Anything the analysis
    is unsure about (several control paths, a value read before it is produced - carried from the previous
    iteration -, a value read outside the region that produces it, an in-place target) is kept, as before.

    How: items are numbered in walk order (an item's nested items follow it), so the items of a region from its
    ``pos``-th item to its end are one interval of numbers; a value can be dropped iff every use falls in the
    interval that starts at its producer. (This replaced a walk that kept each use's chain of enclosing items
    and compared chains: the same answer - `tests/emulator/test_liveness.py` checks both on every corpus
    kernel - for about a third of the cost, which was half of `prepare` on a small kernel.)
    """
    uses: dict[int, list[int]] = {}
    """key -> walk numbers of the items using it"""
    producers: dict[int, list[tuple[int, int, int]]] = {}
    """key -> (walk number, region id, item index) of each op producing it"""
    written: set[int] = set()
    regions: dict[int, tuple[XRegion, list[int], int]] = {}
    """region id -> (region, walk numbers of its first path's items, last walk number inside it)"""
    counter = [0]

    def use(keys: set[int], n: int) -> None:
        for k in keys:
            lst = uses.get(k)
            if lst is None:
                uses[k] = [n]
            else:
                lst.append(n)

    def walk(r: XRegion) -> int:
        starts: list[int] = []
        single = len(r.paths) == 1
        for p in r.paths:
            for i, it in enumerate(p.items):
                n = counter[0] = counter[0] + 1
                if single:
                    starts.append(n)
                t = type(it)
                if t is XOp:
                    used, produced = _op_keys(it.op)
                    written.update(it.op.writes)
                    use(used, n)
                    for k in produced:
                        producers.setdefault(k, []).append((n, id(r), i))
                elif t is XLoop:
                    ks: set[int] = set()
                    for e in (it.lp.start, it.lp.stop, it.lp.step):
                        _expr_keys(e, ks)
                    use(ks, n)
                    walk(it.body)
                elif t is XGuard:
                    ks = set()
                    _expr_keys(it.expr, ks)
                    use(ks, n)
        regions[id(r)] = (r, starts, counter[0])
        return counter[0]

    walk(body)
    drops: dict[tuple[int, int], list[int]] = {}
    for k, prods in producers.items():
        if k in params or k in written or len(prods) != 1:
            continue
        n0, rid, pos = prods[0]
        r, starts, end = regions[rid]
        if len(r.paths) != 1:
            continue
        us = uses.get(k, ())
        if us and (min(us) < n0 or max(us) > end):
            continue  # read before it is produced (carried over from the previous iteration) or outside the region
        last = bisect_right(starts, max(us)) - 1 if us else pos
        drops.setdefault((rid, max(last, pos)), []).append(k)
    for (rid, i), keys in drops.items():
        it = regions[rid][0].paths[0].items[i]
        it.free = tuple(sorted(keys))
