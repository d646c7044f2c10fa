"""The traced graph and its executor.

A kernel body is traced once per control path into items: op nodes (closures over tensor storage keys and
SymbolicScalar parameters), guards (a recorded runtime ``if``), and loop nodes whose body is a `Region`.
A region holds one item list per control path; paths share their prefix up to the guard where they
diverge, and storage keys are assigned by creation order so the tensors created at the same position in
two paths share storage. The executor walks a region path, and when a guard evaluates the other way it
switches to the path that took the other branch at that guard and continues right after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime.emulator._errors import EmulatorError
from runtime.emulator._session import OpRecord, Session

__all__ = ["Env", "Guard", "LoopNode", "OpNode", "Path", "Region", "run_region"]


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


class Env:
    """Run-time state of one kernel call: buffers by storage key, symbol values, counters."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.buf: dict[int, tuple[np.ndarray, tuple[int, ...]]] = {}
        self.sym: dict[Any, int] = {}
        self.loop_range: dict[int, tuple[int, int, int]] = {}
        self.iter_stack: list[tuple[str, Any]] = []
        self.node: OpNode | None = None
        self.geom: dict | None = None
        self.record = session.options.record
        self.ops: dict[str, int] = {}
        self.tiles = 0
        self.elements = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.flops = 0
        self.trips: dict[str, int] = {}
        self.batched = 0
        self.last_rec: dict[int, int] = {}
        self.parallel_masks: dict[object, np.ndarray] = {}

    # buffer access -------------------------------------------------------------------------------------
    def get(self, key: int) -> tuple[np.ndarray, tuple[int, ...]]:
        try:
            return self.buf[key]
        except KeyError:
            raise self.error(
                "EMU_UNINIT",
                "read of a tensor that has no data yet at run time (local tensor read before any write "
                "in this iteration order)",
            ) from None

    def put(self, key: int, arr: np.ndarray, valid: tuple[int, ...] | None = None) -> None:
        self.buf[key] = (arr, arr.shape if valid is None else valid)

    def error(self, code: str, message: str, kind: str = "RuntimeError") -> EmulatorError:
        n = self.node
        it = ", ".join(f"{k}={self.sym.get(id(lp), '?')}" for k, lp in self.iter_stack)
        if it:
            message = f"{message} (iteration {it})"
        return EmulatorError(code, message, file=n.file if n else None, line=n.line if n else None,
                             op=n.name if n else None, kind=kind)

    def iteration(self) -> dict[str, int]:
        return {k: self.sym.get(id(lp), -1) for k, lp in self.iter_stack}

    def flush(self) -> None:
        """Add this run's counters to the session."""
        c = self.session.counters
        for k, v in self.ops.items():
            c.ops[k] = c.ops.get(k, 0) + v
        for k, v in self.trips.items():
            c.loop_trips[k] = c.loop_trips.get(k, 0) + v
        c.tiles += self.tiles
        c.elements += self.elements
        c.bytes_in += self.bytes_in
        c.bytes_out += self.bytes_out
        c.matmul_flops += self.flops
        c.batched_iterations += self.batched
        c.runs += 1


_WRITES = frozenset({"assemble", "move", "setitem"})


def _account(env: Env, node: OpNode) -> None:
    env.ops[node.name] = env.ops.get(node.name, 0) + 1
    if node.out_key is None:
        return
    v = env.buf.get(node.out_key)
    if v is None:
        return
    if node.name not in _WRITES:  # writers count the elements they write themselves
        n = v[0].size
        env.elements += n
        te = node.tile_elems
        if te:
            env.tiles += (n + te - 1) // te if n else 1
    if env.record:
        _record(env, node, v)
    env.geom = None


def _record(env: Env, node: OpNode, v: tuple) -> None:
    g = env.geom or {}
    val = g.get("value", v[0])
    valid = g.get("valid", v[1])
    inputs = []
    for k in node.ins:
        if k in env.last_rec:
            inputs.append({"kind": "record", "seq": env.last_rec[k]})
        else:
            inputs.append({"kind": "tensor", "name": (node.names or {}).get(k)})
    s = env.session
    seq = len(s.records)
    s.add_record(OpRecord(
        seq=seq, node=node.nid, op=node.name, file=node.file, line=node.line, iteration=env.iteration(),
        value=val, dtype=str(val.dtype), offsets=g.get("offsets"), shape=list(val.shape),
        valid_shape=[int(x) for x in valid], target=node.target,
        name=node.out.name if node.out is not None and node.name not in _WRITES else None,
        source=node.source, inputs=inputs, attrs=dict(node.attrs or {}),
    ))
    if node.out_key is not None:
        env.last_rec[node.out_key] = seq


def run_region(region: Region, env: Env) -> None:
    """Execute one region (one iteration of a loop body, or the kernel body)."""
    if not region.paths:
        return
    try:
        _run_region(region, env)
    except EmulatorError:
        raise
    except Exception as exc:  # an op failed on concrete values: one clear error at the kernel line
        raise env.error("EMU_RUNTIME", f"{type(exc).__name__}: {exc}") from exc


def _run_region(region: Region, env: Env) -> None:
    path = region.paths[0]
    items = path.items
    n = len(items)
    i = 0
    while i < n:
        it = items[i]
        t = type(it)
        if t is OpNode:
            env.node = it
            it.run(env)
            _account(env, it)
        elif t is Guard:
            val = it.cond.evaluate(env) if hasattr(it.cond, "evaluate") else it.cond
            if bool(val) != it.taken:
                path = region.lookup[path.decisions[: it.index] + (not it.taken,)]
                items = path.items
                n = len(items)
                i = path.guard_pos[it.index]
        else:
            run_loop(it, env)
        i += 1


def run_loop(node: LoopNode, env: Env) -> None:
    try:
        start = node.start.evaluate(env) if hasattr(node.start, "evaluate") else int(node.start)
        stop = node.stop.evaluate(env) if hasattr(node.stop, "evaluate") else int(node.stop)
        step = node.step.evaluate(env) if hasattr(node.step, "evaluate") else int(node.step)
    except EmulatorError:
        raise
    except Exception as exc:  # bad runtime bound
        raise EmulatorError("EMU_LOOP", f"loop {node.name}: cannot evaluate bounds: {exc}",
                            file=node.file, line=node.line) from exc
    if step == 0:
        raise EmulatorError("EMU_LOOP", f"loop {node.name}: step is 0", file=node.file, line=node.line)
    key = id(node.loop)
    env.loop_range[key] = (start, stop, step)
    env.iter_stack.append((node.name, node.loop))
    trips = 0
    try:
        body = node.body
        rng = range(start, stop, step)
        if len(rng) >= 4 and not env.record:
            from runtime.emulator._batch import run_batched

            done = run_batched(node, env, rng)
            trips += done
            env.batched += done
            rng = rng[done:]
        for v in rng:
            env.sym[key] = v
            trips += 1
            run_region(body, env)
    finally:
        env.iter_stack.pop()
        env.trips[node.name] = env.trips.get(node.name, 0) + trips
