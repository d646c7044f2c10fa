"""The traced graph (the emulator's IR): op nodes, guards, loop nodes, paths and regions.

A kernel body is traced once per control path into items: op nodes (closures over tensor storage keys and
SymbolicScalar parameters), guards (a recorded runtime ``if``), and loop nodes whose body is a `Region`.
A region holds one item list per control path; paths share their prefix up to the guard where they
diverge, and storage keys are assigned by creation order so the tensors created at the same position in
two paths share storage. Pure data: the tracer (`_trace`) builds it, the executor (`_executor`) and the
batch executor (`_batch`) run it, so this module imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runtime.emulator._buffers import Env

__all__ = ["Guard", "LoopNode", "OpNode", "Path", "Region"]

@dataclass(slots=True, eq=False)
class OpNode:
    """One recorded op: ``run(env)`` reads input buffers and stores its output buffer."""

    name: str
    run: Callable[[Env], None]
    out_key: int | None
    file: str | None
    line: int | None
    tile_elems: int = 0
    kind: str = "vector"  # vector | cube | move | meta
    gm_write: bool = False
    target: str | None = None
    brun: Callable[[Env, Any], None] | None = None
    """batched implementation (a leading iteration axis), None when the op cannot be batched"""
    ins: tuple = ()
    """storage keys read"""
    info: dict | None = None
    """view/assemble geometry for the batch planner: offs, shape, vs, src/dst key"""
    nid: int = 0
    """traced-op id (stable within one trace)"""
    out: Any = None
    """the output Tensor (for its current name in records)"""
    attrs: dict | None = None
    names: dict | None = None
    """storage key -> tensor name for the inputs (records link kernel arguments / locals by name)"""
    source: str | None = None


@dataclass(slots=True, eq=False)
class Guard:
    cond: Any  # SymbolicScalar
    taken: bool
    index: int
    file: str | None = None
    line: int | None = None


@dataclass(slots=True, eq=False)
class LoopNode:
    start: Any
    stop: Any
    step: Any
    loop: Any  # the LoopInfo object (identity = symbol key)
    name: str
    body: Region | None = None
    file: str | None = None
    line: int | None = None
    plan: Any = None
    """batch plan cache: None = not analysed, False = not batchable, else a BatchPlan"""


@dataclass(slots=True, eq=False)
class Path:
    decisions: tuple[bool, ...]
    items: list = field(default_factory=list)
    guard_pos: dict[int, int] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class Region:
    paths: list[Path] = field(default_factory=list)
    lookup: dict[tuple[bool, ...], Path] = field(default_factory=dict)

    def add(self, p: Path) -> None:
        for i, it in enumerate(p.items):
            if type(it) is Guard:
                p.guard_pos[it.index] = i
        for g in range(len(p.decisions)):
            self.lookup.setdefault(p.decisions[: g + 1], p)
        self.paths.append(p)

    def count_ops(self) -> int:
        n = 0
        for p in self.paths:
            for it in p.items:
                if type(it) is LoopNode and it.body is not None:
                    n += it.body.count_ops()
                elif type(it) is OpNode:
                    n += 1
        return n
