"""The per-op fast paths of `device._k_math` give what the numpy calls they stand for give.

Why: ops run per iteration in loops that carry state (mhc_sinkhorn's 19 sinkhorn steps, attention's running max)
and numpy's Python-level helpers (``np.broadcast_shapes``, ``np.sum``'s wrapper, ``np.expand_dims``) were a fifth
of such a loop's time; the shortcuts must be exactly the same answer, NaN, integer and empty inputs included."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from runtime.emulator.device import _k_math as K


def _fits_reference(out: np.ndarray, a: object, b: object) -> bool:
    try:
        return np.broadcast_shapes(np.shape(a), np.shape(b)) == out.shape and np.result_type(a, b) == out.dtype
    except (ValueError, TypeError):
        return False


SHAPES = [(), (1,), (4,), (2, 4), (1, 4), (2, 1), (3, 2, 4)]
DTYPES = [np.float32, np.float64, np.float16, np.int32]


def test_fits_agrees_with_broadcast_and_result_type() -> None:
    for so, sa, sb in itertools.product(SHAPES, repeat=3):
        for do, da, db in itertools.product(DTYPES, repeat=3):
            out = np.empty(so, do)
            a, b = np.ones(sa, da), np.ones(sb, db)
            assert K._fits(out, a, b) == _fits_reference(out, a, b), (so, sa, sb, do, da, db)
    out = np.empty((2, 4), np.float32)
    assert K._fits(out, np.ones((2, 4), np.float32), 2.0) == _fits_reference(out, np.ones((2, 4), np.float32), 2.0)


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.int32, np.uint16, np.float64])
def test_reductions_are_numpys(dt: type) -> None:
    rng = np.random.default_rng(7)
    for shape in [(3, 5), (1, 7), (4, 1, 6)]:
        x = (rng.standard_normal(shape) * 50).astype(dt)
        if np.dtype(dt).kind == "f":
            x.flat[1] = np.nan
        for ax in range(len(shape)):
            s = K.REDUCE["sum"](x, ax)
            ref = np.sum(x, axis=ax, dtype=x.dtype if x.dtype.kind in "iu" else np.float32)
            assert s.dtype == ref.dtype and np.array_equal(s, ref, equal_nan=True)
            for name, f in (("amax", np.max), ("amin", np.min)):
                got, want = K.REDUCE[name](x, ax), f(x, axis=ax)
                assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


def test_empty_reduction_raises_as_numpy() -> None:
    x = np.empty((0, 3), np.float32)
    for name, f in (("amax", np.max), ("amin", np.min)):
        with pytest.raises(ValueError) as got:
            K.REDUCE[name](x, 0)
        with pytest.raises(ValueError) as want:
            f(x, axis=0)
        assert str(got.value) == str(want.value)
    assert np.array_equal(K.REDUCE["sum"](x, 0), np.sum(x, axis=0, dtype=np.float32))


def test_valid_shape_without_broadcast_is_valid_of() -> None:
    rs = (4, 8)
    for va, vb in itertools.product([(4, 8), (3, 8), (4, 5), (1, 1)], repeat=2):
        a, b = np.empty(rs), np.empty(rs)
        assert tuple(map(min, rs, va, vb)) == K.valid_of(rs, [(a, va), (b, vb)])
