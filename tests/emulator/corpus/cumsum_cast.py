"""Scans and casts: cumsum on both axes and on INT32; every CastMode for float -> int (the default is TRUNC),
saturation, float narrowing (RINT, overflow to inf, round-to-odd) and widening (spec §5.5, §5.6)."""

import numpy as np
import pypto
from _emucorpus import BF16, EXACT, F16, F32, I32, KernelCase, Tol, rng, sentinel, single, uniform


@pypto.frontend.jit
def cumsum_axes(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    along_cols: pypto.Tensor([8, 64], pypto.DT_FP32),
    along_rows: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    along_cols[:] = pypto.cumsum(x, 1)
    along_rows[:] = pypto.cumsum(x, 0)


def case_cumsum_both_axes() -> KernelCase:
    x = uniform(rng(100), (8, 64))
    x64 = x.astype(np.float64)
    return single(cumsum_axes, (x, sentinel(x.shape), sentinel(x.shape)),
                  {1: np.cumsum(x64, 1).astype(F32), 2: np.cumsum(x64, 0).astype(F32)}, Tol(1e-5, 1e-5),
                  spec="§5.6 cumsum")


@pypto.frontend.jit
def cumsum_int32(
    x: pypto.Tensor([4, 64], pypto.DT_INT32),
    out: pypto.Tensor([4, 64], pypto.DT_INT32),
):
    pypto.set_vec_tile_shapes(4, 64)
    out[:] = pypto.cumsum(x, -1)


def case_cumsum_int32() -> KernelCase:
    x = rng(101).integers(-1000, 1000, size=(4, 64)).astype(I32)
    return single(cumsum_int32, (x, np.zeros_like(x)), {1: np.cumsum(x, -1).astype(I32)}, EXACT,
                  spec="§5.6 cumsum INT32")


@pypto.frontend.jit
def cast_to_int32_mode(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    out: pypto.Tensor([8, 64], pypto.DT_INT32),
    mode,
):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.cast(x, pypto.DT_INT32, mode)


@pypto.frontend.jit
def cast_to_int32_default(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    out: pypto.Tensor([8, 64], pypto.DT_INT32),
):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.cast(x, pypto.DT_INT32)


def _cast_inputs(seed: int) -> np.ndarray:
    """Exact ties (k + 0.5, both signs), values near ties, and ordinary values."""
    r = rng(seed)
    ties = (r.integers(-50, 50, size=(8, 32)) + 0.5).astype(F32)
    other = r.uniform(-1000, 1000, size=(8, 32)).astype(F32)
    return np.concatenate([ties, other], 1)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


_MODE_REFS = {
    "CAST_NONE": np.trunc,  # float -> int default is TRUNC (§5.5)
    "CAST_RINT": np.rint,
    "CAST_ROUND": _round_half_away,
    "CAST_FLOOR": np.floor,
    "CAST_CEIL": np.ceil,
    "CAST_TRUNC": np.trunc,
}


def _mode_case(mode_name: str, seed: int) -> KernelCase:
    x = _cast_inputs(seed)
    ref = _MODE_REFS[mode_name](x.astype(np.float64)).astype(I32)
    mode = getattr(pypto.CastMode, mode_name)
    return single(cast_to_int32_mode, (x, np.zeros(x.shape, I32)), {1: ref}, EXACT, kwargs={"mode": mode},
                  spec=f"§5.5 CastMode.{mode_name}")


def case_cast_mode_none_truncates() -> KernelCase:
    return _mode_case("CAST_NONE", 102)


def case_cast_mode_rint_half_even() -> KernelCase:
    return _mode_case("CAST_RINT", 103)


def case_cast_mode_round_half_away() -> KernelCase:
    return _mode_case("CAST_ROUND", 104)


def case_cast_mode_floor() -> KernelCase:
    return _mode_case("CAST_FLOOR", 105)


def case_cast_mode_ceil() -> KernelCase:
    return _mode_case("CAST_CEIL", 106)


def case_cast_mode_trunc() -> KernelCase:
    return _mode_case("CAST_TRUNC", 107)


def case_cast_default_mode_is_trunc() -> KernelCase:
    x = _cast_inputs(108)
    return single(cast_to_int32_default, (x, np.zeros(x.shape, I32)), {1: np.trunc(x).astype(I32)}, EXACT,
                  spec="§5.5 default float->int = TRUNC")


@pypto.frontend.jit
def cast_saturate_int16(
    x: pypto.Tensor([4, 64], pypto.DT_FP32),
    out: pypto.Tensor([4, 64], pypto.DT_INT16),
):
    pypto.set_vec_tile_shapes(4, 64)
    out[:] = pypto.cast(x, pypto.DT_INT16, pypto.CastMode.CAST_RINT, satmode=pypto.SaturationMode.ON)


def case_cast_saturation_on_clamps() -> KernelCase:
    x = rng(109).uniform(-70000, 70000, size=(4, 64)).astype(F32)
    ref = np.clip(np.rint(x.astype(np.float64)), -32768, 32767).astype(np.int16)
    return single(cast_saturate_int16, (x, np.zeros(x.shape, np.int16)), {1: ref}, EXACT,
                  spec="§5.5 SaturationMode.ON")


@pypto.frontend.jit
def cast_float_formats(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    i: pypto.Tensor([8, 64], pypto.DT_INT32),
    to_bf16: pypto.Tensor([8, 64], pypto.DT_BF16),
    to_fp16: pypto.Tensor([8, 64], pypto.DT_FP16),
    back_fp32: pypto.Tensor([8, 64], pypto.DT_FP32),
    from_int: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    b = pypto.cast(x, pypto.DT_BF16)
    h = pypto.cast(x, pypto.DT_FP16)
    back_fp32[:] = pypto.cast(b, pypto.DT_FP32) + pypto.cast(h, pypto.DT_FP32)
    to_bf16[:] = b
    to_fp16[:] = h
    from_int[:] = pypto.cast(i, pypto.DT_FP32)


def case_cast_float_narrowing_widening_overflow() -> KernelCase:
    """RINT narrowing to bf16/fp16; |x| > 65504 becomes +-inf in fp16 (§5.5 oracle note); exact widening."""
    r = rng(110)
    x = r.uniform(-3, 3, size=(8, 64)).astype(F32)
    x[0, :4] = [1e5, -1e5, 70000.0, -65520.0]
    i = r.integers(-(2 ** 24), 2 ** 24, size=(8, 64)).astype(I32)
    with np.errstate(over="ignore"):  # the overflow to +-inf is the point
        bf, hf = x.astype(BF16), x.astype(F16)
    back = bf.astype(F32) + hf.astype(F32)
    outs = (sentinel(x.shape, BF16), sentinel(x.shape, F16), sentinel(x.shape), sentinel(x.shape))
    return single(cast_float_formats, (x, i, *outs), {2: bf, 3: hf, 4: back, 5: i.astype(F32)}, EXACT,
                  spec="§5.5 float casts")


@pypto.frontend.jit
def cast_round_to_odd(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    out: pypto.Tensor([8, 64], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.cast(x, pypto.DT_FP16, pypto.CastMode.CAST_ODD)


def _round_to_odd_fp16(x: np.ndarray) -> np.ndarray:
    """Truncate toward zero to fp16, then set the last mantissa bit when the result is inexact."""
    x64 = x.astype(np.float64)
    r = x.astype(F16)
    over = np.abs(r.astype(np.float64)) > np.abs(x64)
    r = np.where(over, np.nextafter(r, np.zeros_like(r)), r).astype(F16)
    inexact = r.astype(np.float64) != x64
    bits = r.view(np.uint16) | np.where(inexact, np.uint16(1), np.uint16(0))
    return bits.astype(np.uint16).view(F16)


def case_cast_round_to_odd_fp32_to_fp16() -> KernelCase:
    x = rng(111).uniform(-8, 8, size=(8, 64)).astype(F32)
    return single(cast_round_to_odd, (x, sentinel(x.shape, F16)), {1: _round_to_odd_fp16(x)}, EXACT,
                  spec="§5.5 CAST_ODD")
