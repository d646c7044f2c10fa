"""Lowering: a traced kernel call (the trace-side graph of `_ir`) becomes a plain-data `device.KernelProgram`.

Why: the device executor must not run anything built inside the process that traced the kernel (that process
runs the candidate's Python). Lowering replaces every trace-time object by data: SymbolicScalars become
expression tuples (loop identities become small loop ids), `Late` parameters are resolved now that the whole
kernel is traced (e.g. whether a view's source is written later), and every parameter is normalised to the
type its op kind declares (`device._kreg.KINDS` schemas), so a candidate object can never ride along.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime.emulator._enums import numpy_dtype
from runtime.emulator._errors import py_error
from runtime.emulator._ir import Guard, Late, LoopNode, OpNode, Region
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator.device import _program as prog
from runtime.emulator.device._kreg import DTYPES, KINDS

__all__ = ["lower"]


class _Lowering:
    def __init__(self) -> None:
        self.lids: dict[int, int] = {}
        self.loops: list[Any] = []  # keeps the LoopInfo objects alive while their ids are map keys
        self.memo: dict[int, tuple[Any, SymbolicScalar]] = {}
        self.node: OpNode | None = None

    # expressions -------------------------------------------------------------------------------------
    def lid(self, loop: Any) -> int:
        k = id(loop)
        v = self.lids.get(k)
        if v is None:
            v = self.lids[k] = len(self.lids)
            self.loops.append(loop)
        return v

    def expr(self, x: Any) -> Any:
        if isinstance(x, SymbolicScalar):
            if x._value is not None:
                return int(x._value)
            hit = self.memo.get(id(x))
            if hit is not None:
                return hit[0]
            k = x._kind
            e: tuple
            if k == "sym":
                e = ("sym", str(x._name))
            elif k == "idx":
                e = ("idx", self.lid(x._loop))
            elif k == "bin":
                e = ("bin", x._op, self.expr(x._a), self.expr(x._b))
            elif k == "rt" and isinstance(x._fn, tuple) and x._fn[0] == "read":
                _, key, index, name = x._fn
                e = ("read", int(key), tuple(self.expr(i) for i in index), str(name))
            elif k == "rt" and isinstance(x._fn, tuple) and x._fn[0] == "flag":
                e = ("flag", x._fn[1], self.lid(x._fn[2]))
            else:
                raise self._bad(f"cannot lower the expression {x!r}")
            self.memo[id(x)] = (e, x)  # x stays alive while its id is a key
            return e
        if isinstance(x, Late):
            return self.expr(x.fn())
        try:
            return int(x)
        except (TypeError, ValueError):
            raise self._bad(f"expected an int or SymbolicScalar, got {type(x).__name__}") from None

    def as_int(self, v: Any, what: str) -> int:
        try:
            return int(v)
        except (TypeError, ValueError):
            raise self._bad(f"{what}: expected an int, got {v!r}") from None

    def _bad(self, message: str) -> Exception:
        n = self.node
        return py_error("TypeError", message, file=n.file if n else None, line=n.line if n else None,
                        op=n.name if n else None)

    # parameters --------------------------------------------------------------------------------------
    def param(self, t: str, v: Any, what: str) -> Any:
        if isinstance(v, Late):
            v = v.fn()
        if t.endswith("?"):
            if v is None:
                return None
            t = t[:-1]
        if t in ("key", "int"):
            return self.as_int(v, what)
        if t in ("keys", "ints"):
            return [self.as_int(x, what) for x in v]
        if t == "expr":
            return self.expr(v)
        if t == "exprs":
            return [self.expr(x) for x in v]
        if t == "bool":
            return bool(v)
        if t == "str":
            return str(v)
        if t == "dtype":
            if type(v) is str and v in DTYPES:
                return v
            name = np.dtype(v).name
            if name not in DTYPES:
                raise self._bad(f"{what}: dtype {name} is not supported")
            return name
        if t == "dt" or t.startswith("enum:"):
            return str(v)
        if t == "num":
            return _number(v, what, self)
        if t == "const":
            if isinstance(v, np.ndarray | np.generic):
                return v
            raise self._bad(f"{what}: expected a numpy constant, got {type(v).__name__}")
        raise self._bad(f"{what}: unknown parameter type {t}")

    # graph -------------------------------------------------------------------------------------------
    def op(self, n: OpNode) -> prog.Op:
        self.node = n
        spec = KINDS[n.impl]
        params = {name: self.param(t, n.params.get(name), f"{n.name}.{name}") for name, t in spec.schema.items()}
        return prog.Op(kind=n.impl, name=n.name, params=params, ins=tuple(int(k) for k in n.ins),
                       outs=tuple(int(k) for k in n.outs), writes=tuple(int(k) for k in n.writes),
                       out_key=n.out_key, cls=n.kind, tile_elems=int(n.tile_elems), gm_write=bool(n.gm_write),
                       file=n.file, line=n.line, types=tuple((_dtype_name(d), int(r)) for d, r in n.types),
                       nid=n.nid, target=n.target,
                       out_name=n.out.name if n.out is not None else None,
                       names=dict(n.names) if n.names else None, source=n.source,
                       attrs=dict(n.attrs) if n.attrs else None)

    def region(self, r: Region) -> prog.Region:
        out = prog.Region()
        for p in r.paths:
            items: list = []
            for it in p.items:
                if isinstance(it, OpNode):
                    items.append(self.op(it))
                elif isinstance(it, Guard):
                    items.append(prog.Guard(cond=self.expr(it.cond), taken=bool(it.taken), index=it.index,
                                            file=it.file, line=it.line))
                elif isinstance(it, LoopNode):
                    assert it.body is not None  # set when the loop was traced
                    lid = self.lid(it.loop)
                    items.append(prog.Loop(lid=lid, name=it.name, start=self.expr(it.start),
                                           stop=self.expr(it.stop), step=self.expr(it.step),
                                           body=self.region(it.body), file=it.file, line=it.line))
            out.paths.append(prog.Path(decisions=tuple(p.decisions), items=items))
        return out


def _dtype_name(dt: Any) -> str:
    """numpy dtype name of a DataType, "?" when it has no numpy storage type (run-time ops on it fail)."""
    try:
        name = numpy_dtype(dt).name
    except ValueError:
        return "?"
    return name if name in DTYPES else "?"


def _number(v: Any, what: str, lw: _Lowering) -> Any:
    if isinstance(v, bool | float | np.generic) or type(v) is int:
        return v
    if isinstance(v, int):  # int subclasses (enums) travel as plain ints
        return int(v)
    raise lw._bad(f"{what}: expected a number, got {type(v).__name__}")


def lower(kernel: str, file: str | None, line: int | None, region: Region, params: list[tuple[Any, np.ndarray]],
          symbols: list[tuple[str, int, int, bool]], n_keys: int) -> prog.KernelProgram:
    """The program of one traced kernel call (``params``: (Tensor, argument array) in call order)."""
    lw = _Lowering()
    body = lw.region(region)
    ps = [prog.Param(name=t.name, key=int(t.key), dtype=arr.dtype.name,
                     shape=tuple(d if isinstance(d, int) else None for d in t.shape), written=bool(t._written))
          for t, arr in params]
    syms = [prog.SymBind(name=n, param=i, axis=ax, first_wins=fw) for n, i, ax, fw in symbols]
    return prog.KernelProgram(kernel=kernel, file=file, line=line, params=ps, symbols=syms, body=body,
                              n_keys=int(n_keys), n_loops=len(lw.lids))
