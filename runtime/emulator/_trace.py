"""The tracer: builds the graph of a kernel while its body runs once per control path.

One `Tracer` exists per kernel call (held in a ContextVar while the body is traced). It hands out storage
keys in creation order, keeps the option-scope stack (tile shapes are scope-local; every `pypto.loop` opens
a child scope), collects trace-time warnings, and enumerates control paths: a runtime ``if`` takes the
branch given by the current path prefix (True for a new guard) and schedules the other branch for a
re-trace of the enclosing region.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from typing import Any

from runtime.emulator._errors import EmulatorError, py_error
from runtime.emulator._group_cycle import track as track_group
from runtime.emulator._ir import Guard, LoopNode, OpNode, Path, Region
from runtime.emulator._location import user_location
from runtime.emulator._session import Session
from runtime.emulator._symbolic import SymbolicScalar, as_sym, is_symbolic

__all__ = ["LoopInfo", "Tracer", "current_tracer", "require_tracer", "user_location"]

_TRACER: contextvars.ContextVar[Tracer | None] = contextvars.ContextVar("pypto_emulator_tracer", default=None)

# option scope used outside kernels (pypto.options(...) / setters called at module level)
_ROOT_SCOPES: contextvars.ContextVar[list[dict] | None] = contextvars.ContextVar("pypto_root_scopes", default=None)


def new_scope(parent: dict | None = None) -> dict:
    if parent is None:
        return {"vec_tile": [], "cube_tile": None, "pass": {}, "runtime": {}, "host": {}, "codegen": {},
                "verify": {}, "debug": {}, "operation": {}, "label": None, "matrix_size": None,
                "conv_tile": None}
    s = dict(parent)
    for k in ("pass", "runtime", "host", "codegen", "verify", "debug", "operation"):
        s[k] = dict(parent[k])
    return s


def root_scopes() -> list[dict]:
    s = _ROOT_SCOPES.get()
    if s is None:
        s = [new_scope()]
        _ROOT_SCOPES.set(s)
    return s


def current_scope() -> dict:
    tr = _TRACER.get()
    if tr is not None:
        return tr.scopes[-1]
    return root_scopes()[-1]


def current_tracer() -> Tracer | None:
    return _TRACER.get()


def require_tracer(op: str) -> Tracer:
    tr = _TRACER.get()
    if tr is None:
        f, ln = user_location()
        raise EmulatorError(
            "EMU_NO_KERNEL",
            f"pypto.{op} can only be used inside a @pypto.frontend.jit kernel (it records a graph op)",
            file=f, line=ln, op=op,
        )
    return tr


class LoopInfo:
    """Identity of one traced loop (its index symbol evaluates through ``env.sym[id(loop)]``)."""

    __slots__ = ("name", "idx_name", "index")

    def __init__(self, name: str, idx_name: str) -> None:
        self.name = name
        self.idx_name = idx_name
        self.index = SymbolicScalar.loop_index(idx_name, self)


class _PathCtx:
    __slots__ = ("prefix", "decisions", "path")

    def __init__(self, prefix: tuple[bool, ...]) -> None:
        self.prefix = prefix
        self.decisions: list[bool] = []
        self.path = Path(decisions=())


class Tracer:
    """Trace-time state of one kernel call."""

    def __init__(self, session: Session, kernel_name: str, file: str | None) -> None:
        self.session = session
        self.options = session.options
        self.kernel_name = kernel_name
        self.file = file
        self.counter = 0
        self.scopes: list[dict] = [new_scope(root_scopes()[-1])]
        self.path_stack: list[_PathCtx] = []
        self.loop_stack: list[LoopInfo] = []
        self.loop_count = 0
        self.bare_loops = 0
        """``pypto.loop`` / ``loop_unroll`` loops entered while no vec tile was set (`_ops_core.bare_view`)"""
        self.closed_loops = 0
        self.tensors: list[Any] = []  # every Tensor created (for whole-graph checks)
        self.idx_names: list[str] = []
        self.inplace_reshapes: list[tuple] = []
        self.node_count = 0
        self.range_values: dict[str, int] = {}
        """the non-tensor parameters read only as ``range(p)`` bounds (`_roll.range_sites`) and their values, when
        the trace cache may derive this trace's program for other values (`_frontend`): those loops roll"""
        self.range_small = False
        """loops over ``range(p)`` roll from one iteration on (else from `_roll.MIN_TRIPS`, as any range loop)"""
        self.range_fixed = False
        """a loop over ``range(p)`` was unrolled: this trace's program is for these values only"""
        self.range_folds: list[tuple[Any, Any, str, bool]] = []
        """(test, rolled loop, its parameter, branch) of each ``if`` decided at trace time in a rolled ``range(p)`` loop
        (`_roll.fold`): a program derived for another trip count must take the same branch in every iteration"""
        self._binding = False
        """True while an op creates its output Tensor (so the constructor does not register a local)."""
        self._token: contextvars.Token | None = None
        self.group_reads: dict[int, tuple[Any, frozenset[int]]] = {}
        """tensor key -> (group, the arguments it was read from through views there): `_group_cycle`, F21007"""
        self.group_cycles = session.options.compat == "0.2.0"
        """F21007 is the 0.2.0 wheel's error and nothing under HEAD (`_group_cycle`): tracked only where it can fire,
        so HEAD's traces (the gym's default) pay nothing per op for it (issue #31)"""

    # context ---------------------------------------------------------------------------------------
    def __enter__(self) -> Tracer:
        self._token = _TRACER.set(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            _TRACER.reset(self._token)
            self._token = None

    # keys, locations, diagnostics --------------------------------------------------------------------
    def next_key(self) -> int:
        k = self.counter
        self.counter += 1
        return k

    def names_by_key(self) -> dict[int, str]:
        return {t.key: t.name for t in self.tensors}

    def kind_by_key(self) -> dict[int, str]:
        return {t.key: t.kind for t in self.tensors}

    def where(self) -> tuple[str | None, int | None]:
        return user_location()

    def warn(self, code: str, message: str, op: str | None = None) -> None:
        f, ln = user_location()
        self.session.warn(code, message, file=f, line=ln, op=op)

    def error(self, code: str, message: str, op: str | None = None, kind: str = "RuntimeError") -> EmulatorError:
        f, ln = user_location()
        return EmulatorError(code, message, file=f, line=ln, op=op, kind=kind)

    def pyerror(self, kind: str, message: str, op: str | None = None) -> EmulatorError:
        f, ln = user_location()
        return py_error(kind, message, file=f, line=ln, op=op)

    # tensors -----------------------------------------------------------------------------------------
    def stamp(self, t: Any, kind: str, producer: str | None) -> Any:
        """Give a new Tensor its storage key and loop context, and remember it for whole-graph checks."""
        t.key = self.next_key()
        t.kind = kind
        t.producer = producer
        t._loops = tuple(map(id, self.loop_stack))  # no generator frame per op
        t._closed = self.closed_loops
        self.tensors.append(t)
        return t

    def register_local(self, t: Any) -> None:
        """``pypto.tensor(shape, dtype, name)`` inside a kernel: local tensor, no producer, starts poisoned."""
        for d in t._shape:
            if not isinstance(d, int | SymbolicScalar) or isinstance(d, bool):
                raise self.pyerror("TypeError", f"tensor shape entries must be int or SymbolicScalar, got {d!r}")
        self.stamp(t, "local", None)

    # graph emission ----------------------------------------------------------------------------------
    @property
    def items(self) -> list:
        return self.path_stack[-1].path.items

    def emit(self, name: str, impl: str, params: dict[str, Any], out: Any = None, *, kind: str = "vector",
             tile_elems: int = 0, gm_write: bool = False, target: str | None = None, ins: tuple = (),
             outs: tuple = (), writes: tuple = (), attrs: dict | None = None) -> OpNode:
        """Record an op: device kind ``impl`` with ``params`` (its schema: `device._kreg.KINDS`); ``outs`` are the
        output Tensors (their keys and dtype/rank go into the program)."""
        f, ln = user_location()
        self.node_count += 1
        if type(ins) is not tuple:
            ins = tuple(ins)
        if self.group_cycles:
            track_group(self, impl, params, ins, outs, writes if type(writes) is tuple else tuple(writes), gm_write)
        names = None
        source = None
        if self.options.record:
            by_key = self.names_by_key()
            names = {k: by_key.get(k) for k in ins}
            if impl == "view":
                src = params["src"]
                source = by_key.get(src) if self.kind_by_key().get(src) in ("param", "local") else None
        if len(outs) == 1:  # most ops: one output (no generator per field)
            o = outs[0]
            okeys: tuple = (o.key,)
            otypes: tuple = ((o.dtype, o.dim),)
        else:
            okeys = tuple([t.key for t in outs])
            otypes = tuple([(t.dtype, t.dim) for t in outs])
        node = OpNode(name, impl, params, None if out is None else out.key, f, ln, tile_elems, kind, gm_write,
                      target, ins, okeys, otypes, writes if type(writes) is tuple else tuple(writes),
                      self.node_count, out, attrs, names, source)
        self.path_stack[-1].path.items.append(node)
        return node

    # control paths -----------------------------------------------------------------------------------
    def decide(self, cond: Any) -> bool:
        """Branch taken by the current trace for a runtime condition; records a guard."""
        ctx = self.path_stack[-1]
        pos = len(ctx.decisions)
        taken = ctx.prefix[pos] if pos < len(ctx.prefix) else True
        ctx.decisions.append(taken)
        f, ln = user_location()
        ctx.path.items.append(Guard(cond=cond, taken=taken, index=pos, file=f, line=ln))
        return taken

    def trace_paths(self, region: Region, *, scope: bool = False) -> Iterator[_PathCtx]:
        """Generator: yields once per control path of a region; the caller traces the body each time."""
        start = self.counter
        max_counter = start
        pending: list[tuple[bool, ...]] = [()]
        consumed_before = [(t, t._consumed) for t in self.tensors]
        while pending:
            prefix = pending.pop()
            self.counter = start
            for t, c in consumed_before:
                t._consumed = c
            ctx = _PathCtx(prefix)
            self.path_stack.append(ctx)
            if scope:
                self.scopes.append(new_scope(self.scopes[-1]))
            try:
                yield ctx
            finally:
                self.path_stack.pop()
                if scope:
                    self.scopes.pop()
            dec = tuple(ctx.decisions)
            ctx.path.decisions = dec
            for g in range(len(prefix), len(dec)):
                pending.append(dec[:g] + (not dec[g],))
            region.add(ctx.path)
            max_counter = max(max_counter, self.counter)
        self.counter = max_counter

    def loop_iter(self, start: Any, stop: Any, step: Any, name: str | None, idx_name: str | None,
                  *, unroll_list: Any = None) -> Iterator[SymbolicScalar]:
        """Generator behind ``pypto.loop``: opens a loop node and yields its index once per path."""
        self.loop_count += 1
        n = self.loop_count
        name = name or f"loop_{n}"
        idx_name = idx_name or f"loop_idx_{n}"
        if idx_name in [lp.idx_name for lp in self.loop_stack]:
            raise self.pyerror("ValueError", f"loop idx_name '{idx_name}' is already used by an enclosing loop")
        for v, what in ((start, "start"), (stop, "stop"), (step, "step")):
            if not isinstance(v, int | SymbolicScalar) or isinstance(v, bool):
                raise self.pyerror("TypeError", f"loop {what} must be int or SymbolicScalar, got "
                                   f"{type(v).__name__}")
        st = static(step)
        if st == 0:
            raise self.pyerror("ValueError", "loop step must not be 0")
        if unroll_list is not None and len(list(unroll_list)) > 1:
            self.warn("EMU_UNROLL_LIST", f"multi-value unroll_list={list(unroll_list)} on pypto.loop is a "
                      "compile-time specialisation only (numerically transparent); gym lint allows it only "
                      "on the innermost loop", op="loop")
        info = LoopInfo(name, idx_name)
        f, ln = user_location()
        if not self.scopes[-1]["vec_tile"]:
            self.bare_loops += 1
        node = LoopNode(start=start, stop=stop, step=step, loop=info, name=name, file=f, line=ln)
        self.items.append(node)
        region = Region()
        self.loop_stack.append(info)
        try:
            for _ctx in self.trace_paths(region, scope=True):
                yield info.index
        finally:
            self.loop_stack.pop()
            self.closed_loops += 1
        node.body = region
        if unroll_list is not None and any(type(it) is LoopNode for p in region.paths for it in p.items):
            self.session.warn("EMU_UNROLL_OUTER", f"unroll_list={list(unroll_list)} on loop '{name}' that contains "
                              "another loop: only the innermost loop may be unrolled (gym lint)", file=f, line=ln,
                              op="loop")


def static(x: Any) -> int | None:
    if isinstance(x, SymbolicScalar):
        return x._value
    return int(x)


class RecordIfBranch:
    """Result of ``pypto.cond(expr)``: truthiness records a runtime branch (for natively run code)."""

    def __init__(self, cond: Any) -> None:
        self.cond = cond

    def __bool__(self) -> bool:
        c = self.cond
        if isinstance(c, SymbolicScalar) and not c.is_concrete():
            tr = require_tracer("cond")
            return tr.decide(c)
        return bool(c)


def loop_flag(i: Any, which: str) -> SymbolicScalar:
    """``is_loop_begin`` / ``is_loop_end`` of a loop index."""
    if not isinstance(i, SymbolicScalar) or i._kind != "idx":
        tr = current_tracer()
        if tr is not None:
            raise tr.pyerror("ValueError", "not loop index", op=f"is_loop_{which}")
        raise py_error("ValueError", "not loop index", op=f"is_loop_{which}")
    return SymbolicScalar.runtime(f"is_loop_{which}({i!r})", ("flag", which, i.loop))


def loop_unroll_iter(tr: Tracer, args: tuple, name: str | None, idx_name: str | None,
                     unroll_list: Any) -> Iterator[tuple[SymbolicScalar, int]]:
    """``pypto.loop_unroll``: the 0.2.0 algorithm, overlap quirk included (spec §3.2)."""
    start, stop, step = _loop_args(args, tr)
    factors = sorted(set(int(p) for p in (unroll_list or [1])), reverse=True)
    if factors[-1] <= 0:  # s45 audit: a 0 factor divided by zero inside this loop (`% nstep`), a raw traceback
        raise tr.pyerror("ValueError", f"loop_unroll: unroll_list factors must be positive ints, got {factors}",
                         op="loop_unroll")
    if 1 not in factors:
        factors.append(1)
    for a, b in zip(factors, factors[1:], strict=False):
        if a % b:
            tr.warn("EMU_UNROLL_OVERLAP", f"loop_unroll factors {factors} are not multiples of each other: "
                    "the 0.2.0 algorithm computes every remainder from the original start, so sub-loops can "
                    "overlap or overrun (items processed twice)", op="loop_unroll")
            break
    nstart: Any = start
    base = name or "loop"
    for p in factors:
        nstep = step * p
        left = (stop - start) % nstep
        end = stop - left
        sub = f"{base}_LoopUnroll{p}"
        for idx in tr.loop_iter(nstart, end, nstep, sub, None if idx_name is None else f"{idx_name}_{p}"):
            yield idx, p
        nstart = stop - left


def _loop_args(args: tuple, tr: Tracer) -> tuple[Any, Any, Any]:
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    if len(args) == 3:
        return args
    raise tr.pyerror("TypeError", f"loop() takes 1 to 3 positional arguments but {len(args)} were given")


def cond_value(x: Any) -> Any:
    if is_symbolic(x):
        return x
    return as_sym(x)
