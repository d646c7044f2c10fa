"""Numeric conversions with the device's rounding rules.

16-bit floats are computed in float32 and rounded once per op to the output dtype (round-to-nearest-even,
ml_dtypes for bf16), which is what the vector unit does - except BF16 on A2/A3, where the compiler keeps the chain
in float32 and rounds where it is written out (`device._promote`, `to_bf16`). Casts follow `CastMode` / `SaturationMode`
(spec §5.5): float->int defaults to TRUNC, everything else to RINT; saturation ON clamps, OFF wraps.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from runtime.emulator._buffers import POISON_BITS
from runtime.emulator._enums import FLOAT_TYPES, CastMode, DataType, SaturationMode, numpy_dtype

__all__ = ["cast_array", "compute", "narrow_float", "to_bf16"]

_F32 = np.dtype(np.float32)
_LOW = {np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn),
        np.dtype(ml_dtypes.float8_e5m2), np.dtype(ml_dtypes.float8_e8m0fnu)}


_F16 = np.dtype(np.float16)
_FAST_MIN = 1 << 14
"""float16 arrays from this many elements convert through `_f16_to_f32` / `_f32_to_f16` (below it numpy's
own loop costs less than the dozen calls of the bit-level form)"""
_2P112 = np.float32(2.0 ** 112)
_DENORMAL_PROBE = np.array([2.0 ** -140], dtype=np.float32)


def _denormals_kept() -> bool:
    """Whether float32 arithmetic keeps denormal operands (no DAZ/FTZ in this thread's MXCSR): `_f16_to_f32`
    scales denormal float32 values. Checked on every conversion - a library may switch the mode at any time."""
    return bool(np.multiply(_DENORMAL_PROBE, _2P112)[0] == np.float32(2.0 ** -28))


def _by_bits(signed: np.ndarray, shift: int, keep: np.uint32, scale: np.float32) -> np.ndarray:
    """float32 from a narrower float's bits read as a signed int (`_f16_to_f32`, `_f8_to_f32`): sign-extended to
    int32, shifted left so exponent and mantissa end at the top of the float32 mantissa, the sign's copies cleared
    (``keep``), then one exact multiply by the power of two of the exponent-bias difference (``scale``). One new
    array, the result, which owns its memory: a later op may write its result over it (`scratch`)."""
    f = np.empty(signed.shape, _F32)
    o = f.view(np.int32)
    np.copyto(o, signed)
    np.left_shift(o, shift, out=o)
    u = f.view(np.uint32)
    np.bitwise_and(u, keep, out=u)
    np.multiply(f, scale, out=f)
    return f


def _f16_to_f32(arr: np.ndarray) -> np.ndarray:
    """float16 -> float32, bit-identical to ``arr.astype(np.float32)``, 2-3x faster on large arrays.

    Why: numpy converts float16 one element at a time (~1.8 ns per element on this VM, 30x a float32 multiply):
    the two 512K-element float16 inputs of sum_lstm cost 1 ms each. How: the float16 bits sign-extended to
    int32 and shifted left by 13 hold the sign in bit 31 (bits 28-30, copies of it, are cleared) and the
    exponent and mantissa at the float32 mantissa position: as a float32 that is the value times 2^-112 - for
    subnormal float16 too (a denormal float32) - so one exact multiply by 2^112 gives the value. One new array
    only, the result: on this VM the first touch of fresh memory costs about what the arithmetic does.
    Infinities and NaNs (exponent all ones: |result| >= 65536) are left to numpy (its NaN payload rule)."""
    f = _by_bits(arr.view(np.int16), 13, np.uint32(0x8FFFFFFF), _2P112)
    if (f.max(initial=np.float32(0)) >= 65536.0 or f.min(initial=np.float32(0)) <= -65536.0
            or not _denormals_kept()):  # inf/NaN input, or DAZ set
        return arr.astype(_F32)
    return f


_HALF_BIAS = np.uint32((((15 - 127) << 23) + 0xFFF) & 0xFFFFFFFF)
_SUB_MAGIC = np.uint32(126 << 23)
_SMALL = np.uint32(113 << 23)
"""float32 bits of 2^-14, the smallest normal float16: below it the result is a float16 subnormal (or zero)"""


def _f32_to_f16(x: np.ndarray) -> np.ndarray:
    """float32 -> float16 rounding to nearest even, bit-identical to ``x.astype(np.float16)`` (~1.5x faster).

    Normal results: the float32 magnitude bits plus 0xFFF plus the lowest kept mantissa bit, shifted right by
    13, are the rounded float16 bits once the exponent is rebiased (one uint32 add). Results below the float16
    normal range: adding 0.5 in float32 rounds the value to a multiple of 2^-24 (the float16 subnormal step) by
    the FPU's own round-to-nearest-even; its low mantissa bits are the float16 bits. Then the sign bit.
    |x| >= 65536, infinities and NaNs are left to numpy. Two new arrays: the magnitude bits and the result."""
    f = x.view(np.uint32)
    a = np.bitwise_and(f, np.uint32(0x7FFFFFFF))
    if a.max(initial=np.uint32(0)) >= (143 << 23):
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(_F16)
    small = sub = None
    if a.min(initial=np.uint32(0xFFFFFFFF)) < _SMALL:
        small = np.flatnonzero(a < _SMALL)
        sub = ((a.ravel()[small].view(np.float32) + np.float32(0.5)).view(np.uint32) - _SUB_MAGIC).astype(np.uint16)
    res = np.empty(x.shape, _F16)  # owns its memory, like numpy's result
    out = res.view(np.uint16)
    np.right_shift(a, 13, out=out, casting="unsafe")
    np.bitwise_and(out, np.uint16(1), out=out)
    np.add(a, out, out=a)
    a += _HALF_BIAS
    np.right_shift(a, 13, out=a)
    np.copyto(out, a, casting="unsafe")
    if small is not None:
        out.ravel()[small] = sub
    np.right_shift(f, 16, out=a)
    np.bitwise_and(a, np.uint32(0x8000), out=a)
    np.bitwise_or(out, a, out=out, casting="unsafe")
    return res


_E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)
_F8_TABLES = {dt: np.arange(256, dtype=np.uint8).view(dt).astype(_F32)
              for dt in _LOW if dt.itemsize == 1}
"""float32 of each of the 256 bit patterns of every 8-bit float type, made by ml_dtypes itself: a lookup in it is
ml_dtypes' conversion, NaN payloads included"""
_F8_MIN = 1024
"""8-bit float arrays from this many elements convert through `_f8_to_f32` (ml_dtypes converts one element at a
time through a generic loop, ~10 ns per element here)"""
_2P120 = np.float32(2.0 ** 120)
_E4M3_MAX = np.float32(448.0)


def _f8_to_f32(arr: np.ndarray) -> np.ndarray:
    """8-bit float -> float32, bit-identical to ``arr.astype(np.float32)`` (ml_dtypes), 4-7x faster.

    Why: ml_dtypes converts float8 at ~10 ns per element; quant_batch_matmul's FP8 matmul converts a 512 x 7168
    operand block on every one of its ~1000 iterations a call, 90% of that operator's time. How, for E4M3FN (the
    gym's FP8): the int8 bits sign-extended to int32 and shifted left by 20 hold the sign in bit 31 (bits 27-30,
    copies of it, are cleared) and exponent and mantissa at the float32 mantissa's top - as a float32 that is the
    value times 2^-120 (subnormals as float32 denormals), so one exact multiply by 2^120 gives the value, as in
    `_f16_to_f32`. E4M3FN has no infinity; its NaN (S.1111.111) would come out as +-480, above the largest finite
    value 448: then, as for the other 8-bit types, the 256-entry table of ml_dtypes' own results is looked up."""
    table = _F8_TABLES[arr.dtype]
    if arr.dtype == _E4M3:
        f = _by_bits(arr.view(np.int8), 20, np.uint32(0x87FFFFFF), _2P120)
        if f.max(initial=np.float32(0)) <= _E4M3_MAX and f.min(initial=np.float32(0)) >= -_E4M3_MAX \
                and _denormals_kept():
            return f
    return np.take(table, arr.view(np.uint8))


def compute(arr: np.ndarray) -> np.ndarray:
    """Operand in its compute precision (float32 for 16/8-bit floats, unchanged otherwise)."""
    if arr.dtype in _LOW:
        if arr.dtype == _F16 and arr.size >= _FAST_MIN:
            return _f16_to_f32(arr)
        if arr.dtype.itemsize == 1 and arr.size >= _F8_MIN:
            return _f8_to_f32(arr)
        return arr.astype(_F32)
    return arr


_BF16 = np.dtype(ml_dtypes.bfloat16)


def to_bf16(arr: np.ndarray) -> np.ndarray:
    """A BF16 value held in FP32 (the A2/A3 compiler's promotion, `device._promote`) rounded to BF16 (RNE) where
    the device writes it out; any other array unchanged. Poison (`_buffers`) stays poison: ml_dtypes turns every
    FP32 NaN into the canonical BF16 NaN, which would hide padding that reached an output."""
    if arr.dtype != _F32:
        return arr
    r = arr.astype(_BF16)
    bits = r.view(np.uint16)
    nan = (bits & 0x7FFF) > 0x7F80
    if nan.any():
        hi = (np.ascontiguousarray(arr).view(np.uint32) >> 16).astype(np.uint16)
        poison = nan & ((hi & 0x7FFF) == ((POISON_BITS >> 16) & 0x7FFF))
        if poison.any():
            bits[poison] = hi[poison]
    return r


def _bits_dtype(dt: np.dtype) -> np.dtype:
    return {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}[
        dt.itemsize]


def _step(y: np.ndarray, mask: np.ndarray, up: bool) -> np.ndarray:
    """Move the masked elements of float array y one ulp toward +inf (up) or -inf."""
    if not mask.any():
        return y
    y = y.copy()
    bits = y.view(_bits_dtype(y.dtype))
    signbit = np.array(1, dtype=bits.dtype) << (8 * y.dtype.itemsize - 1)
    neg = (bits & signbit) != 0
    zero = (bits & ~signbit) == 0
    inc = np.where(up, ~neg, neg)  # magnitude grows when moving away from zero
    b = bits.copy()
    b = np.where(mask & inc & ~zero, b + 1, b)
    b = np.where(mask & ~inc & ~zero, b - 1, b)
    tiny = np.array(1, dtype=bits.dtype) | (np.array(0, dtype=bits.dtype) if up else signbit)
    b = np.where(mask & zero, tiny, b)
    return b.view(y.dtype)


def narrow_float(x: np.ndarray, dt: np.dtype, mode: CastMode) -> np.ndarray:
    """float32/64 -> narrower float with a rounding mode (RINT default)."""
    if dt == _F16 and x.dtype == _F32 and x.size >= _FAST_MIN:
        y = _f32_to_f16(x)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            y = x.astype(dt)
    if mode in (CastMode.CAST_NONE, CastMode.CAST_RINT, CastMode.CAST_ROUND):
        return y
    yf = y.astype(x.dtype)
    fin = np.isfinite(x) & np.isfinite(yf)
    if mode == CastMode.CAST_FLOOR:
        return _step(y, fin & (yf > x), up=False)
    if mode == CastMode.CAST_CEIL:
        return _step(y, fin & (yf < x), up=True)
    if mode == CastMode.CAST_TRUNC:
        y = _step(y, fin & (yf > x) & (x > 0), up=False)
        return _step(y, fin & (yf < x) & (x < 0), up=True)
    if mode == CastMode.CAST_ODD:
        t = narrow_float(x, dt, CastMode.CAST_TRUNC)
        inexact = fin & (t.astype(x.dtype) != x)
        bits = t.view(_bits_dtype(t.dtype)).copy()
        bits[inexact] |= 1
        return bits.view(dt)
    return y


def _round_int(x: np.ndarray, mode: CastMode) -> np.ndarray:
    if mode in (CastMode.CAST_NONE, CastMode.CAST_TRUNC, CastMode.CAST_ODD):
        return np.trunc(x)
    if mode == CastMode.CAST_RINT:
        return np.rint(x)
    if mode == CastMode.CAST_ROUND:
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    if mode == CastMode.CAST_FLOOR:
        return np.floor(x)
    return np.ceil(x)


def cast_array(arr: np.ndarray, src: DataType, dst: DataType, mode: CastMode = CastMode.CAST_NONE,
               satmode: SaturationMode = SaturationMode.OFF) -> np.ndarray:
    """Cast with the device's rounding and saturation rules."""
    out = numpy_dtype(dst)
    if src == dst:
        if src in FLOAT_TYPES and mode != CastMode.CAST_NONE:
            # same-type float cast with a mode = rounding to integral values (FP32 -> FP32 "rounding")
            mode_eff = CastMode.CAST_RINT if mode == CastMode.CAST_ODD else CastMode(mode)
            return _round_int(compute(arr), mode_eff).astype(out)
        return arr.copy()
    if src in FLOAT_TYPES and dst in FLOAT_TYPES:
        x = arr.astype(np.float64) if src == DataType.DT_DOUBLE else compute(arr)
        if out.itemsize >= x.dtype.itemsize:
            # a widening cast (fp16/bf16 -> fp32): `compute` already made the float32 copy, which is the result;
            # a second copy was one more fresh multi-MB array per cast (sum_lstm: 2 of its 13 ms were the page
            # faults of these copies). The input itself is never returned: results are new arrays.
            return x.astype(out, copy=x is arr)
        return narrow_float(x, out, CastMode(mode))
    if src in FLOAT_TYPES:  # float -> int
        x = compute(arr).astype(np.float64)
        r = _round_int(x, CastMode(mode))
        info = np.iinfo(out) if out != np.bool_ else None
        r = np.where(np.isnan(r), 0, r)
        if info is None:
            return r != 0
        if satmode == SaturationMode.ON:
            return np.clip(r, info.min, info.max).astype(out)
        r = np.clip(r, -(2.0**63), 2.0**63 - 1)
        return r.astype(np.int64).astype(out)  # wrap (implementation-defined on the device)
    if dst in FLOAT_TYPES:  # int -> float
        return arr.astype(np.float64).astype(out) if out.itemsize < 4 else arr.astype(out)
    # int -> int
    if satmode == SaturationMode.ON and out != np.bool_:
        info = np.iinfo(out)
        return np.clip(arr.astype(np.int64), info.min, info.max).astype(out)
    return arr.astype(out)
