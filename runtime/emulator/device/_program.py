"""The kernel program: a traced kernel as plain data (no callables, no references to candidate objects).

Why: the process that runs the candidate's Python traces the kernel, but must not execute it - a closure
built inside the candidate's interpreter can be reached and rewritten by candidate code. The tracer
therefore lowers each traced kernel to a `KernelProgram` made only of ints, strings, floats, tuples, lists,
dicts and numpy constants, which can be encoded (`_codec`), sent to another process, validated there and run
by code that lives only there (`_exec`).

Expressions (`Expr`) are integers or tuples: ``("sym", name)`` a dynamic dim, ``("idx", lid)`` a loop index,
``("bin", op, a, b)``, ``("read", key, (index exprs...), tensor_name)`` an INT32 element read at run time and
``("flag", "begin" | "end", lid)`` (``pypto.is_loop_begin/end``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Union

__all__ = ["BIN_OPS", "Expr", "Guard", "KernelProgram", "Loop", "Op", "Param", "Path", "Region", "SymBind"]

Expr = Union[int, tuple]  # noqa: UP007 - a runtime alias used in annotations and isinstance-free code

BIN_OPS = ("+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&", "|", "min", "max")
"""Binary operators of an expression ("/" is floor division, "&"/"|" are logical and/or giving 0/1)."""

OP_CLASSES = ("vector", "cube", "move", "meta")


@dataclass(slots=True, eq=False)
class Op:
    """One recorded op: a device implementation ``kind`` with its parameters and the storage keys it uses."""

    kind: str
    """device implementation (closed registry `_kernels.KINDS`)"""
    name: str
    """public pypto op name (counters, messages, records)"""
    params: dict[str, Any]
    ins: tuple[int, ...] = ()
    """storage keys read"""
    outs: tuple[int, ...] = ()
    """storage keys produced (new values)"""
    writes: tuple[int, ...] = ()
    """storage keys written in place (assemble / move / setitem / scatter destinations)"""
    out_key: int | None = None
    """the key the cost counters look at (first output, or the destination of a write)"""
    cls: str = "vector"
    """vector | cube | move | meta"""
    tile_elems: int = 0
    gm_write: bool = False
    file: str | None = None
    line: int | None = None
    types: tuple[tuple[str, int], ...] = ()
    """(numpy dtype name or "?", rank) of each output (checked by the validator)"""
    # debug metadata: only op records (bisect) use it
    nid: int = 0
    target: str | None = None
    out_name: str | None = None
    names: dict[int, str | None] | None = None
    source: str | None = None
    attrs: dict[str, Any] | None = None


@dataclass(slots=True, eq=False)
class Guard:
    """A runtime ``if`` recorded while tracing: the path continues while ``cond`` evaluates to ``taken``."""

    cond: Expr
    taken: bool
    index: int
    file: str | None = None
    line: int | None = None


@dataclass(slots=True, eq=False)
class Loop:
    """A ``pypto.loop``: ``body`` runs for ``range(start, stop, step)`` with ``("idx", lid)`` bound."""

    lid: int
    name: str
    start: Expr
    stop: Expr
    step: Expr
    body: Region
    file: str | None = None
    line: int | None = None


@dataclass(slots=True, eq=False)
class Path:
    """One control path of a region: the guard decisions it took and its items in order."""

    decisions: tuple[bool, ...]
    items: list[Op | Guard | Loop] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Region:
    """A kernel body or loop body: one path per traced control path (the first is tried first)."""

    paths: list[Path] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Param:
    """A tensor parameter of the kernel (in call order)."""

    name: str
    key: int
    dtype: str
    """numpy dtype name of the argument (``float32``, ``bfloat16`` ...)"""
    shape: tuple[int | None, ...]
    """static extents, None for a dynamic axis"""
    written: bool = False
    """the trace recorded a write into this parameter"""


@dataclass(slots=True, eq=False)
class SymBind:
    """The value of symbol ``name`` is ``args[param].shape[axis]`` (``first_wins``: keep an earlier binding)."""

    name: str
    param: int
    axis: int
    first_wins: bool = False


@dataclass(slots=True, eq=False)
class KernelProgram:
    """A traced kernel call as data: parameters, symbol bindings and the graph of regions, loops and ops."""

    kernel: str
    file: str | None
    line: int | None
    params: list[Param]
    symbols: list[SymBind]
    body: Region
    n_keys: int
    n_loops: int
    version: int = 1

    def ops(self) -> Iterator[Op]:
        """Every op record of the program (every path of every region; loop bodies after their region)."""
        stack = [self.body]
        while stack:
            r = stack.pop()
            for p in r.paths:
                for it in p.items:
                    if type(it) is Op:
                        yield it
                    elif type(it) is Loop:
                        stack.append(it.body)

    def count_ops(self) -> int:
        """Number of op records in the program (every path of every region)."""
        return sum(1 for _ in self.ops())
