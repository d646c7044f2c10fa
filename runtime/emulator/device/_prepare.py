"""Preparation of a program for execution: every op gets its run functions from the kind registry, every
expression its compiled evaluator, every region its guard lookup tables.

The result (`XRegion`/`XPath`/`XOp`/`XGuard`/`XLoop`) lives only inside the executing process; the program
itself stays plain data.
"""

from __future__ import annotations

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
                 "kind", "run", "brun", "free")

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

    def __init__(self, declared: dict[int, str] | None = None) -> None:
        self.memo: dict[int, Callable[[Any], Any]] = {}
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


def _region(r: Region, cx: _Ctx) -> XRegion:
    out = XRegion()
    for p in r.paths:
        items: list = []
        for it in p.items:
            if isinstance(it, Op):
                items.append(_op(it, cx))
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
    body = _region(program.body, _Ctx(declared_dtypes(program) if bf16_promoted(npuarch) else None))
    body.npuarch = npuarch
    _liveness(body, {p.key for p in program.params})
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
    """
    uses: dict[int, list[tuple]] = {}
    """key -> for each use, the chain of (region id, item index) from the kernel body to the using item"""
    producers: dict[int, list[tuple]] = {}
    written: set[int] = set()
    regions: dict[int, XRegion] = {}

    def walk(r: XRegion, chain: tuple) -> None:
        regions[id(r)] = r
        for p in r.paths:
            for i, it in enumerate(p.items):
                here = chain + ((id(r), i),)
                t = type(it)
                if t is XOp:
                    used, produced = _op_keys(it.op)
                    written.update(it.op.writes)
                    for k in used:
                        uses.setdefault(k, []).append(here)
                    for k in produced:
                        producers.setdefault(k, []).append(here)
                elif t is XLoop:
                    ks: set[int] = set()
                    for e in (it.lp.start, it.lp.stop, it.lp.step):
                        _expr_keys(e, ks)
                    for k in ks:
                        uses.setdefault(k, []).append(here)
                    walk(it.body, here)
                elif t is XGuard:
                    ks = set()
                    _expr_keys(it.expr, ks)
                    for k in ks:
                        uses.setdefault(k, []).append(here)

    walk(body, ())
    drops: dict[tuple[int, int], list[int]] = {}
    for k, prods in producers.items():
        if k in params or k in written or len(prods) != 1:
            continue
        chain = prods[0]
        rid, pos = chain[-1]
        if len(regions[rid].paths) != 1:
            continue
        depth = len(chain) - 1
        last = pos
        ok = True
        for u in uses.get(k, ()):
            if len(u) <= depth or u[:depth] != chain[:depth] or u[depth][0] != rid:
                ok = False  # read outside the producing region
                break
            j = u[depth][1]
            if j < pos:
                ok = False  # read before it is produced: carried over from the previous iteration
                break
            last = max(last, j)
        if ok:
            drops.setdefault((rid, last), []).append(k)
    for (rid, i), keys in drops.items():
        it = regions[rid].paths[0].items[i]
        it.free = tuple(sorted(keys))
