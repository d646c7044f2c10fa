"""The 8-bit float -> float32 conversion (`_numerics._f8_to_f32`) gives ml_dtypes' bits for every pattern.

E4M3FN without NaN goes through the bit-level path, anything else through the table of ml_dtypes' own results;
both are checked on every pattern, in contiguous, transposed and strided operands, against ``astype``."""

import ml_dtypes
import numpy as np
import pytest

from runtime.emulator import _numerics
from runtime.emulator._buffers import is_poison, poison_array
from runtime.emulator._numerics import _f8_to_f32, compute

F8 = [np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2), np.dtype(ml_dtypes.float8_e8m0fnu)]


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint32).tobytes()


def _patterns(dt: np.dtype, finite: bool = False) -> np.ndarray:
    """Every bit pattern of ``dt`` (NaNs left out with ``finite``), repeated into a 2-D array above `_F8_MIN`."""
    every = np.arange(256, dtype=np.uint8)
    if finite:
        every = every[np.isfinite(every.view(dt).astype(np.float32))]
    reps = -(-_numerics._F8_MIN * 4 // every.size)
    r = np.random.default_rng(0)
    return r.permutation(np.tile(every, reps))[: every.size * reps].reshape(-1, every.size).view(dt)


@pytest.mark.parametrize("dt", F8, ids=lambda d: d.name)
@pytest.mark.parametrize("finite", [True, False])
def test_every_pattern_converts_like_ml_dtypes(dt, finite):
    a = _patterns(dt, finite)
    assert a.size >= _numerics._F8_MIN
    for v in (a, a.T, a[:, ::3], a[::2].T[5:]):
        assert _bits(compute(v)) == _bits(v.astype(np.float32)), (v.shape, v.strides)
        assert compute(v).shape == v.shape


def test_e4m3_takes_the_bit_level_path_on_finite_values(monkeypatch):
    """The path the speed comes from is the one taken (the table is only for NaN, other types and DAZ)."""
    a = _patterns(F8[0], finite=True)
    monkeypatch.setattr(_numerics.np, "take", lambda *a, **k: pytest.fail("table lookup on finite E4M3FN"))
    assert _bits(_f8_to_f32(a)) == _bits(a.astype(np.float32))


def test_poison_and_small_arrays():
    for dt in F8[:2]:  # E8M0 (a scale type) has no poison pattern of its own
        p = poison_array((64, 64), dt)
        assert is_poison(compute(p)) == is_poison(p.astype(np.float32))
    for dt in F8:
        small = np.arange(16, dtype=np.uint8).view(dt)  # below _F8_MIN: ml_dtypes' own loop
        assert _bits(compute(small)) == _bits(small.astype(np.float32))


def test_results_are_fresh_arrays_that_own_their_memory():
    for dt in F8:
        h = _patterns(dt, finite=True)
        f = compute(h)
        assert f.dtype == np.float32 and f.flags.owndata and not np.shares_memory(f, h)
