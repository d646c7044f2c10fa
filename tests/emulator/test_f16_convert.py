"""The bit-level float16 <-> float32 conversions (`_numerics._f16_to_f32` / `_f32_to_f16`) give numpy's bits.

Every float16 pattern is checked; float32 -> float16 on every pattern around each float16 rounding boundary,
the subnormal range and a random sample of all patterns (an exhaustive run over the 2^32 patterns was made
once when they were written: identical). Infinities and NaNs go through numpy's own loop."""

import numpy as np
import pytest

from runtime.emulator import _numerics
from runtime.emulator._buffers import POISON_BITS, is_poison, poison_array
from runtime.emulator._enums import CastMode, DataType
from runtime.emulator._numerics import _f16_to_f32, _f32_to_f16, cast_array, compute, narrow_float


def _f32_bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint32).tobytes()


def _f16_bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint16).tobytes()


def test_every_finite_float16_converts_like_numpy():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    finite = bits[(bits & 0x7C00) != 0x7C00].view(np.float16)
    assert _f32_bits(_f16_to_f32(finite)) == _f32_bits(finite.astype(np.float32))
    every = bits.view(np.float16)  # with infinities and NaNs: numpy's loop, same bits
    assert _f32_bits(_f16_to_f32(every)) == _f32_bits(every.astype(np.float32))


def _near_boundaries() -> np.ndarray:
    """float32 patterns within a few ulps of every float16 value and of every midpoint between two of them."""
    h = np.arange(1 << 15, dtype=np.uint32).astype(np.uint16).view(np.float16)
    h = h[np.isfinite(h)].astype(np.float32)
    mids = (h[:-1].astype(np.float64) + h[1:].astype(np.float64)) / 2
    centers = np.concatenate([h, mids.astype(np.float32), np.float32([65504, 65519.99, 65520, 65535.99])])
    c = centers.view(np.uint32).astype(np.int64)
    near = (c[:, None] + np.arange(-3, 4)[None, :]).ravel()
    near = near[(near >= 0) & (near < (143 << 23))].astype(np.uint32)
    return np.concatenate([near, near | np.uint32(0x80000000)]).view(np.float32)


def test_float32_to_float16_rounds_like_numpy_at_every_boundary():
    x = _near_boundaries()
    assert x.size > 400_000
    with np.errstate(over="ignore"):  # 65520 and above round to infinity
        assert _f16_bits(_f32_to_f16(x)) == _f16_bits(x.astype(np.float16))


def test_float32_to_float16_on_random_patterns_and_specials():
    r = np.random.default_rng(0)
    x = r.integers(0, 1 << 32, size=1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    small = x[np.abs(x) < 65536]  # the fast path takes arrays without |x| >= 65536, inf or NaN
    with np.errstate(all="ignore"):
        assert _f16_bits(_f32_to_f16(small)) == _f16_bits(small.astype(np.float16))
        assert _f16_bits(_f32_to_f16(x)) == _f16_bits(x.astype(np.float16))  # numpy's loop: inf, NaN
    poison = poison_array((4, 8), np.dtype(np.float32))
    assert is_poison(_f32_to_f16(poison)) == 32


@pytest.mark.parametrize("shape", [(64, 512), (512, 64)])
def test_strided_operands_and_the_callers(shape):
    r = np.random.default_rng(1)
    x = (r.standard_normal(shape) * 100).astype(np.float32)
    xt = x.T  # F-ordered view
    assert _f16_bits(_f32_to_f16(xt)) == _f16_bits(xt.astype(np.float16))
    h = x.astype(np.float16)
    assert _f32_bits(compute(h[:, ::2])) == _f32_bits(h[:, ::2].astype(np.float32))
    assert _f32_bits(compute(h.T)) == _f32_bits(h.T.astype(np.float32))
    for mode in (CastMode.CAST_RINT, CastMode.CAST_TRUNC, CastMode.CAST_FLOOR, CastMode.CAST_CEIL,
                 CastMode.CAST_ODD):
        got = cast_array(x, DataType.DT_FP32, DataType.DT_FP16, mode)
        with np.errstate(all="ignore"):
            old = _numerics._FAST_MIN
            try:
                _numerics._FAST_MIN = 1 << 62  # numpy's own loops
                want = cast_array(x, DataType.DT_FP32, DataType.DT_FP16, mode)
            finally:
                _numerics._FAST_MIN = old
        assert _f16_bits(got) == _f16_bits(want), mode
    assert narrow_float(x, np.dtype(np.float16), CastMode.CAST_RINT).dtype == np.float16


def test_float16_poison_keeps_its_payload():
    p = poison_array((128, 256), np.dtype(np.float16))
    f = compute(p)
    assert f.dtype == np.float32 and is_poison(f) == p.size
    assert ((f.view(np.uint32) & 0x7FFF0000) == (POISON_BITS & 0x7FFF0000)).all()


def test_results_are_fresh_arrays():
    h = np.ones((128, 256), np.float16)
    f = compute(h)
    assert not np.shares_memory(f, h)
    # own their memory: a dead operand's array may take a later op's result (`_k_math.scratch` asks owndata)
    assert f.flags.owndata and _f32_to_f16(f).flags.owndata
    f[...] = 0
    assert (h == 1).all()


def test_denormals_are_kept_here():
    """The float16 -> float32 path scales denormal float32 values: it checks the FPU keeps them."""
    assert _numerics._denormals_kept()
