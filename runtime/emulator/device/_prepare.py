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
from runtime.emulator.device._types import ProgramError

__all__ = ["XGuard", "XLoop", "XOp", "XPath", "XRegion", "prepare"]


class XOp:
    """An op ready to run: its data plus ``run`` / ``brun`` built by its kind."""

    __slots__ = ("op", "name", "file", "line", "ins", "out_key", "tile_elems", "cls", "gm_write", "params",
                 "kind", "run", "brun")

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


class XGuard:
    __slots__ = ("cond", "taken", "index")

    def __init__(self, cond: Callable[[Any], Any], taken: bool, index: int) -> None:
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
    __slots__ = ("paths", "lookup")

    def __init__(self) -> None:
        self.paths: list[XPath] = []
        self.lookup: dict[tuple[bool, ...], XPath] = {}

    def add(self, p: XPath) -> None:
        for i, it in enumerate(p.items):
            if type(it) is XGuard:
                p.guard_pos[it.index] = i
        for g in range(len(p.decisions)):
            self.lookup.setdefault(p.decisions[: g + 1], p)
        self.paths.append(p)


class XLoop:
    __slots__ = ("lid", "name", "start", "stop", "step", "body", "file", "line", "plan")

    def __init__(self, lp: Loop, start: Any, stop: Any, step: Any, body: XRegion) -> None:
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


class _Ctx:
    """What builders get besides the op: expression compilation with a per-program memo."""

    def __init__(self) -> None:
        self.memo: dict[int, Callable[[Any], Any]] = {}

    def expr(self, e: Any) -> Callable[[Any], Any]:
        return compile_expr(e, self.memo)

    def exprs(self, es: Any) -> list[Callable[[Any], Any]]:
        return [compile_expr(e, self.memo) for e in es]


def _op(op: Op, cx: _Ctx) -> XOp:
    spec = KINDS.get(op.kind)
    if spec is None:
        raise ProgramError(f"unknown op kind {op.kind!r}")
    run, brun = spec.build(op.params, op, cx)
    return XOp(op, run, brun)


def _region(r: Region, cx: _Ctx) -> XRegion:
    out = XRegion()
    for p in r.paths:
        items: list = []
        for it in p.items:
            if isinstance(it, Op):
                items.append(_op(it, cx))
            elif isinstance(it, Guard):
                items.append(XGuard(cx.expr(it.cond), bool(it.taken), it.index))
            elif isinstance(it, Loop):
                items.append(XLoop(it, cx.expr(it.start), cx.expr(it.stop), cx.expr(it.step), _region(it.body, cx)))
            else:
                raise ProgramError(f"unknown program item {type(it).__name__}")
        out.add(XPath(tuple(p.decisions), items))
    return out


def prepare(program: KernelProgram) -> XRegion:
    """The executable form of a program's body."""
    return _region(program.body, _Ctx())
