"""The poison that marks memory nobody wrote (uninitialised locals, padding outside a valid shape).

A leaf module: the device executor allocates uninitialised memory as poison and checks outputs for it, the
verifier and tests recognise its bit pattern, so it may depend on nothing else of the emulator.
"""

from __future__ import annotations

import numpy as np

__all__ = ["POISON_BITS", "is_float_np", "is_poison", "poison_array"]

POISON_BITS = 0x7FE5A000  # NaN payload marking padding / uninitialized memory (survives bf16/fp16 casts)
_POISON_F32 = np.array([POISON_BITS], dtype=np.uint32).view(np.float32)[0]


def is_float_np(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def poison_array(shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """Uninitialized memory: NaN with the poison payload for floats, the minimum value for integers."""
    if is_float_np(dt):
        return np.full(shape, _POISON_F32, dtype=np.float32).astype(dt)
    if dt == np.bool_:
        return np.zeros(shape, dtype=dt)
    return np.full(shape, np.iinfo(dt).min, dtype=dt)


def is_poison(arr: np.ndarray) -> int:
    """Number of elements carrying the poison payload."""
    if not is_float_np(arr.dtype) or arr.size == 0:
        return 0
    with np.errstate(invalid="ignore"):
        if not np.isnan(arr.max()):
            return 0
    nan = np.isnan(arr)
    if not nan.any():
        return 0
    bits = arr[nan].astype(np.float32).view(np.uint32)
    return int(np.count_nonzero((bits & 0x7FFF0000) == (POISON_BITS & 0x7FFF0000)))
