"""The poison that marks memory nobody wrote (uninitialised locals, padding outside a valid shape).

A leaf module: the device executor allocates uninitialised memory as poison and checks outputs for it, the
verifier and tests recognise its bit pattern, so it may depend on nothing else of the emulator.
"""

from __future__ import annotations

import numpy as np

from runtime.dtypes import is_float_dtype

__all__ = ["POISON_BITS", "is_float_np", "is_poison", "poison_array"]

POISON_BITS = 0x7FE50000
"""NaN payload marking padding / uninitialized memory. bfloat16 poison is its top 16 bits, written as bits
(ml_dtypes converts every float32 NaN to the canonical 0x7FC0, so bf16 poison made by a cast was never
detected); float16 keeps the top 10 mantissa bits of a NaN through numpy casts. A kernel's own cast of a poison
tile to bf16 still gives a canonical NaN (caught as a wrong value, not as poison); float8 has one NaN pattern,
so its poison cannot be told from a NaN."""
_POISON_F32 = np.array([POISON_BITS], dtype=np.uint32).view(np.float32)[0]


is_float_np = is_float_dtype
"""a floating-point numpy dtype, ml_dtypes' included (`runtime.dtypes.is_float_dtype`)"""


def poison_array(shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """Uninitialized memory: NaN with the poison payload for floats, the minimum value for integers."""
    if dt.name == "bfloat16":  # by its bits: ml_dtypes turns every float32 NaN into the canonical 0x7FC0
        return np.full(shape, POISON_BITS >> 16, dtype=np.uint16).view(dt)
    if dt == np.float32:  # no second, converted copy: a fresh array costs its page faults (sigmoid's padded tiles)
        return np.full(shape, _POISON_F32, dtype=np.float32)
    if is_float_np(dt):
        return np.full(shape, _POISON_F32, dtype=np.float32).astype(dt)
    if dt == np.bool_:
        return np.zeros(shape, dtype=dt)
    return np.full(shape, np.iinfo(dt).min, dtype=dt)


def _is_poison_wide(arr: np.ndarray) -> int:
    with np.errstate(invalid="ignore"):
        if not np.isnan(arr.max()):
            return 0
    nan = np.isnan(arr)
    if not nan.any():
        return 0
    bits = arr[nan].astype(np.float32).view(np.uint32)
    return int(np.count_nonzero((bits & 0x7FFF0000) == (POISON_BITS & 0x7FFF0000)))


_NARROW: dict[np.dtype, tuple[np.dtype, int, np.ndarray]] = {}
_TOP = 2048
"""2-byte floats: how many of the largest magnitude patterns (per sign) are converted to find the NaNs - all of
them lie there (float16: 0x7C01-0x7FFF, bfloat16: 0x7F81-0x7FFF); `_narrow_table` checks that the lowest one
converted is no NaN, and converts every pattern otherwise"""


def _poison_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(NaN, poison) of each value, by the wide check's rule on its float32 conversion."""
    f32 = values.astype(np.float32).view(np.uint32)
    mag = f32 & np.uint32(0x7FFFFFFF)
    nan = mag > np.uint32(0x7F800000)  # what np.isnan says of the float32 value, on its bits
    return nan, nan & ((f32 & np.uint32(0x7FFF0000)) == np.uint32(POISON_BITS & 0x7FFF0000))


def _narrow_table(dt: np.dtype) -> tuple[np.dtype, int, np.ndarray]:
    """For a 1- or 2-byte float dtype: its bits dtype, the smallest magnitude bit pattern that is a NaN, and
    whether each bit pattern is poison - the wide check applied once to every pattern (so both agree).

    Built once per dtype and process, on a kernel call's first poison check: converting all 65536 patterns of a
    2-byte float cost ~0.7-1.3 ms of that call (bfloat16 through ml_dtypes' loops); the NaNs are the largest
    magnitudes, so only those are converted (`_TOP`). `tests/emulator/test_buffers_narrow.py` compares it with
    the conversion of every pattern."""
    hit = _NARROW.get(dt)
    if hit is None:
        bits_dt = np.dtype(np.uint8 if dt.itemsize == 1 else np.uint16)
        n = 1 << (8 * dt.itemsize)
        sign = n >> 1
        table = np.zeros(n, dtype=np.bool_)
        nan_mags: np.ndarray | None = None
        if dt.itemsize == 2:
            mags = np.arange(sign - _TOP, sign, dtype=bits_dt)
            pats = np.concatenate([mags, mags | bits_dt.type(sign)])
            nan, poison = _poison_of(pats.view(dt))
            if not nan[0] and not nan[_TOP]:  # the lowest magnitude converted is a number: no NaN below it
                table[pats] = poison
                nan_mags = mags[nan[:_TOP] | nan[_TOP:]]
        if nan_mags is None:
            every = np.arange(n, dtype=bits_dt)
            nan, table = _poison_of(every.view(dt))
            nan_mags = every[nan] & bits_dt.type(sign - 1)
        first_nan = int(nan_mags.min()) if nan_mags.size else sign
        hit = _NARROW[dt] = (bits_dt, first_nan, table)
    return hit


def is_poison(arr: np.ndarray) -> int:
    """Number of elements carrying the poison payload.

    16- and 8-bit floats are checked on their bit patterns (a NaN test with integer ops, then a table of the
    poison patterns): numpy's ``max`` on bf16/fp8 runs ml_dtypes' scalar loops, which made this check a
    quarter of a bf16 kernel's run time."""
    if not is_float_np(arr.dtype) or arr.size == 0:
        return 0
    if arr.dtype.itemsize > 2:
        return _is_poison_wide(arr)
    bits_dt, first_nan, table = _narrow_table(arr.dtype)
    bits = arr.view(bits_dt) if arr.flags.c_contiguous else np.ascontiguousarray(arr).view(bits_dt)
    sign = 1 << (8 * arr.dtype.itemsize - 1)
    mag = bits & bits_dt.type(sign - 1)
    if not (mag >= first_nan).any():
        return 0
    return int(np.count_nonzero(table[bits[mag >= first_nan]]))
