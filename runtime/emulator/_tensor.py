"""`pypto.Tensor`: the trace-time handle of a tensor.

A Tensor holds no data: it names a storage key that the executor fills with a numpy array and a valid
shape at run time. Its shape comes from the trace (ints, or SymbolicScalars for dynamic dims). Python
operators and methods record graph ops through the op registry; indexing lowers to view / reshape /
assemble / move exactly like the real ``tensor.py`` (spec §2.3).
"""

from __future__ import annotations

from typing import Any

from runtime.emulator._enums import DataType, StatusType, TileOpFormat
from runtime.emulator._errors import py_error
from runtime.emulator._symbolic import SymbolicScalar

__all__ = ["Tensor", "simplify_int"]


def _linear(x: Any) -> tuple[dict[str, tuple[Any, int]], int] | None:
    """Linear form {atom_repr: (atom, coeff)}, const of an int/SymbolicScalar, or None if not linear."""
    if isinstance(x, int):
        return {}, int(x)
    if not isinstance(x, SymbolicScalar):
        return None
    if x._value is not None:
        return {}, x._value
    if x._kind == "bin" and x._op in ("+", "-"):
        a, b = _linear(x._a), _linear(x._b)
        if a is None or b is None:
            return None
        sign = 1 if x._op == "+" else -1
        terms = dict(a[0])
        for k, (atom, c) in b[0].items():
            prev = terms.get(k, (atom, 0))[1]
            terms[k] = (atom, prev + sign * c)
        return terms, a[1] + sign * b[1]
    if x._kind == "bin" and x._op == "*":
        a, b = _linear(x._a), _linear(x._b)
        if a is None or b is None:
            return None
        if not a[0]:
            a, b = b, a
        if b[0]:
            return {repr(x): (x, 1)}, 0
        k = b[1]
        return {n: (atom, c * k) for n, (atom, c) in a[0].items()}, a[1] * k
    return {repr(x): (x, 1)}, 0


def simplify_int(x: Any) -> Any:
    """Simplify a linear SymbolicScalar expression; returns an int when the symbols cancel."""
    lf = _linear(x)
    if lf is None:
        return x
    terms, const = lf
    if all(c == 0 for _, c in terms.values()):
        return const
    return x


class Tensor:
    """A PyPTO tensor inside a kernel: shape, dtype, storage key; data exists only at run time."""

    __slots__ = ("key", "_shape", "_dtype", "_name", "_format", "kind", "valid_shape", "_consumed",
                 "_written", "_loops", "_closed", "producer", "param_index", "_read", "_dtype_given", "_loop_read_warned", "__weakref__")
    __hash__ = None  # type: ignore[assignment]  # comparisons build tensors, like the real class

    def __init__(self, shape: Any = None, dtype: Any = None, name: str = "", format: Any = None,
                 data_ptr: Any = None, device: Any = None, ori_shape: Any = None) -> None:
        from runtime.emulator._trace import current_tracer

        self._shape = list(shape) if shape is not None else []
        self._dtype = DataType(dtype) if dtype is not None else DataType.DT_FP32
        self._name = name
        self._format = TileOpFormat(format) if format is not None else TileOpFormat.TILEOP_ND
        self.kind = "annotation"
        self.valid_shape = None
        self._consumed = False
        self._written = False
        self._loops: tuple = ()
        self._closed = 0
        self.producer: str | None = None
        self.param_index: int | None = None
        self._read: tuple | None = None
        self._loop_read_warned = False
        self._dtype_given = dtype is not None or bool(shape)
        self.key = -1
        if isinstance(shape, tuple) and any(isinstance(d, StatusType) for d in shape):
            from runtime.emulator._trace import user_location

            f, ln = user_location()
            raise py_error("ValueError", "Invalid value type (use a list, not a tuple, for DYNAMIC/STATIC dims)",
                           file=f, line=ln)
        tr = current_tracer()
        if tr is not None and getattr(tr, "_binding", False) is False:
            # `pypto.tensor(...)` inside a kernel: a local tensor without producer
            from runtime.emulator._ops_core import register_local

            register_local(tr, self)

    # annotation protocol (parameter detection, §1.2) -------------------------------------------------
    def to_tensor(self) -> Tensor:
        return self

    def __class_getitem__(cls, item: Any) -> _BracketAnnotation:
        return _BracketAnnotation(item)

    # properties ----------------------------------------------------------------------------------------
    @property
    def shape(self) -> list:
        return list(self._shape)

    @property
    def dtype(self) -> DataType:
        return self._dtype

    @property
    def dim(self) -> int:
        return len(self._shape)

    @property
    def format(self) -> TileOpFormat:
        return self._format

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, v: str) -> None:
        self._name = str(v)

    @property
    def id(self) -> int:
        return self.key

    def __repr__(self) -> str:
        return f"Tensor(name={self._name!r}, shape={self._shape}, dtype={self._dtype.name})"

    def __bool__(self) -> bool:
        return True

    def __len__(self) -> int:
        d = self._shape[0] if self._shape else 0
        if isinstance(d, SymbolicScalar):
            return d.concrete()
        return int(d)

    def __iter__(self):
        raise py_error("TypeError", "'Tensor' object is not iterable")

    # indexing ------------------------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        from runtime.emulator import _indexing

        return _indexing.tensor_getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        from runtime.emulator import _indexing

        _indexing.tensor_setitem(self, key, value)


class _BracketAnnotation:
    """``pypto.Tensor[[shape], dtype, format]`` / ``pypto.Tensor[...]`` annotation object."""

    def __init__(self, item: Any) -> None:
        self.shape: Any = None
        self.dtype: Any = None
        self.format: Any = None
        self.name = ""
        if item is Ellipsis:
            self.shape = None  # from the call-time tensor; 0.2.0 forces FP32
            self.dtype = "FORCE_FP32"
            return
        items = item if isinstance(item, tuple) else (item,)
        for it in items:
            if isinstance(it, dict):
                self.shape = it.get("shape", self.shape)
                self.dtype = it.get("dtype", self.dtype)
                self.format = it.get("format", self.format)
                self.name = it.get("name", self.name)
            elif isinstance(it, list | tuple):
                self.shape = list(it)
            elif isinstance(it, DataType):
                self.dtype = it
            elif isinstance(it, TileOpFormat):
                self.format = it

    def to_tensor(self) -> _BracketAnnotation:
        return self
