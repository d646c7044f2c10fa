"""The traced graph (trace-side IR): op nodes, guards, loop nodes, paths and regions.

A kernel body is traced once per control path into items: op nodes (a device op kind with its parameters,
which may still hold SymbolicScalars and `Late` values), guards (a recorded runtime ``if``), and loop nodes
whose body is a `Region`. A region holds one item list per control path; paths share their prefix up to the
guard where they diverge, and storage keys are assigned by creation order so the tensors created at the same
position in two paths share storage. The tracer (`_trace`) builds it; `_lower` turns it into the plain-data
`device.KernelProgram` that the device executor runs - nothing here is ever executed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Guard", "Late", "LoopNode", "OpNode", "Path", "Region"]


class Late:
    """A parameter value known only when the whole kernel is traced (e.g. whether a tensor is written later)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn


@dataclass(slots=True, eq=False)
class OpNode:
    """One recorded op: device kind ``impl`` with ``params`` (see `device._kreg` for each kind's schema)."""

    name: str
    impl: str
    params: dict[str, Any]
    out_key: int | None
    file: str | None
    line: int | None
    tile_elems: int = 0
    kind: str = "vector"  # vector | cube | move | meta
    gm_write: bool = False
    target: str | None = None
    ins: tuple = ()
    """storage keys read (counters and records)"""
    outs: tuple = ()
    """storage keys produced"""
    types: tuple = ()
    """(DataType, rank) of each output"""
    writes: tuple = ()
    """storage keys written in place"""
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
    site: str | None = None
    """the non-tensor parameter ``n`` of a rolled ``for t in range(n)`` (`_frontend` derives the programs of
    other values of ``n`` from this one, `_trace_cache.retrip`)"""


@dataclass(slots=True, eq=False)
class Path:
    decisions: tuple[bool, ...]
    items: list = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Region:
    paths: list[Path] = field(default_factory=list)

    def add(self, p: Path) -> None:
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
