"""Semantic validation of a decoded program: guards, loops, storage keys, types, expression leaves.

`_codec` checks the shape of every field (types, ranges, closed sets); this module checks what relates
fields to each other, so that a hostile program cannot reach an executor state the tracer never produces:

- parameters have distinct keys; symbol bindings name an existing parameter axis;
- every region's guards are consistent with its paths (guard ``index`` and ``taken`` match the path's
  decisions, and the path for the other branch exists and contains that guard), loop ids are unique;
- every op's ``ins``/``outs``/``writes``/``out_key`` agree with the storage keys in its parameters;
- every key an op or an expression reads is defined before use: a parameter, the output of an earlier op
  (pre-order), or a tensor some op writes (a local, which may legitimately be read before its first write
  in iteration order - that is the run-time EMU_UNINIT error);
- dtypes and ranks agree where an op states them (view/assemble/move/reshape ranks, binary/assemble/move
  dtypes, reduction axes, cast source dtype, declared output dtypes).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from runtime.emulator._enums import DataType, numpy_dtype
from runtime.emulator.device._kreg import KINDS
from runtime.emulator.device._program import Guard, KernelProgram, Loop, Op, Region
from runtime.emulator.device._types import Limits, ProgramError

__all__ = ["keys_read", "program_reads", "validate"]

Type = tuple[str, int]  # (numpy dtype name or "?", rank)


def _keys(p: dict[str, Any], names: tuple[str, ...]) -> list[int]:
    out: list[int] = []
    for n in names:
        v = p.get(n)
        if isinstance(v, list):
            out.extend(v)
        elif v is not None:
            out.append(v)
    return out


def _expr_reads(e: Any, acc: list[int], seen: set[int]) -> None:
    if type(e) is not tuple or id(e) in seen:
        return
    seen.add(id(e))
    if e[0] == "read":
        acc.append(e[1])
        for x in e[2]:
            _expr_reads(x, acc, seen)
    elif e[0] == "bin":
        _expr_reads(e[2], acc, seen)
        _expr_reads(e[3], acc, seen)


def _exprs_of(op: Op) -> list[Any]:
    spec = KINDS[op.kind]
    out: list[Any] = []
    for name, t in spec.schema.items():
        v = op.params.get(name)
        if v is None:
            continue
        if t.rstrip("?") == "expr":
            out.append(v)
        elif t.rstrip("?") == "exprs":
            out.extend(v)
    return out


def keys_read(op: Op) -> set[int]:
    """Every storage key whose bytes ``op`` may read: its kind's input parameters, the destination of an
    in-place update or of a write into a (non-owned) op output, and the tensors its expressions read.

    Use this, not ``op.ins``: ``ins`` is the list the cost counters and op records see, and it omits some reads
    (a ``view_dtype`` source; a matmul's bias and scale tensors) to keep those numbers unchanged."""
    spec = KINDS[op.kind]
    p = op.params
    out = set(_keys(p, spec.reads))
    if op.kind == "inplace" or op.kind in ("move", "assemble") and not p["owned"]:
        out.update(_keys(p, spec.writes))
    acc: list[int] = []
    seen: set[int] = set()
    for e in _exprs_of(op):
        _expr_reads(e, acc, seen)
    out.update(acc)
    return out


def program_reads(program: KernelProgram) -> set[int]:
    """Every storage key the program may read anywhere (ops, guard conditions, loop bounds)."""
    out: set[int] = set()
    acc: list[int] = []
    seen: set[int] = set()
    stack = [program.body]
    while stack:
        for path in stack.pop().paths:
            for it in path.items:
                if isinstance(it, Op):
                    out |= keys_read(it)
                elif isinstance(it, Guard):
                    _expr_reads(it.cond, acc, seen)
                else:
                    for e in (it.start, it.stop, it.step):
                        _expr_reads(e, acc, seen)
                    stack.append(it.body)
    return out | set(acc)


class _Checker:
    def __init__(self, program: KernelProgram, limits: Limits) -> None:
        self.p = program
        self.lim = limits
        self.types: dict[int, set[Type]] = {}
        self.defined: set[int] = set()
        self.written_anywhere: set[int] = set()
        self.lids: set[int] = set()

    def fail(self, what: str, reason: str) -> ProgramError:
        return ProgramError(f"{what}: {reason}")

    # pass 1: keys written anywhere (locals may be read before their first write in program order) -------
    def collect_writes(self, r: Region) -> None:
        for path in r.paths:
            for it in path.items:
                if isinstance(it, Op):
                    self.written_anywhere.update(it.writes)
                    self.declare_write(it)
                elif isinstance(it, Loop):
                    self.collect_writes(it.body)

    def declare_write(self, op: Op) -> None:
        p = op.params
        if op.kind == "assemble":
            self.types.setdefault(p["dst"], set()).add((p["ddtype"], len(p["dshape"])))
        elif op.kind == "move":
            self.types.setdefault(p["dst"], set()).add(("?", len(p["dshape"])))
        elif op.kind == "setitem":
            self.types.setdefault(p["dst"], set()).add(("int32", len(p["shape"])))

    # pass 2: pre-order walk --------------------------------------------------------------------------
    def region(self, r: Region, what: str) -> None:
        lookup: dict[tuple[bool, ...], Any] = {}
        guard_sets: dict[int, Counter[int]] = {}
        for path in r.paths:
            for n in range(len(path.decisions)):
                lookup.setdefault(path.decisions[: n + 1], path)
            guard_sets[id(path)] = Counter(it.index for it in path.items if isinstance(it, Guard))
        for pi, path in enumerate(r.paths):
            pw = f"{what}.paths[{pi}]"
            guards = [it for it in path.items if type(it) is Guard]
            if len(guards) != len(path.decisions):
                raise self.fail(pw, f"{len(guards)} guard(s) but {len(path.decisions)} decision(s)")
            for gi, g in enumerate(guards):
                if g.index != gi or g.taken != path.decisions[gi]:
                    raise self.fail(pw, f"guard {gi} does not match the path's decisions")
                other = lookup.get(path.decisions[:gi] + (not g.taken,))
                if other is None or guard_sets[id(other)][gi] != 1:
                    raise self.fail(pw, f"no path takes the other branch of guard {gi}")
                self.expr(g.cond, pw)
            for ii, it in enumerate(path.items):
                iw = f"{pw}.items[{ii}]"
                if isinstance(it, Op):
                    self.op(it, iw)
                elif isinstance(it, Loop):
                    if it.lid in self.lids:
                        raise self.fail(iw, f"loop id {it.lid} is used twice")
                    self.lids.add(it.lid)
                    for e in (it.start, it.stop, it.step):
                        self.expr(e, iw)
                    self.region(it.body, f"{iw}.body")
        if len({path.decisions for path in r.paths}) != len(r.paths):
            raise self.fail(what, "two paths with the same decisions")

    def expr(self, e: Any, what: str) -> None:
        reads: list[int] = []
        _expr_reads(e, reads, set())
        for k in reads:
            self.need(k, what)

    def need(self, k: int, what: str) -> None:
        if k not in self.defined and k not in self.written_anywhere:
            raise self.fail(what, f"reads storage key {k} before any op defines it")

    def typ(self, k: int) -> set[Type]:
        return self.types.get(k) or {("?", -1)}

    def op(self, op: Op, what: str) -> None:
        spec = KINDS[op.kind]
        p = op.params
        what = f"{what} ({op.kind} {op.name})"
        reads = _keys(p, spec.reads)
        writes = _keys(p, spec.writes)
        produces = _keys(p, spec.produces)
        if not set(op.ins) <= set(reads) | set(writes):
            raise self.fail(what, "ins name keys the op does not read")
        if tuple(produces) != op.outs:
            raise self.fail(what, "outs disagree with the op's parameters")
        if tuple(writes) != op.writes:
            raise self.fail(what, "writes disagree with the op's parameters")
        expect = op.outs[0] if op.outs else (op.writes[0] if op.writes else None)
        if op.out_key is not None and op.out_key != expect:
            raise self.fail(what, "out_key is neither the first output nor the written tensor")
        if len(op.types) != len(op.outs):
            raise self.fail(what, "one output type per output is required")
        if len(set(op.outs)) != len(op.outs):
            raise self.fail(what, "an output key appears twice")
        for k in reads + writes:
            self.need(k, what)
        for e in _exprs_of(op):
            self.expr(e, what)
        self.check_types(op, what)
        for k, t in zip(op.outs, op.types, strict=True):
            self.types.setdefault(k, set()).add(t)
            self.defined.add(k)

    # types ---------------------------------------------------------------------------------------------
    def check_types(self, op: Op, what: str) -> None:
        p = op.params
        k = op.kind
        if "odt" in p and op.types and op.types[0][0] not in ("?", p["odt"]):
            raise self.fail(what, "declared output dtype differs from the op's dtype")

        def rank_is(key: int, n: int, label: str) -> None:
            if not any(r in (-1, n) for _, r in self.typ(key)):
                raise self.fail(what, f"{label} has rank {sorted(r for _, r in self.typ(key))}, expected {n}")

        def same_dtype(a: int, b: int | str, label: str) -> None:
            da = {d for d, _ in self.typ(a)}
            db = {b} if isinstance(b, str) else {d for d, _ in self.typ(b)}
            if "?" in da or "?" in db or da & db:
                return
            raise self.fail(what, f"{label}: dtypes {sorted(da)} and {sorted(db)} differ")

        def axis_ok(key: int, ax: int, label: str) -> None:
            if not any(r == -1 or 0 <= ax < r for _, r in self.typ(key)):
                raise self.fail(what, f"{label}: axis {ax} out of range")

        if k == "view":
            rank_is(p["src"], len(p["offs"]), "view source")
            if op.types and op.types[0][1] != len(p["shape"]):
                raise self.fail(what, "view output rank differs from its shape")
        elif k == "assemble":
            rank_is(p["dst"], len(p["offs"]), "assemble destination")
            rank_is(p["src"], len(p["offs"]), "assemble source")
            same_dtype(p["src"], p["ddtype"], "assemble")
        elif k == "move":
            rank_is(p["src"], len(p["dshape"]), "move source")
            rank_is(p["dst"], len(p["dshape"]), "move destination")
            same_dtype(p["src"], p["dst"], "move")
        elif k == "reshape":
            rank_is(p["src"], p["rank"], "reshape source")
            if op.types and op.types[0][1] != len(p["shape"]):
                raise self.fail(what, "reshape output rank differs from its shape")
        elif k == "unsqueeze":
            if not any(r == -1 or 0 <= p["dim"] <= r for _, r in self.typ(p["src"])):
                raise self.fail(what, "unsqueeze dim out of range")
        elif k == "binary" and p["b"] is not None:
            same_dtype(p["a"], p["b"], "binary operands")
        elif k in ("reduce", "softmax"):
            rank_is(p["a"], p["rank"], f"{k} input")
        elif k in ("cumsum", "cumprod"):
            axis_ok(p["a"], p["ax"], k)
        elif k == "var":
            for ax in p["axes"]:
                axis_ok(p["a"], ax, "var")
        elif k == "cast":
            try:
                src = numpy_dtype(DataType[p["src"]]).name
            except ValueError:
                src = "?"
            same_dtype(p["a"], src, "cast source")
        elif k == "matmul":
            ra = {r for _, r in self.typ(p["a"])}
            rb = {r for _, r in self.typ(p["b"])}
            if -1 not in ra and -1 not in rb and not ra & rb:
                raise self.fail(what, "matmul operands differ in rank")
        elif k == "transpose":
            axis_ok(p["src"], max(p["d0"], p["d1"]), "transpose")
            if min(p["d0"], p["d1"]) < 0:
                raise self.fail(what, "transpose axis out of range")
        elif k == "permute":
            if sorted(p["dims"]) != list(range(len(p["dims"]))):
                raise self.fail(what, "permute dims are not a permutation")
            rank_is(p["src"], len(p["dims"]), "permute source")
        elif k == "concat":
            if not 0 <= p["ax"] < p["rank"]:
                raise self.fail(what, "concat axis out of range")
            for s in p["srcs"]:
                rank_is(s, p["rank"], "concat input")
        elif k in ("index_select", "gather"):
            axis_ok(p["src"], p["ax"], k)
        elif k == "inplace":
            axis_ok(p["target"], p["ax"], "in-place op")


def validate(program: KernelProgram, limits: Limits | None = None) -> None:
    """Raise `ProgramError` if the program's parts do not fit together (see the module docstring)."""
    limits = limits or Limits()
    keys = [p.key for p in program.params]
    if len(set(keys)) != len(keys):
        raise ProgramError("two parameters share a storage key")
    ck = _Checker(program, limits)
    for p in program.params:
        ck.defined.add(p.key)
        ck.types.setdefault(p.key, set()).add((p.dtype, len(p.shape)))
    ck.collect_writes(program.body)
    ck.region(program.body, "body")
