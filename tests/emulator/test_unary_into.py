"""The composite unary functions computed in one array (`device._k_math.UNARY_INTO`) give the bits of the plain
numpy expressions (`UNARY`) on every float32/float64 input - specials, subnormals, strided views - and never write
their operand; other dtypes take the plain expression."""

import numpy as np
import pytest

from runtime.emulator.device._k_math import UNARY, UNARY_INTO, _unary_fn


def _specials(dt: type) -> np.ndarray:
    info = np.finfo(dt)
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, info.max, -info.max, info.tiny, -info.tiny,
            info.smallest_subnormal, -info.smallest_subnormal, 88.7, -88.7, 89.0, -104.0, 709.0, -745.0, 1e-30]
    rng = np.random.default_rng(7)
    return np.concatenate([np.array(vals, dtype=dt), (rng.standard_normal(4096) * 30).astype(dt)])


@pytest.mark.parametrize("name", sorted(UNARY_INTO))
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_same_bits_as_the_plain_expression(name: str, dt: type) -> None:
    x = _specials(dt)
    keep = x.copy()
    with np.errstate(all="ignore"):
        want = UNARY[name](x)
        got = UNARY_INTO[name](x)
        picked = _unary_fn({"fn": name})(x)
        strided = _unary_fn({"fn": name})(x.reshape(-1, 1)[::3])
        want_strided = UNARY[name](x.reshape(-1, 1)[::3])
    bits = np.uint32 if dt is np.float32 else np.uint64
    assert got.dtype == want.dtype == picked.dtype
    assert np.array_equal(got.view(bits), want.view(bits)) and np.array_equal(picked.view(bits), want.view(bits))
    assert np.array_equal(strided.view(bits), want_strided.view(bits))
    assert x.tobytes() == keep.tobytes()  # the operand is never written


@pytest.mark.parametrize("name", sorted(UNARY_INTO))
def test_other_dtypes_take_the_plain_expression(name: str) -> None:
    x = np.arange(-4, 5, dtype=np.int32)
    with np.errstate(all="ignore"):
        got = _unary_fn({"fn": name})(x)
        want = UNARY[name](x)
    assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
