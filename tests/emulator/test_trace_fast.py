"""The per-op shortcuts of the trace (session 8, #31) build exactly what the slower general code built.

- `Tensor.of_op` (every op output) sets the same fields as ``Tensor(shape, dtype, "")`` made while the tracer binds
  an op output;
- `_ops_core._elem_bytes` is `bytes_of` (and still raises for DT_BOTTOM);
- `_ops_math._scalar_operand` gives the constant the old ``np.array(x, src).astype(dst)`` gave, bit for bit and
  in the same dtype, for every dtype a scalar can meet.
"""

import math

import numpy as np
import pytest

from runtime.emulator import _ops_core, _ops_math
from runtime.emulator._enums import FLOAT_TYPES, INT_TYPES, DataType, bytes_of, numpy_dtype
from runtime.emulator._errors import EmulatorError
from runtime.emulator._session import Session
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import Tracer

_FIELDS = [f for f in Tensor.__slots__ if f != "__weakref__"]


@pytest.mark.parametrize("shape", [[4, 8], [1], [], [SymbolicScalar("n"), 16]])
@pytest.mark.parametrize("dtype", [DataType.DT_FP32, DataType.DT_BF16, DataType.DT_INT32])
def test_of_op_sets_every_field_the_constructor_sets(shape: list, dtype: DataType) -> None:
    tr = Tracer(Session(), "k", None)
    with tr:
        tr._binding = True
        try:
            ref = Tensor(shape, dtype, "")
        finally:
            tr._binding = False
        fast = Tensor.of_op(shape, dtype)
    for f in _FIELDS:
        assert getattr(fast, f) == getattr(ref, f), f
        assert type(getattr(fast, f)) is type(getattr(ref, f)), f
    assert fast._shape is not shape  # a copy, as the constructor makes
    assert tr.tensors == []  # neither registered a local tensor


def test_new_out_stamps_a_fast_tensor() -> None:
    tr = Tracer(Session(), "k", None)
    with tr:
        t = _ops_core.new_out(tr, [2, 3], DataType.DT_FP16, "add", valid=[1, 3])
    assert (t.key, t.kind, t.producer, t.valid_shape, t.shape, t.dtype) == (0, "op", "add", [1, 3], [2, 3],
                                                                             DataType.DT_FP16)
    assert tr.tensors == [t]


def test_elem_bytes_is_bytes_of() -> None:
    for dt in DataType:
        try:
            want = bytes_of(dt)
        except ValueError:
            with pytest.raises(ValueError):
                _ops_core._elem_bytes(dt)
            continue
        assert _ops_core._elem_bytes(dt) == want
        assert _ops_core._elem_bytes(dt) == want  # cached


def _old_scalar(x: float | int, dt: DataType) -> np.ndarray:
    nd = numpy_dtype(dt)
    return np.array(x, dtype=np.float64 if dt == DataType.DT_DOUBLE else nd).astype(
        np.float32 if dt in FLOAT_TYPES and dt != DataType.DT_DOUBLE else nd)


def _dtypes() -> list[DataType]:
    out = []
    for dt in DataType:
        try:
            numpy_dtype(dt)
        except ValueError:
            continue
        out.append(dt)
    return out


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # 1e30 -> inf in FP16, as before
@pytest.mark.parametrize("dt", _dtypes())
def test_scalar_operand_is_the_old_constant(dt: DataType) -> None:
    tr = Tracer(Session(), "k", None)
    values: list = [0, 1, -3, 7, 0.0, -0.0, 1.5, 1e-6, 3.0, -2.25, 65504.0, 1e30, math.pi, True]
    with tr:
        for x in values:
            if dt in INT_TYPES and isinstance(x, float):
                continue  # a whole float becomes a Python int before the constant is made (unchanged)
            try:
                want = _old_scalar(int(x) if isinstance(x, bool) else x, dt)
            except (OverflowError, ValueError, TypeError):
                want = None
            try:
                got = _ops_math._scalar_operand(tr, "add", x, dt)
            except (OverflowError, ValueError, TypeError, EmulatorError):
                got = None
            if want is None or got is None:
                continue  # both refuse the value (integer dtypes and fractions), checked elsewhere
            assert got.dtype == want.dtype, (dt, x)
            assert got.shape == want.shape == ()
            assert got.tobytes() == want.tobytes(), (dt, x)
