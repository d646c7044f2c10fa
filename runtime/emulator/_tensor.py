"""`pypto.Tensor`: the trace-time handle of a tensor.

A Tensor holds no data: it names a storage key that the executor fills with a numpy array and a valid
shape at run time. Its shape comes from the trace (ints, or SymbolicScalars for dynamic dims). Python
operators and methods record graph ops through the op registry (installed on the class by `_methods`, the
one place that wires methods to ops); indexing lowers to view / reshape /
assemble / move exactly like the real ``tensor.py`` (spec §2.3).
"""

from __future__ import annotations

from typing import Any

from runtime.emulator._enums import DataType, StatusType, TileOpFormat
from runtime.emulator._errors import py_error
from runtime.emulator._location import user_location
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._trace import current_tracer

__all__ = ["Tensor"]


class Tensor:
    """A PyPTO tensor inside a kernel: shape, dtype, storage key; data exists only at run time."""

    __slots__ = ("key", "_shape", "_dtype", "_name", "_format", "kind", "valid_shape", "_consumed",
                 "_written", "_loops", "_closed", "producer", "param_index", "_read", "_dtype_given", "_loop_read_warned",
                 "_gm_view", "_bare", "_reshaped", "_dtype_set", "_dyn_whole", "__weakref__")
    __hash__ = None  # type: ignore[assignment]  # comparisons build tensors, like the real class

    def __init__(self, shape: Any = None, dtype: Any = None, name: str = "", format: Any = None,
                 data_ptr: Any = None, device: Any = None, ori_shape: Any = None) -> None:
        self._shape = list(shape) if shape is not None else []
        # every op output is built here with a DataType already: the enum call (~2 us) is for user values only
        self._dtype = dtype if type(dtype) is DataType else DataType(dtype) if dtype is not None else DataType.DT_FP32
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
        self._gm_view: tuple | None = None
        """set on a view / reshape / unsqueeze of a kernel argument (`_ops_core.gm_view`)"""
        self._bare = -1
        """a view of a kernel argument recorded with no vec tile set: the tracer's `Tracer.bare_loops` then
        (`_ops_core.bare_view`), else -1"""
        self._reshaped = False
        """a reshape of a computed tile, or a ``keepdim=False`` reduction (`_ops_core.check_gm_copy`)"""
        self._dyn_whole = False
        """a ``cast`` of a whole kernel argument: `_ops_core.check_whole_dynamic` treats it as the argument (refused
        under 0.2.0 when its shape has a DYNAMIC axis)"""
        self._dtype_given = dtype is not None or bool(shape)
        self._dtype_set = dtype is not None
        """the dtype was written (a ``@pypto.frontend.function`` helper checks only that one: `_check_nested_arg`)"""
        self.key = -1
        if isinstance(shape, tuple) and any(isinstance(d, StatusType) for d in shape):
            f, ln = user_location()
            raise py_error("ValueError", "Invalid value type (use a list, not a tuple, for DYNAMIC/STATIC dims)",
                           file=f, line=ln)
        tr = current_tracer()
        if tr is not None and not tr._binding:
            # `pypto.tensor(...)` inside a kernel: a local tensor without producer
            tr.register_local(self)

    @classmethod
    def of_op(cls, shape: list, dtype: DataType) -> Tensor:
        """``Tensor(shape, dtype, "")`` built while the tracer binds an op output (no local registered): the
        constructor's fields, set without its argument checks - every traced op makes one (~40% less per op).
        ``tests/emulator/test_trace_fast.py`` holds it to the constructor."""
        t = _new(cls)
        t._shape = list(shape)
        t._dtype = dtype
        t._name = ""
        t._format = _ND
        t.kind = "annotation"
        t.valid_shape = None
        t._consumed = False
        t._written = False
        t._loops = ()
        t._closed = 0
        t.producer = None
        t.param_index = None
        t._read = None
        t._loop_read_warned = False
        t._gm_view = None
        t._bare = -1
        t._reshaped = False
        t._dyn_whole = False
        t._dtype_given = True
        t._dtype_set = True
        t.key = -1
        return t

    # annotation protocol (parameter detection, §1.2) -------------------------------------------------
    def to_tensor(self, name: str = "") -> Tensor:
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

    # indexing (`t[...]`, `t[...] = v`), operators and op methods are installed by `_methods`


_new = object.__new__
_ND = TileOpFormat.TILEOP_ND


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
