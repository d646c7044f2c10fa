"""A deliberately tiny stand-in for ``runtime.emulator`` (test seam of the verifier only).

Why: the verifier's own logic (sandbox, anti-gaming, comparison, verdicts, report) must be testable on its
own, independent of how complete the real emulator is at any moment. This module offers the emulator's
*interface* (``install``, ``session``, ``EmulatorError``, ``counters.runs``) over a numpy subset of the PyPTO
dialect that the fixture kernels use: ``frontend.jit``, ``Tensor`` annotations, ``set_vec_tile_shapes``,
``loop``, ``view`` (with ``valid_shape``), ``assemble`` (bounds-checked), elementwise math and ``cast``.
Loop indices and dynamic dims are ints with ``.min``/``.max`` like SymbolicScalar. It is NOT an emulator:
no tracing, no tile constraints. Tests that need the real thing use ``runtime.emulator``.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import types
from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np


class EmulatorError(Exception):
    def __init__(self, code: str, message: str, *, file: str | None = None, line: int | None = None,
                 op: str | None = None) -> None:
        self.code, self.message, self.file, self.line, self.op = code, message, file, line, op
        super().__init__(f"{code}: {message}")

    def __reduce__(self):
        return (_rebuild, (self.code, self.message, self.file, self.line, self.op))


def _rebuild(code, message, file, line, op):
    return EmulatorError(code, message, file=file, line=line, op=op)


class _Counters:
    def __init__(self) -> None:
        self.runs = 0
        self.ops: dict[str, int] = {}

    def model_dump(self, mode: str = "json") -> dict[str, Any]:
        return {"runs": self.runs, "ops": dict(sorted(self.ops.items()))}


class _Session:
    def __init__(self) -> None:
        self.counters = _Counters()
        self.diagnostics: list[Any] = []


_CURRENT: contextvars.ContextVar[_Session | None] = contextvars.ContextVar("fake_session", default=None)


@contextlib.contextmanager
def session(options: Any = None) -> Iterator[_Session]:
    s = _Session()
    token = _CURRENT.set(s)
    try:
        yield s
    finally:
        _CURRENT.reset(token)


def _count(op: str) -> None:
    s = _CURRENT.get()
    if s is not None:
        s.counters.ops[op] = s.counters.ops.get(op, 0) + 1


class Sym(int):
    """An int that also offers SymbolicScalar's ``min``/``max`` and keeps them through arithmetic."""

    def min(self, other: int) -> Sym:
        return Sym(min(int(self), int(other)))

    def max(self, other: int) -> Sym:
        return Sym(max(int(self), int(other)))


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__",
              "__rfloordiv__", "__mod__", "__neg__"):
    def _make(name: str) -> Any:
        base = getattr(int, name)

        def method(self: Sym, *a: Any) -> Any:
            r = base(self, *a)
            return Sym(r) if isinstance(r, int) and r is not NotImplemented else r
        return method
    setattr(Sym, _name, _make(_name))


_LOW = (np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16))


class _Shaped(np.ndarray):
    """Kernel-side tensor: dims as ``Sym``; bf16/fp16 results rounded per op like the device."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = [np.asarray(i) if isinstance(i, np.ndarray) else i for i in inputs]
        result = getattr(ufunc, method)(*plain, **kwargs)
        low = [i.dtype for i in plain if isinstance(i, np.ndarray) and i.dtype in _LOW]
        if low and isinstance(result, np.ndarray) and result.dtype == np.float32:
            result = result.astype(low[0])
        return result.view(_Shaped) if isinstance(result, np.ndarray) else result

    @property
    def shape(self) -> tuple[Sym, ...]:  # type: ignore[override]
        return tuple(Sym(d) for d in np.ndarray.shape.__get__(self))


def _caller() -> tuple[str | None, int | None]:
    f = sys._getframe(2)
    return f.f_code.co_filename, f.f_lineno


def build_module() -> types.ModuleType:
    m = types.ModuleType("pypto")
    m.DT_FP32, m.DT_FP16, m.DT_BF16 = np.float32, np.float16, ml_dtypes.bfloat16
    m.DYNAMIC = m.DYN = "DYNAMIC"
    m.STATIC = "STATIC"

    class Tensor:
        def __init__(self, shape: Any = None, dtype: Any = None, *a: Any) -> None:
            self.shape, self.dtype = shape, dtype

        def to_tensor(self) -> None:  # marks tensor parameters, like the real annotation
            return None

    m.Tensor = Tensor
    m.EmulatorError = EmulatorError

    def jit(func: Any = None, **_opts: Any) -> Any:
        if func is None:
            return lambda f: jit(f)

        def kernel(*args: Any) -> None:
            s = _CURRENT.get()
            if s is not None:
                s.counters.runs += 1
            func(*[a.view(_Shaped) if isinstance(a, np.ndarray) else a for a in args])
            return None

        kernel.__name__ = func.__name__
        return kernel

    m.frontend = types.SimpleNamespace(jit=jit, function=lambda f: f, dynamic=lambda n: n)
    m.jit = jit
    m.set_vec_tile_shapes = lambda *a: None

    def loop(*a: Any, name: str = "", idx_name: str = "", **_k: Any) -> Iterator[Sym]:
        if len(a) == 1:
            start, stop, step = 0, a[0], 1
        else:
            start, stop, step = (list(a) + [1])[:3]
        for i in range(int(start), int(stop), int(step)):
            yield Sym(i)

    m.loop = loop

    def view(x: np.ndarray, shape: list[int], offsets: list[int], valid_shape: list[int] | None = None) -> Any:
        _count("view")
        valid = [int(v) for v in (valid_shape or shape)]
        sl = tuple(slice(int(o), int(o) + v) for o, v in zip(offsets, valid, strict=True))
        for o, v, d in zip(offsets, valid, np.ndarray.shape.__get__(x), strict=True):
            if int(o) < 0 or int(o) + v > d:
                file, line = _caller()
                raise EmulatorError("EMU_OOB", f"view window {offsets}+{valid} leaves tensor of shape {x.shape}",
                                    file=file, line=line, op="view")
        return np.asarray(x)[sl].copy().view(_Shaped)

    def assemble(src: np.ndarray, offsets: list[int], dst: np.ndarray) -> None:
        _count("assemble")
        src = np.asarray(src)
        for o, v, d in zip(offsets, src.shape, np.ndarray.shape.__get__(dst), strict=True):
            if int(o) < 0 or int(o) + v > d:
                file, line = _caller()
                raise EmulatorError("EMU_OOB", f"assemble window {offsets}+{list(src.shape)} leaves the "
                                    f"destination of shape {list(dst.shape)}", file=file, line=line, op="assemble")
        sl = tuple(slice(int(o), int(o) + v) for o, v in zip(offsets, src.shape, strict=True))
        np.asarray(dst)[sl] = src.astype(dst.dtype)

    m.view, m.assemble = view, assemble

    def unary(name: str, f: Any) -> Any:
        def op(x: Any) -> Any:
            _count(name)
            x = np.asarray(x)
            return f(x.astype(np.float32)).astype(x.dtype).view(_Shaped)
        return op

    m.exp = unary("exp", np.exp)
    m.sigmoid = unary("sigmoid", lambda v: 1.0 / (1.0 + np.exp(-v)))
    m.sqrt = unary("sqrt", np.sqrt)
    m.abs = unary("abs", np.abs)
    m.add = lambda a, b: np.asarray(a) + np.asarray(b)
    m.sub = lambda a, b: np.asarray(a) - np.asarray(b)
    m.mul = lambda a, b: np.asarray(a) * np.asarray(b)
    m.div = lambda a, b: np.asarray(a) / np.asarray(b)
    m.cast = lambda x, dt, *a, **k: np.asarray(x).astype(dt).view(_Shaped)
    m.zeros = lambda shape, dtype=np.float32: np.zeros([int(s) for s in shape], dtype=dtype)
    return m


_MODULE: types.ModuleType | None = None


def install() -> None:
    global _MODULE
    if _MODULE is None:
        _MODULE = build_module()
    sys.modules["pypto"] = _MODULE
