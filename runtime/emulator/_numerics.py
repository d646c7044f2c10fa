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


def compute(arr: np.ndarray) -> np.ndarray:
    """Operand in its compute precision (float32 for 16/8-bit floats, unchanged otherwise)."""
    if arr.dtype in _LOW:
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
