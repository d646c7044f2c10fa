"""Lowering: a traced kernel call (the trace-side graph of `_ir`) becomes a plain-data `device.KernelProgram`.

Why: the device executor must not run anything built inside the process that traced the kernel (that process
runs the candidate's Python). Lowering replaces every trace-time object by data: SymbolicScalars become
expression tuples (loop identities become small loop ids), `Late` parameters are resolved now that the whole
kernel is traced (e.g. whether a view's source is written later), and every parameter is normalised to the
type its op kind declares (`device._kreg.KINDS` schemas), so a candidate object can never ride along.
"""

from __future__ import annotations

from functools import cache
from itertools import compress
from operator import is_, itemgetter, not_, or_
from typing import Any

import numpy as np

from runtime.emulator._enums import DataType, numpy_dtype_name
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
        self.sites: dict[int, str] = {}
        """lid -> parameter name of each rolled ``range(param)`` loop (`LoopNode.site`)"""

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
            raise self._bad(f"{self.what(what)}: expected an int, got {v!r}") from None

    def what(self, name: str) -> str:
        """``op.param`` for messages (built only on errors: an f-string per parameter of every op cost ~5% of
        lowering)."""
        n = self.node
        return f"{n.name}.{name}" if n is not None else name

    def _bad(self, message: str) -> Exception:
        n = self.node
        return py_error("TypeError", message, file=n.file if n else None, line=n.line if n else None,
                        op=n.name if n else None)

    # parameters --------------------------------------------------------------------------------------
    def param(self, t: str, v: Any, what: str) -> Any:
        return _converter(t)(self, v, what)

    # graph -------------------------------------------------------------------------------------------
    def op(self, n: OpNode) -> prog.Op:
        self.node = n
        kp = _KPLANS.get(n.impl) or _kplan(n.impl)
        vals = tuple(map(n.params.get, kp.names))  # the schema's parameters in order (None when absent)
        sig = tuple(map(id, map(type, vals)))  # by identity: a class cannot pass for another by its __eq__
        todo = kp.todos.get(sig)
        if todo is None:
            todo = kp.todo(vals, sig)
        params = dict(zip(kp.names, vals))
        # only the parameters whose type is not the plain one their converter returns unchanged (few: the lists
        # of expressions, dtypes, numbers) are converted, in schema order as before
        for i, name, conv in todo:
            params[name] = conv(self, vals[i], name)
        ins, outs, writes = n.ins, n.outs, n.writes
        # tuples of plain ints (almost always) are taken as they are: the types read in C, one test per op
        if not (_TUPLE_ONLY.issuperset(map(id, map(type, (ins, outs, writes))))
                and _INT_ONLY.issuperset(map(id, map(type, (*ins, *outs, *writes))))):
            ins, outs, writes = _keys(ins), _keys(outs), _keys(writes)
        types = n.types
        try:
            ts = _TYPES.get(types)
        except TypeError:  # an unhashable entry: converted below (and refused there if it is not a dtype / rank)
            ts = None
        return prog.Op(n.impl, n.name, params, ins, outs, writes, n.out_key, n.kind,
                       int(n.tile_elems), bool(n.gm_write), n.file, n.line,
                       ts if ts is not None else _types(types),
                       n.nid, n.target, n.out.name if n.out is not None else None,
                       dict(n.names) if n.names else None, n.source, dict(n.attrs) if n.attrs else None)

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
                    if it.site is not None:
                        self.sites[lid] = it.site
                    items.append(prog.Loop(lid=lid, name=it.name, start=self.expr(it.start),
                                           stop=self.expr(it.stop), step=self.expr(it.step),
                                           body=self.region(it.body), file=it.file, line=it.line))
            out.paths.append(prog.Path(decisions=tuple(p.decisions), items=items))
        return out


# ---- parameter conversion: one small function per schema type, chosen once per op kind -----------------

Conv = Any


def _as_int(lw: _Lowering, v: Any, what: str) -> int:
    if isinstance(v, Late):
        v = v.fn()
    return v if type(v) is int else lw.as_int(v, what)


def _as_ints(lw: _Lowering, v: Any, what: str) -> list[int]:
    if isinstance(v, Late):
        v = v.fn()
    return [x if type(x) is int else lw.as_int(x, what) for x in v]


def _as_expr(lw: _Lowering, v: Any, what: str) -> Any:
    if isinstance(v, Late):
        v = v.fn()
    return v if type(v) is int else lw.expr(v)


def _as_exprs(lw: _Lowering, v: Any, what: str) -> list[Any]:
    if isinstance(v, Late):
        v = v.fn()
    return [x if type(x) is int else lw.expr(x) for x in v]


def _as_bool(lw: _Lowering, v: Any, what: str) -> bool:
    return bool(v.fn() if isinstance(v, Late) else v)


def _as_str(lw: _Lowering, v: Any, what: str) -> str:
    return str(v.fn() if isinstance(v, Late) else v)


def _as_dtype(lw: _Lowering, v: Any, what: str) -> str:
    if isinstance(v, Late):
        v = v.fn()
    name = v if type(v) is str and v in DTYPES else _np_name(v)
    if name not in DTYPES:
        raise lw._bad(f"{lw.what(what)}: dtype {name} is not supported")
    return name


def _as_num(lw: _Lowering, v: Any, what: str) -> Any:
    return _number(v.fn() if isinstance(v, Late) else v, what, lw)


def _as_const(lw: _Lowering, v: Any, what: str) -> Any:
    if isinstance(v, Late):
        v = v.fn()
    if isinstance(v, np.ndarray | np.generic):
        return v
    raise lw._bad(f"{lw.what(what)}: expected a numpy constant, got {type(v).__name__}")


_BASE: dict[str, Conv] = {"key": _as_int, "int": _as_int, "keys": _as_ints, "ints": _as_ints, "expr": _as_expr,
                          "exprs": _as_exprs, "bool": _as_bool, "str": _as_str, "dtype": _as_dtype,
                          "dt": _as_str, "num": _as_num, "const": _as_const}
_CONV: dict[str, Conv] = {}


def _converter(t: str) -> Conv:
    """The conversion of a parameter declared ``t`` in a kind's schema (a trailing ``?`` allows None)."""
    conv = _CONV.get(t)
    if conv is None:
        base = t[:-1] if t.endswith("?") else t
        fn = _BASE.get(base) or (_as_str if base.startswith("enum:") else None)
        if fn is None:
            def bad(lw: _Lowering, v: Any, what: str, base: str = base) -> Any:
                raise lw._bad(f"{lw.what(what)}: unknown parameter type {base}")
            fn = bad
        if t.endswith("?"):
            inner = fn

            def optional(lw: _Lowering, v: Any, what: str) -> Any:
                if isinstance(v, Late):
                    v = v.fn()
                return None if v is None else inner(lw, v, what)
            conv = optional
        else:
            conv = fn
        _CONV[t] = conv
    return conv


def _keys(t: tuple) -> tuple[int, ...]:
    """A tuple of storage keys as plain ints (the trace's own tuple when it already is one: most are)."""
    for k in t:
        if type(k) is not int:
            return tuple(map(int, t))
    return t if type(t) is tuple else tuple(t)


# The plain type a parameter's converter returns unchanged (an int for a key / int / expression, a str, a bool): a
# value that already has it is taken as is, without a converter call (that call per parameter was ~40% of lowering).
# No code generation: compiling a function per kind cost ~0.3-1 ms per kind on a process's first call, more than it
# saved on a small kernel.
_PLAIN: dict[str, type] = {"key": int, "int": int, "expr": int, "key?": int, "int?": int, "expr?": int, "str": str,
                           "dt": str, "bool": bool}
_INT_ONLY = frozenset({id(int)})
_TUPLE_ONLY = frozenset({id(tuple)})
_NONE = type(None)

Todo = tuple[tuple[int, str, Conv], ...]
_PLAN_TYPES = frozenset(map(id, (int, str, bool, float, _NONE, tuple, list, dict, Late, SymbolicScalar, np.float64,
                                 np.float32, np.ndarray)))
"""value types (ids: these types live as long as the process) whose signatures `_KPlan.todos` remembers (a signature
with any other type - a candidate's class - is decided for that op alone: the table must not grow with them, and an
id of a class that dies can be reused)"""
_PLAN_LIMIT = 256


class _KPlan:
    """How the ops of one kind are lowered: its parameter names in schema order, and which of them go through their
    converter, by the types of an op's values.

    Why: whether a value is taken as is depends on its type alone (`_PLAIN`, None where the schema allows it), so
    the choice is made once per kind and tuple of value types - the types read in C (``map(type, ...)``) - instead
    of a Python test per parameter of every op (~60% of lowering's bytecodes on attn_softmax)."""

    __slots__ = ("entries", "names", "nones", "plains", "todos")

    def __init__(self, kind: str) -> None:
        schema = KINDS[kind].schema
        self.names = tuple(schema)
        infos = tuple(map(_tinfo, schema.values()))
        self.plains = tuple(map(itemgetter(0), infos))
        """the plain type of each parameter (a value of it is taken as is), else None"""
        self.nones = tuple(map(itemgetter(1), infos))
        """NoneType where the parameter may be None (then None is taken as is), else None"""
        self.entries = tuple(zip(range(len(infos)), self.names, map(itemgetter(2), infos), strict=True))
        """(index, name, converter) of each parameter"""
        self.todos: dict[tuple[int, ...], Todo] = {}
        """ids of the values' types -> the parameters to convert"""

    def todo(self, vals: tuple, sig: tuple[int, ...]) -> Todo:
        """The parameters to convert for values ``vals`` (types' ids ``sig``): those whose type is neither the plain
        one nor None where allowed - by identity, in C."""
        types = tuple(map(type, vals))
        keep = map(or_, map(is_, types, self.plains), map(is_, types, self.nones))
        todo = tuple(compress(self.entries, map(not_, keep)))
        if len(self.todos) < _PLAN_LIMIT and _PLAN_TYPES.issuperset(sig):
            self.todos[sig] = todo
        return todo


_KPLANS: dict[str, _KPlan] = {}


def _kplan(kind: str) -> _KPlan:
    got = _KPLANS.get(kind)
    if got is None:
        got = _KPLANS[kind] = _KPlan(kind)
    return got


@cache
def _tinfo(t: str) -> tuple[type | None, type | None, Conv]:
    """(plain type or None, NoneType when None is allowed, converter) of a schema type (an optional parameter's
    converter maps None to None: most optional parameters of most ops are None, and are taken as is); cached in C
    (schema types are a closed set of strings)."""
    plain = _PLAIN.get(t) or (str if t.startswith("enum:") and not t.endswith("?") else None)
    return plain, _NONE if t.endswith("?") else None, _converter(t)


_TYPES: dict[tuple, tuple[tuple[str, int], ...]] = {}
"""an op's (DataType, rank) outputs -> their (numpy dtype name, rank) (`_types`)"""


def _types(types: Any) -> tuple[tuple[str, int], ...]:
    """(numpy dtype name or "?", rank) of each output, remembered for a tuple of (DataType, int) pairs (a few
    distinct ones per kernel; their names never change)."""
    out = tuple([(_dtype_name(t[0]), int(t[1])) for t in types])
    if (type(types) is tuple and len(_TYPES) < 1024
            and all(type(t) is tuple and type(t[0]) is DataType and type(t[1]) is int for t in types)):
        _TYPES[types] = out
    return out


_DT_NAMES: dict[Any, str] = {}


def _dtype_name(dt: Any) -> str:
    """numpy dtype name of a DataType, "?" when it has no numpy storage type (run-time ops on it fail); cached per
    DataType (an enum: hashable, and its numpy type never changes)."""
    got = _DT_NAMES.get(dt)
    if got is not None:
        return got
    try:
        name = numpy_dtype_name(dt)
    except ValueError:
        name = "?"
    name = name if name in DTYPES else "?"
    if type(dt).__hash__ is not None:
        _DT_NAMES[dt] = name
    return name


_NP_NAMES: dict[Any, str] = {}


def _np_name(v: Any) -> str:
    """``np.dtype(v).name``, cached per dtype (numpy 2 computes ``.name`` in Python, ~10 us a call)."""
    dt = np.dtype(v)
    name = _NP_NAMES.get(dt)
    if name is None:
        name = _NP_NAMES[dt] = dt.name
    return name


def _number(v: Any, what: str, lw: _Lowering) -> Any:
    if type(v) is np.float64:
        # a float subclass: the wheel's pybind11 takes it as the double a Python float is, so it travels as one (red
        # team s40: verification passes float attributes as np.float64 in half of its calls, and a kernel using the
        # caller's cap as a scalar must send the same program for both)
        return float(v)
    if isinstance(v, bool | float | np.generic) or type(v) is int:
        return v
    if isinstance(v, int):  # int subclasses (enums) travel as plain ints
        return int(v)
    raise lw._bad(f"{lw.what(what)}: expected a number, got {type(v).__name__}")


def lower(kernel: str, file: str | None, line: int | None, region: Region, params: list[tuple[Any, np.ndarray]],
          symbols: list[tuple[str, int, int, bool]], n_keys: int,
          sites: dict[int, str] | None = None) -> prog.KernelProgram:
    """The program of one traced kernel call (``params``: (Tensor, argument array) in call order); ``sites``, when
    given, receives the lid of each loop traced from a rolled ``range(param)`` and the parameter's name."""
    lw = _Lowering()
    body = lw.region(region)
    if sites is not None:
        sites.update(lw.sites)
    ps = [prog.Param(name=t.name, key=int(t.key), dtype=_np_name(arr.dtype),
                     shape=tuple(d if isinstance(d, int) else None for d in t.shape), written=bool(t._written))
          for t, arr in params]
    syms = [prog.SymBind(name=n, param=i, axis=ax, first_wins=fw) for n, i, ax, fw in symbols]
    return prog.KernelProgram(kernel=kernel, file=file, line=line, params=ps, symbols=syms, body=body,
                              n_keys=int(n_keys), n_loops=len(lw.lids))
