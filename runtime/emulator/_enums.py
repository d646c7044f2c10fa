"""PyPTO enums (DataType and friends) with the integer values observed in pypto 0.2.0.

DataType maps onto the project's one dtype table (`runtime.dtypes`): ``numpy_dtype(DT_BF16)`` is the
ml_dtypes bfloat16, so "bf16" means the same bytes in the emulator, the verifier and the goldens.
"""

from __future__ import annotations

import enum

import numpy as np

from runtime import dtypes as _dt

__all__ = [
    "AtomicType", "CachePolicy", "CastMode", "CompStage", "DataType", "OpType", "OutType",
    "PrecisionType", "ReLuType", "ReduceMode", "RunMode", "SaturationMode", "ScatterMode", "StatusType",
    "TileOpFormat", "TopKAlgo", "TransMode", "bytes_of", "dtype_from_numpy", "numpy_dtype",
]


class pybind11_type(enum.EnumType):  # noqa: N801 - the wheel's metaclass name (type(pypto.DataType).__name__)
    """The metaclass of the enums the wheel makes with pybind11: ``str(pypto.DataType)`` is ``<class
    'pypto.pypto_impl.DataType'>`` there, ``<enum 'DataType'>`` for a Python enum (an emulator tell, see
    `_wheel_identity`)."""

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"


pybind11_type.__module__ = "pybind11_builtins"


class _Named(enum.IntEnum):
    """An enum printed as the wheel prints its pybind11 enums: ``str(pypto.ScatterMode.ADD)`` is ``ScatterMode.ADD``
    (a Python 3.11 ``IntEnum`` prints ``1``). ``RunMode`` is an ``IntEnum`` in the wheel too, and prints ``1``."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


class DataType(enum.IntEnum, metaclass=pybind11_type):
    DT_INT4 = 0
    DT_INT8 = 1
    DT_INT16 = 2
    DT_INT32 = 3
    DT_INT64 = 4
    DT_FP8 = 5
    DT_FP16 = 6
    DT_FP32 = 7
    DT_BF16 = 8
    DT_HF4 = 9
    DT_HF8 = 10
    DT_UINT8 = 11
    DT_UINT16 = 12
    DT_UINT32 = 13
    DT_UINT64 = 14
    DT_BOOL = 15
    DT_DOUBLE = 16
    DT_FP8E5M2 = 17
    DT_FP8E4M3 = 18
    DT_FP8E8M0 = 19
    DT_FP4_E2M1X2 = 20
    DT_FP4_E1M2X2 = 21
    DT_BOTTOM = 22

    def __repr__(self) -> str:
        return f"DataType.{self.name}"

    __str__ = __repr__


_TO_NAME: dict[DataType, str] = {
    DataType.DT_INT8: "int8", DataType.DT_INT16: "int16", DataType.DT_INT32: "int32",
    DataType.DT_INT64: "int64", DataType.DT_FP16: "fp16", DataType.DT_FP32: "fp32",
    DataType.DT_BF16: "bf16", DataType.DT_UINT8: "uint8", DataType.DT_UINT16: "uint16",
    DataType.DT_UINT32: "uint32", DataType.DT_UINT64: "uint64", DataType.DT_BOOL: "bool",
    DataType.DT_DOUBLE: "fp64", DataType.DT_FP8E5M2: "fp8e5m2", DataType.DT_FP8E4M3: "fp8e4m3",
    DataType.DT_HF8: "uint8", DataType.DT_FP8: "uint8", DataType.DT_FP8E8M0: "fp8e8m0",
}
_FROM_NAME: dict[str, DataType] = {
    "int8": DataType.DT_INT8, "int16": DataType.DT_INT16, "int32": DataType.DT_INT32,
    "int64": DataType.DT_INT64, "fp16": DataType.DT_FP16, "fp32": DataType.DT_FP32,
    "bf16": DataType.DT_BF16, "uint8": DataType.DT_UINT8, "uint16": DataType.DT_UINT16,
    "uint32": DataType.DT_UINT32, "uint64": DataType.DT_UINT64, "bool": DataType.DT_BOOL,
    "fp64": DataType.DT_DOUBLE, "fp8e5m2": DataType.DT_FP8E5M2, "fp8e4m3": DataType.DT_FP8E4M3,
    "fp8e8m0": DataType.DT_FP8E8M0,
}
_BYTES = {DataType.DT_INT4: 1, DataType.DT_FP8: 1, DataType.DT_HF4: 1, DataType.DT_HF8: 1,
          DataType.DT_FP4_E2M1X2: 1, DataType.DT_FP4_E1M2X2: 1}

FLOAT_TYPES = frozenset({DataType.DT_FP16, DataType.DT_FP32, DataType.DT_BF16, DataType.DT_DOUBLE,
                         DataType.DT_FP8E5M2, DataType.DT_FP8E4M3, DataType.DT_FP8E8M0})
INT_TYPES = frozenset({DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64,
                       DataType.DT_UINT8, DataType.DT_UINT16, DataType.DT_UINT32, DataType.DT_UINT64})


_NUMPY: dict[int, tuple[np.dtype, str]] = {}
"""DataType value -> (numpy dtype, its name): tracing asks for these per op, and ``np.dtype.name`` is computed
in Python by numpy 2 (about 10 us a call)"""


def _numpy_entry(dt: DataType) -> tuple[np.dtype, str]:
    hit = _NUMPY.get(dt)
    if hit is None:
        try:
            nd = _dt.to_numpy(_TO_NAME[DataType(dt)])
        except KeyError:
            raise ValueError(f"Data type {DataType(dt).name} is not supported by the emulator") from None
        hit = _NUMPY[int(dt)] = (nd, nd.name)
    return hit


def numpy_dtype(dt: DataType) -> np.dtype:
    """Storage numpy dtype of a DataType (ml_dtypes for bf16/fp8)."""
    return _numpy_entry(dt)[0]


def numpy_dtype_name(dt: DataType) -> str:
    """``numpy_dtype(dt).name``, cached."""
    return _numpy_entry(dt)[1]


def dtype_name(dt: DataType) -> str:
    return _TO_NAME.get(DataType(dt), DataType(dt).name)


def dtype_from_numpy(dt: np.dtype) -> DataType:
    """DataType of a numpy dtype (raises ValueError for dtypes PyPTO does not take)."""
    try:
        return _FROM_NAME[_dt.name_of(np.dtype(dt))]
    except Exception:
        raise ValueError(f"Input dtype is not supported. Got {np.dtype(dt)}") from None


def bytes_of(dt: DataType) -> int:
    """Bytes per element (``pypto.bytes_of``); DT_BOTTOM raises ValueError."""
    dt = DataType(dt)
    if dt == DataType.DT_BOTTOM:
        raise ValueError("DT_BOTTOM has no size")
    if dt in _BYTES:
        return _BYTES[dt]
    return numpy_dtype(dt).itemsize


class TileOpFormat(_Named, metaclass=pybind11_type):
    TILEOP_ND = 0
    TILEOP_NZ = 1
    TILEOP_FORMAT_NUM = 2


class CastMode(_Named, metaclass=pybind11_type):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


class SaturationMode(_Named, metaclass=pybind11_type):
    ON = 0
    OFF = 1


class OpType(_Named, metaclass=pybind11_type):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


class OutType(_Named, metaclass=pybind11_type):
    BOOL = 0
    BIT = 1


class ReLuType(_Named, metaclass=pybind11_type):
    NO_RELU = 0
    RELU = 1


class TransMode(_Named, metaclass=pybind11_type):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2


class ScatterMode(_Named, metaclass=pybind11_type):
    NONE = 0
    ADD = 1
    MULTIPLY = 2


class ReduceMode(_Named, metaclass=pybind11_type):
    ATOMIC_ADD = 0


class AtomicType(_Named, metaclass=pybind11_type):
    SET = 0
    ADD = 1


class CachePolicy(_Named, metaclass=pybind11_type):
    NONE_CACHEABLE = 1  # the 0.2.0 wheel's values
    MAX_NUM = 2


class StatusType(enum.Enum):
    DYN = "DYN"
    DYNAMIC = "DYNAMIC"
    STATIC = "STATIC"


class RunMode(enum.IntEnum):
    NPU = 0
    SIM = 1


class CompStage(_Named):
    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5


class PrecisionType(_Named):
    HIGH_PRECISION = 0
    INTRINSIC = 1


class TopKAlgo(_Named):
    MERGE_SORT = 0
    RADIX_SELECT = 1
