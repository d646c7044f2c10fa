"""Tensor methods, Python operators and indexing, wired to the registered ops (spec §2.2).

The one place that installs behaviour on `Tensor`: `_tensor` defines the handle without importing any op
module (the ops import `_tensor`), and `install_methods` (run when `_module` builds the `pypto` namespace)
attaches every op method, operator and ``t[...]`` / ``t[...] = v`` here.
"""

from __future__ import annotations

from typing import Any

from runtime.emulator import _indexing
from runtime.emulator import _ops_core as core
from runtime.emulator import _ops_create as _create
from runtime.emulator import _ops_math as m
from runtime.emulator import _ops_reduce as _reduce  # noqa: F401 - registers reductions before install
from runtime.emulator._enums import DataType
from runtime.emulator._errors import py_error
from runtime.emulator._ops_matmul import matmul
from runtime.emulator._registry import OPS
from runtime.emulator._tensor import Tensor

__all__ = ["install_methods"]

_SPECIAL = {"move", "assemble", "view", "reshape", "matmul", "concat", "full", "zeros", "ones", "arange"}


def _method(name: str):
    impl = OPS[name].impl

    def meth(self: Tensor, *a: Any, **k: Any) -> Any:
        return impl(self, *a, **k)

    meth.__name__ = name
    meth.__doc__ = OPS[name].notes
    return meth


def _matmul_op(a: Tensor, b: Any) -> Tensor:
    if not isinstance(b, Tensor):
        return NotImplemented
    dt = b.dtype
    if dt in (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32):
        out = dt
    elif dt == DataType.DT_INT8:
        out = DataType.DT_INT32
    else:
        raise py_error("RuntimeError", "unsupported dtype")
    return matmul(a, b, out)


def install_methods() -> None:
    T = Tensor
    for name, spec in OPS.items():
        if spec.method and name not in _SPECIAL and not hasattr(T, name):
            setattr(T, name, _method(name))
    T.move = lambda self, other: core.move(self, other)
    T.assemble = lambda self, input, offsets: core.assemble(input, offsets, self)
    T.view = lambda self, shape=None, offsets=None, *, valid_shape=None, dtype=None: core.view(
        self, shape, offsets, valid_shape=valid_shape, dtype=dtype)
    T.reshape = lambda self, shape, *, valid_shape=None, inplace=False: core.reshape(
        self, shape, valid_shape=valid_shape, inplace=inplace)
    T.matmul = lambda self, mat2, out_dtype, **kw: matmul(self, mat2, out_dtype, **kw)
    T.fill_ = lambda self, value: core.move(self, _create.full(self.shape, value, self.dtype))
    T.triu_ = lambda self, diagonal=0: core.move(self, OPS["triu"].impl(self, diagonal))
    T.tril_ = lambda self, diagonal=0: core.move(self, OPS["tril"].impl(self, diagonal))
    T.set_cache_policy = lambda self, *a, **k: None
    T.get_cache_policy = lambda self, *a, **k: None
    T.__add__ = lambda a, b: m.add(a, b)
    T.__radd__ = lambda a, b: m.add(a, b)
    T.__sub__ = lambda a, b: m.sub(a, b)
    T.__rsub__ = lambda a, b: m.neg(m.sub(a, b))
    T.__mul__ = lambda a, b: m.mul(a, b)
    T.__rmul__ = lambda a, b: m.mul(a, b)
    T.__truediv__ = lambda a, b: m.div(a, b)
    T.__rtruediv__ = lambda a, b: m.mul(m.reciprocal(a), b)
    T.__floordiv__ = lambda a, b: m.floor(m.div(a, b))
    T.__mod__ = lambda a, b: m.remainder(a, b)
    T.__pow__ = lambda a, b: m.pow(a, b)
    T.__neg__ = lambda a: m.neg(a)
    T.__pos__ = lambda a: a
    T.__abs__ = lambda a: m.abs(a)
    T.__lt__ = lambda a, b: m.lt(a, b)
    T.__le__ = lambda a, b: m.le(a, b)
    T.__gt__ = lambda a, b: m.gt(a, b)
    T.__ge__ = lambda a, b: m.ge(a, b)
    T.__eq__ = lambda a, b: m.eq(a, b)
    T.__ne__ = lambda a, b: m.ne(a, b)
    T.__matmul__ = _matmul_op
    T.__getitem__ = _indexing.tensor_getitem
    T.__setitem__ = _indexing.tensor_setitem
    T.__hash__ = None
