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
from runtime.emulator import _ops_reduce as _reduce  # noqa: F401 - registers reductions before install
from runtime.emulator._enums import DataType
from runtime.emulator._errors import py_error
from runtime.emulator._ops_matmul import matmul
from runtime.emulator._registry import OPS
from runtime.emulator._registry import unsupported_stub as _unsupported
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import current_tracer

__all__ = ["install_methods"]

_SPECIAL = {"move", "assemble", "view", "reshape", "matmul", "concat", "full", "zeros", "ones", "arange"}


# Op methods the emulator's Tensor has that the real pypto 0.2.0 wheel's Tensor lacks (its inventory:
# tests/emulator/data/wheel_0_2_0_names.json): `x.abs()` there is `AttributeError: 'Tensor' object has no attribute
# 'abs'` (crosscheck probe s19_unary_methods), so under compat 0.2.0 they raise it; under head they stay.
NOT_ON_0_2_0_TENSOR: frozenset[str] = frozenset({
    "abs", "acos", "acosh", "argmax", "argmin", "argsort", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "cast", "cbrt",
    "ceil_div", "clip", "copysign", "cosh", "cumprod", "eq", "erf", "erfc", "expand_exp_dif", "floor_div", "ge", "gt",
    "index_put_", "index_select", "isfinite", "isnan", "le", "logical_and", "lt", "minimum", "ne", "neg", "one_hot",
    "permute", "pow", "prod", "remainder", "rms_norm", "sinh", "sort", "tan", "tanh",
})


def _method(name: str):
    impl = OPS[name].impl

    if name in NOT_ON_0_2_0_TENSOR:
        def meth(self: Tensor, *a: Any, **k: Any) -> Any:
            tr = current_tracer()
            if tr is not None and tr.options.compat == "0.2.0":
                raise tr.pyerror("AttributeError", f"'Tensor' object has no attribute '{name}' (pypto 0.2.0's "
                                 f"Tensor has no such method: call pypto.{name}(x, ...))")
            return impl(self, *a, **k)
    else:
        def meth(self: Tensor, *a: Any, **k: Any) -> Any:
            return impl(self, *a, **k)

    meth.__name__ = name
    meth.__doc__ = OPS[name].notes
    return meth


def _matmul_op(a: Tensor, b: Any) -> Tensor:
    if not isinstance(b, Tensor):
        return NotImplemented
    dt = b.dtype
    out: DataType
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
    table: dict[str, Any] = {
        "move": lambda self, other: core.move(self, other),
        "assemble": lambda self, input, offsets: core.assemble(input, offsets, self),
        "view": lambda self, shape=None, offsets=None, *, valid_shape=None, dtype=None: core.view(
                self, shape, offsets, valid_shape=valid_shape, dtype=dtype),
        "reshape": lambda self, shape, *, valid_shape=None, inplace=False: core.reshape(
                self, shape, valid_shape=valid_shape, inplace=inplace),
        "matmul": lambda self, mat2, out_dtype, **kw: matmul(self, mat2, out_dtype, **kw),
        "fill_": lambda self, other: core.move(self, _create.full(self.shape, other, self.dtype)),
        "triu_": lambda self, diagonal=0: core.move(self, OPS["triu"].impl(self, diagonal)),
        "tril_": lambda self, diagonal=0: core.move(self, OPS["tril"].impl(self, diagonal)),
        "sort32": lambda self, *a, **k: _unsupported("sort32")(self, *a, **k),
        "mrgsort": lambda self, *a, **k: _unsupported("mrgsort")(self, *a, **k),
        "set_cache_policy": lambda self, *a, **k: None,
        "get_cache_policy": lambda self, *a, **k: None,
        "__add__": lambda a, b: OPS["add"].impl(a, b),
        "__radd__": lambda a, b: OPS["add"].impl(a, b),
        "__sub__": lambda a, b: OPS["sub"].impl(a, b),
        "__rsub__": lambda a, b: OPS["neg"].impl(OPS["sub"].impl(a, b)),
        "__mul__": lambda a, b: OPS["mul"].impl(a, b),
        "__rmul__": lambda a, b: OPS["mul"].impl(a, b),
        "__truediv__": lambda a, b: OPS["div"].impl(a, b),
        "__rtruediv__": lambda a, b: OPS["mul"].impl(OPS["reciprocal"].impl(a), b),
        "__floordiv__": lambda a, b: OPS["floor"].impl(OPS["div"].impl(a, b)),
        "__mod__": lambda a, b: OPS["remainder"].impl(a, b),
        "__pow__": lambda a, b: OPS["pow"].impl(a, b),
        "__neg__": lambda a: OPS["neg"].impl(a),
        "__pos__": lambda a: a,
        "__lt__": lambda a, b: OPS["lt"].impl(a, b),
        "__le__": lambda a, b: OPS["le"].impl(a, b),
        "__gt__": lambda a, b: OPS["gt"].impl(a, b),
        "__ge__": lambda a, b: OPS["ge"].impl(a, b),
        "__eq__": lambda a, b: OPS["eq"].impl(a, b),
        "__ne__": lambda a, b: OPS["ne"].impl(a, b),
        "__matmul__": _matmul_op,
        "__getitem__": _indexing.tensor_getitem,
        "__setitem__": _indexing.tensor_setitem,
        "__hash__": None,  # comparisons build tensors, like the real class
    }
    for name, value in table.items():
        setattr(T, name, value)
