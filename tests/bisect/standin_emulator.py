"""A small trace-then-replay stand-in for ``runtime.emulator`` used by the bisect tests.

Why it exists: runtime.bisect must be testable while the real emulator is still being built. This module
offers the same entry points (``install()``, ``session(options=Options(record=True))``, ``s.records``) for the
PyPTO subset the bisect corpus uses, and records the fields of
``runtime.emulator.OpRecord``. It follows the device execution model of spec/pypto-api.md §0.1:
the kernel body is traced once into a list of steps, then the steps are executed for every loop iteration,
so Python re-binding inside ``pypto.loop`` is *not* loop-carried (the corpus has a bug of that kind).

It is deliberately not an emulator: no constraint checks, no cost model, no runtime ``if`` on symbols.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import linecache
import re
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime.dtypes import to_numpy

_THIS = __file__

# ------------------------------------------------------------------------------------------- session


@dataclass(frozen=True, kw_only=True)
class Options:
    record: bool = False


@dataclass
class Record:
    seq: int
    node: int
    op: str
    file: str | None
    line: int | None
    iteration: dict[str, int]
    name: str | None = None
    value: Any = None
    dtype: str | None = None
    offsets: list[int] | None = None
    shape: list[int] | None = None
    valid_shape: list[int] | None = None
    source: str | None = None
    target: str | None = None
    inputs: list[dict] = field(default_factory=list)
    attrs: dict = field(default_factory=dict)


class Session:
    def __init__(self, options: Options | None) -> None:
        self.options = options or Options()
        self.records: list[Record] = []
        self.kernel_args: list[dict] = []


_CUR: contextvars.ContextVar[Session | None] = contextvars.ContextVar("standin_session", default=None)


@contextlib.contextmanager
def session(options: Options | None = None) -> Iterator[Session]:
    s = Session(options)
    tok = _CUR.set(s)
    try:
        yield s
    finally:
        _CUR.reset(tok)


class EmulatorError(RuntimeError):
    def __init__(self, message: str, file: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.code = "STANDIN"
        self.message = message
        self.file = file
        self.line = line


# ------------------------------------------------------------------------------------------- symbols


class Sym:
    """A lazily evaluated integer expression over loop indices."""

    def __init__(self, fn: Callable[[dict], int], text: str) -> None:
        self.fn = fn
        self.text = text

    def _bin(self, other: Any, f: Callable[[int, int], int], sym: str, rev: bool = False) -> Sym:
        a, b = (other, self) if rev else (self, other)
        return Sym(lambda env: f(_ev(a, env), _ev(b, env)), f"({a}{sym}{b})")

    def __add__(self, o): return self._bin(o, lambda a, b: a + b, "+")
    def __radd__(self, o): return self._bin(o, lambda a, b: a + b, "+", True)
    def __sub__(self, o): return self._bin(o, lambda a, b: a - b, "-")
    def __rsub__(self, o): return self._bin(o, lambda a, b: a - b, "-", True)
    def __mul__(self, o): return self._bin(o, lambda a, b: a * b, "*")
    def __rmul__(self, o): return self._bin(o, lambda a, b: a * b, "*", True)
    def __floordiv__(self, o): return self._bin(o, lambda a, b: a // b, "/")
    def __mod__(self, o): return self._bin(o, lambda a, b: a % b, "%")
    def __neg__(self): return Sym(lambda env: -self.fn(env), f"-{self}")
    def min(self, o): return self._bin(o, min, " min ")
    def max(self, o): return self._bin(o, max, " max ")
    def __eq__(self, o): return self._bin(o, lambda a, b: int(a == b), "==")  # type: ignore[override]
    def __hash__(self) -> int: raise TypeError("unhashable type: 'SymbolicScalar'")
    def __bool__(self) -> bool: raise ValueError("Not concrete value")
    def __int__(self) -> int: raise ValueError("Not concrete value")
    def __repr__(self) -> str: return self.text


def _ev(v: Any, env: dict) -> int:
    return v.fn(env) if isinstance(v, Sym) else int(v)


def _concrete(v: Any) -> int:
    """A symbolic extent that is the same for every index value (e.g. (i+1)*32 - i*32) becomes an int."""
    if not isinstance(v, Sym):
        return int(v)
    vals = {v.fn(_AnyEnv(k)) for k in (0, 1, 7)}
    if len(vals) != 1:
        raise TypeError("Cannot convert symbols to int")
    return vals.pop()


class _AnyEnv(dict):
    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = k

    def __missing__(self, key: str) -> int:
        return self.k


# ------------------------------------------------------------------------------------------- tracing


class Buf:
    """A kernel argument or a local ``pypto.tensor``: memory that writes go to."""

    def __init__(self, name: str, array: np.ndarray) -> None:
        self.name = name
        self.array = array


@dataclass
class Node:
    id: int
    op: str
    file: str | None
    line: int | None
    name: str | None
    operands: list[Any]
    compute: Callable[..., tuple[np.ndarray, tuple[int, ...]]]
    attrs: dict = field(default_factory=dict)
    geom: dict = field(default_factory=dict)


@dataclass
class Write:
    op: str
    file: str | None
    line: int | None
    target: Buf
    src: Any
    offsets: list[Any]
    id: int = 0


@dataclass
class LoopStep:
    var: str
    start: Any
    stop: Any
    step: Any
    body: list = field(default_factory=list)


class _Trace:
    def __init__(self) -> None:
        self.stack: list[list] = [[]]
        self.next_id = 0
        self.loops = 0

    def add(self, step: Any) -> None:
        self.stack[-1].append(step)

    def nid(self) -> int:
        self.next_id += 1
        return self.next_id


_TRACE: _Trace | None = None
_NAME_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def _site() -> tuple[str | None, int | None, str | None]:
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == _THIS:
        f = f.f_back
    if f is None:
        return None, None, None
    text = linecache.getline(f.f_code.co_filename, f.f_lineno)
    m = _NAME_RE.match(text)
    return f.f_code.co_filename, f.f_lineno, (m.group(1) if m else None)


class Tensor:
    """What kernel code holds: a traced op result (node) or a buffer (argument / local tensor)."""

    def __init__(self, ref: Node | Buf, shape: list[int], dtype: str) -> None:
        self._ref = ref
        self.shape = list(shape)
        self.dtype = dtype

    @property
    def dim(self) -> int:
        return len(self.shape)

    @property
    def name(self) -> str:
        return self._ref.name or ""

    def __add__(self, o): return add(self, o)
    def __radd__(self, o): return add(self, o)
    def __sub__(self, o): return sub(self, o)
    def __rsub__(self, o): return add(neg(self), o)
    def __mul__(self, o): return mul(self, o)
    def __rmul__(self, o): return mul(self, o)
    def __truediv__(self, o): return div(self, o)
    def __neg__(self): return neg(self)

    def __getitem__(self, key: Any) -> Tensor:
        offs, shape = _slices(self, key)
        return view(self, shape, offs)

    def __setitem__(self, key: Any, value: Tensor) -> None:
        if key == slice(None) or key == (slice(None),) * self.dim:
            self.move(value)
            return
        offs, _ = _slices(self, key)
        assemble(value, offs, self)

    def move(self, value: Tensor) -> None:
        _write("move", value, [0] * self.dim, self)

    def view(self, shape, offsets, *, valid_shape=None):  # noqa: ANN001, ANN201
        return view(self, shape, offsets, valid_shape=valid_shape)


def _slices(t: Tensor, key: Any) -> tuple[list[Any], list[int]]:
    if not isinstance(key, tuple):
        key = (key,)
    key = key + (slice(None),) * (t.dim - len(key))
    offs, shape = [], []
    for k, d in zip(key, t.shape, strict=True):
        start = 0 if k.start is None else k.start
        stop = d if k.stop is None else k.stop
        offs.append(start)
        shape.append(_concrete(stop - start))
    return offs, shape


class _Annot:
    def __init__(self, shape: Any, dtype: str) -> None:
        self.shape = shape
        self.dtype = dtype

    def to_tensor(self) -> None:  # marks a tensor parameter, like pypto.Tensor annotations
        return None


def Tensor_(shape: Any = None, dtype: str | None = None, name: str = "", *_a: Any, **_k: Any) -> Any:  # noqa: N802
    """``pypto.Tensor(...)``: an annotation outside tracing, a local tensor (NaN poison) inside."""
    if _TRACE is None:
        return _Annot(shape, dtype or "fp32")
    arr = np.full([_concrete(s) for s in shape], np.nan, dtype=to_numpy(dtype or "fp32"))
    file, line, var = _site()
    buf = Buf(name or var or "local", arr)
    return Tensor(buf, list(arr.shape), dtype or "fp32")


def _node(op_: str, operands: list[Any], shape: list[int], dtype_: str,
          compute: Callable[..., tuple[np.ndarray, tuple[int, ...]]], **attrs: Any) -> Tensor:
    assert _TRACE is not None, "pypto op called outside a jit kernel"
    file, line, var = _site()
    geom = attrs.pop("_geom", {})
    n = Node(_TRACE.nid(), op_, file, line, var, operands, compute, attrs, geom)
    _TRACE.add(n)
    return Tensor(n, shape, dtype_)


def _write(op: str, src: Tensor, offsets: list[Any], dst: Tensor) -> None:
    assert _TRACE is not None
    if not isinstance(dst._ref, Buf):
        raise EmulatorError("write into a value that is not a tensor argument or local tensor")
    file, line, _ = _site()
    _TRACE.add(Write(op, file, line, dst._ref, src, list(offsets), _TRACE.nid()))


# ------------------------------------------------------------------------------------------- ops

_NP = {"fp32": np.float32, "fp16": np.float16}


def _round(a: np.ndarray, dtype: str) -> np.ndarray:
    return a.astype(to_numpy(dtype))


def _dt(*xs: Any) -> str:
    for x in xs:
        if isinstance(x, Tensor):
            return x.dtype
    return "fp32"


def _bshape(xs: list[Any]) -> list[int]:
    shapes = [x.shape for x in xs if isinstance(x, Tensor)]
    return list(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def _valid_of(vals: list[tuple[np.ndarray, tuple[int, ...]]], shape: list[int]) -> tuple[int, ...]:
    out = list(shape)
    for arr, valid in vals:
        for a, (n, v) in enumerate(zip(arr.shape, valid, strict=True)):
            if n == shape[a]:
                out[a] = min(out[a], v)
    return tuple(out)


def _elementwise(op: str, f: Callable[..., np.ndarray], *xs: Any) -> Tensor:
    shape = _bshape(list(xs))
    dtype = _dt(*xs)

    def compute(*vals: Any) -> tuple[np.ndarray, tuple[int, ...]]:
        args = [v[0].astype(np.float32) if isinstance(v, tuple) else np.float32(v) for v in vals]
        with np.errstate(all="ignore"):
            res = _round(f(*args), dtype)
        return res, _valid_of([v for v in vals if isinstance(v, tuple)], shape)

    return _node(op, list(xs), shape, dtype, compute)


def add(a, b): return _elementwise("add", np.add, a, b)  # noqa: ANN001, ANN201, E704
def sub(a, b): return _elementwise("sub", np.subtract, a, b)  # noqa: ANN001, ANN201, E704
def mul(a, b): return _elementwise("mul", np.multiply, a, b)  # noqa: ANN001, ANN201, E704
def div(a, b): return _elementwise("div", np.divide, a, b)  # noqa: ANN001, ANN201, E704
def maximum(a, b): return _elementwise("maximum", np.maximum, a, b)  # noqa: ANN001, ANN201, E704
def exp(a): return _elementwise("exp", np.exp, a)  # noqa: ANN001, ANN201, E704
def sqrt(a): return _elementwise("sqrt", np.sqrt, a)  # noqa: ANN001, ANN201, E704
def rsqrt(a): return _elementwise("rsqrt", lambda x: 1.0 / np.sqrt(x), a)  # noqa: ANN001, ANN201, E704
def neg(a): return _elementwise("neg", np.negative, a)  # noqa: ANN001, ANN201, E704
def abs_(a): return _elementwise("abs", np.abs, a)  # noqa: ANN001, ANN201, E704
def reciprocal(a): return _elementwise("reciprocal", lambda x: 1.0 / x, a)  # noqa: ANN001, ANN201, E704


def cast(x: Tensor, dtype: str, *_a: Any, **_k: Any) -> Tensor:
    def compute(v: Any) -> tuple[np.ndarray, tuple[int, ...]]:
        return v[0].astype(np.float32).astype(to_numpy(dtype)), v[1]

    return _node("cast", [x], x.shape, dtype, compute, dtype=dtype)


def _reduce(op: str, f: Callable[..., np.ndarray], x: Tensor, dim: int, keepdim: bool) -> Tensor:
    d = dim % x.dim
    shape = list(x.shape)
    shape[d] = 1
    if not keepdim:
        shape.pop(d)

    def compute(v: Any) -> tuple[np.ndarray, tuple[int, ...]]:
        arr, valid = v
        box = tuple(slice(0, n) for n in valid)
        out = np.full(shape if keepdim else [*x.shape[:d], 1, *x.shape[d + 1:]], np.nan, np.float32)
        inner = f(arr[box].astype(np.float32), axis=d, keepdims=True)
        out[tuple(slice(0, n) for n in inner.shape)] = inner
        ov = list(valid)
        ov[d] = 1
        if not keepdim:
            out = out.reshape(shape)
            ov.pop(d)
        return _round(out, x.dtype), tuple(ov)

    return _node(op, [x], shape, x.dtype, compute, dim=d, keepdim=keepdim)


def sum_(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    return _reduce("sum", np.sum, x, dim, keepdim)


def amax(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    return _reduce("amax", np.max, x, dim, keepdim)


def matmul(a: Tensor, b: Tensor, out_dtype: str = "fp32", *, a_trans: bool = False, b_trans: bool = False,
           **_k: Any) -> Tensor:
    m = a.shape[1] if a_trans else a.shape[0]
    n = b.shape[0] if b_trans else b.shape[1]

    def compute(va: Any, vb: Any) -> tuple[np.ndarray, tuple[int, ...]]:
        x = va[0].astype(np.float32)
        y = vb[0].astype(np.float32)
        x = np.where(np.isnan(x), 0, x)
        x, y = (x.T if a_trans else x), (y.T if b_trans else y)
        ka = va[1][0] if a_trans else va[1][1]
        kb = vb[1][1] if b_trans else vb[1][0]
        if ka != kb:
            raise EmulatorError(f"K-dimension valid shape mismatch: {ka} vs {kb}")
        vm = va[1][1] if a_trans else va[1][0]
        vn = vb[1][0] if b_trans else vb[1][1]
        return _round(x @ y, out_dtype), (vm, vn)

    return _node("matmul", [a, b], [m, n], out_dtype, compute, a_trans=a_trans, b_trans=b_trans)


def transpose(x: Tensor, d0: int, d1: int) -> Tensor:
    shape = list(x.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]

    def compute(v: Any) -> tuple[np.ndarray, tuple[int, ...]]:
        valid = list(v[1])
        valid[d0], valid[d1] = valid[d1], valid[d0]
        return np.swapaxes(v[0], d0, d1).copy(), tuple(valid)

    return _node("transpose", [x], shape, x.dtype, compute, dim0=d0, dim1=d1)


def full(size: list[int], value: float, dtype: str = "fp32", **_k: Any) -> Tensor:
    def compute() -> tuple[np.ndarray, tuple[int, ...]]:
        return np.full(size, value, to_numpy(dtype)), tuple(size)

    return _node("full", [], list(size), dtype, compute, value=value)


def zeros(*size: Any, dtype: str = "fp32") -> Tensor:
    dims = list(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else list(size)
    return full(dims, 0.0, dtype)


def view(x: Tensor, shape: list[int], offsets: list[Any], *, valid_shape: list[Any] | None = None) -> Tensor:
    shape = [int(s) for s in shape]

    def compute(v: Any, env: dict) -> tuple[np.ndarray, tuple[int, ...]]:
        arr, src_valid = v
        offs = [_ev(o, env) for o in offsets]
        want = [_ev(s, env) for s in valid_shape] if valid_shape is not None else shape
        if valid_shape is not None and any(o + w > sv for o, w, sv in zip(offs, want, src_valid, strict=True)):
            raise EmulatorError(f"view valid region {want} at offsets {offs} leaves the tensor {list(src_valid)}")
        valid = tuple(max(0, min(w, sv - o)) for w, sv, o in zip(want, src_valid, offs, strict=True))
        out = np.full(shape, np.nan, dtype=arr.dtype)
        box = tuple(slice(0, n) for n in valid)
        src = tuple(slice(o, o + n) for o, n in zip(offs, valid, strict=True))
        out[box] = arr[src]
        return out, valid

    return _node("view", [x], shape, x.dtype, compute,
                 _geom={"offsets": offsets, "valid_shape": valid_shape})


def assemble(src: Tensor, offsets: list[Any], dst: Tensor, *_a: Any, **_k: Any) -> None:
    _write("assemble", src, offsets, dst)


def set_vec_tile_shapes(*_a: Any) -> None:
    return None


def set_cube_tile_shapes(*_a: Any, **_k: Any) -> None:
    return None


def ceildiv(a: Any, b: Any) -> Any:
    return (a + b - 1) // b


def loop(*args: Any, name: str | None = None, **_k: Any) -> Iterator[Sym]:
    assert _TRACE is not None, "pypto.loop outside a kernel"
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    _TRACE.loops += 1
    var = name or f"loop_{_TRACE.loops}"
    step_obj = LoopStep(var, start, stop, step)
    _TRACE.add(step_obj)
    _TRACE.stack.append(step_obj.body)
    try:
        yield Sym(lambda env: env[var], var)
    finally:
        _TRACE.stack.pop()


# ------------------------------------------------------------------------------------------- execution


class _Runner:
    def __init__(self, sess: Session | None) -> None:
        self.sess = sess if sess is not None and sess.options.record else None
        self.vals: dict[int, tuple[np.ndarray, tuple[int, ...]]] = {}
        self.last_seq: dict[int, int] = {}
        self.seq = 0

    def _operand(self, o: Any, env: dict, refs: list[dict], parent: Node) -> Any:
        if isinstance(o, Tensor):
            ref = o._ref
            if isinstance(ref, Buf):
                arr = ref.array
                if self.sess is not None:
                    refs.append({"kind": "tensor", "name": ref.name})
                return arr, tuple(arr.shape)
            refs.append({"kind": "record", "seq": self.last_seq.get(ref.id, -1)})
            return self.vals[ref.id]
        return o

    def _record(self, **kw: Any) -> int:
        seq = self.seq
        self.seq += 1
        if self.sess is not None:
            self.sess.records.append(Record(seq=seq, **kw))
        return seq

    def run(self, steps: list, env: dict, it: dict[str, int]) -> None:
        for st in steps:
            if isinstance(st, LoopStep):
                for i in range(_ev(st.start, env), _ev(st.stop, env), _ev(st.step, env)):
                    self.run(st.body, {**env, st.var: i}, {**it, st.var: i})
            elif isinstance(st, Node):
                refs: list[dict] = []
                vals = [self._operand(o, env, refs, st) for o in st.operands]
                try:
                    value, valid = st.compute(*vals, env) if st.op == "view" else st.compute(*vals)
                except EmulatorError as exc:
                    exc.file, exc.line = exc.file or st.file, exc.line or st.line
                    raise
                self.vals[st.id] = (value, valid)
                geom: dict[str, Any] = {}
                if st.op == "view":
                    geom["offsets"] = [_ev(o, env) for o in st.geom["offsets"]]
                    src = st.operands[0]._ref
                    if isinstance(src, Buf):
                        geom["source"] = src.name
                self.last_seq[st.id] = self._record(
                    node=st.id, op=st.op, file=st.file, line=st.line, iteration=dict(it), name=st.name,
                    value=value.copy(), dtype=str(_name(value.dtype)), shape=list(value.shape),
                    valid_shape=list(valid), inputs=refs, attrs=dict(st.attrs), **geom,
                )
            else:
                self._write(st, env, it)

    def _write(self, st: Write, env: dict, it: dict[str, int]) -> None:
        refs: list[dict] = []
        arr, valid = self._operand(st.src, env, refs, None)  # type: ignore[arg-type]
        offs = [_ev(o, env) for o in st.offsets]
        dst = st.target.array
        for o, n, d in zip(offs, valid, dst.shape, strict=True):
            if o < 0 or o + n > d:
                raise EmulatorError(f"{st.op} out of range: offsets {offs} extent {list(valid)} into {list(dst.shape)}",
                                    st.file, st.line)
        box = tuple(slice(0, n) for n in valid)
        dst[tuple(slice(o, o + n) for o, n in zip(offs, valid, strict=True))] = arr[box].astype(np.float32).astype(dst.dtype)
        self._record(node=st.id, op=st.op, file=st.file, line=st.line, iteration=dict(it), name=None,
                     value=arr.copy(), dtype=str(_name(arr.dtype)), offsets=offs, shape=list(arr.shape),
                     valid_shape=list(valid), target=st.target.name, inputs=refs)


def _name(dt: np.dtype) -> str:
    from runtime.dtypes import name_of

    return name_of(dt)


def _name_last_only(steps: list) -> None:
    """Only the last op of a source line carries the variable name (``inv = rsqrt(ms + eps)``: rsqrt)."""
    last: dict[tuple, Node] = {}

    def walk(items: list) -> None:
        for st in items:
            if isinstance(st, LoopStep):
                walk(st.body)
            elif isinstance(st, Node):
                key = (st.file, st.line)
                if key in last and last[key].name == st.name:
                    last[key].name = None
                last[key] = st

    walk(steps)


def jit(func: Callable | None = None, **_opts: Any) -> Any:
    if func is None:
        return lambda f: jit(f)

    sig = inspect.signature(func)
    tensor_params = [p.name for p in sig.parameters.values() if hasattr(p.annotation, "to_tensor")]

    def call(*args: Any, **kwargs: Any) -> None:
        global _TRACE
        arrays = args[: len(tensor_params)]
        bufs = [Buf(n, a) for n, a in zip(tensor_params, arrays, strict=True)]
        handles = [Tensor(b, list(b.array.shape), _name(b.array.dtype)) for b in bufs]
        sess = _CUR.get()
        if sess is not None:
            sess.kernel_args = [{"name": b.name, "shape": list(b.array.shape), "dtype": _name(b.array.dtype)}
                                for b in bufs]
        _TRACE = _Trace()
        try:
            func(*handles, *args[len(tensor_params):], **kwargs)
            steps = _TRACE.stack[0]
            _name_last_only(steps)
        finally:
            _TRACE = None
        _Runner(sess).run(steps, {}, {})

    call.__wrapped__ = func  # type: ignore[attr-defined]
    return call


# ------------------------------------------------------------------------------------------- module


def _build_module() -> types.ModuleType:
    m = types.ModuleType("pypto")
    m.__dict__.update(
        DT_FP32="fp32", DT_FP16="fp16", DT_BF16="bf16", DT_INT32="int32",
        DYNAMIC="DYNAMIC", DYN="DYN", STATIC="STATIC",
        Tensor=Tensor_, tensor=Tensor_, view=view, assemble=assemble, cast=cast, add=add, sub=sub, mul=mul,
        div=div, maximum=maximum, exp=exp, sqrt=sqrt, rsqrt=rsqrt, neg=neg, abs=abs_, reciprocal=reciprocal,
        sum=sum_, amax=amax, matmul=matmul, transpose=transpose, full=full, zeros=zeros,
        set_vec_tile_shapes=set_vec_tile_shapes, set_cube_tile_shapes=set_cube_tile_shapes, ceildiv=ceildiv,
        loop=loop,
    )
    m.frontend = types.SimpleNamespace(jit=jit)
    return m


PYPTO = _build_module()


def install() -> None:
    sys.modules["pypto"] = PYPTO
