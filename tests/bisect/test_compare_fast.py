"""``_compare._ok``'s shortcuts give the definition's answer (``_ok_reference``) bit for bit: equal blocks, values at
the tolerance's edge, NaN, infinities, signed zeros, mixed dtypes, zero tolerances."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from runtime.bisect import _compare
from runtime.bisect._compare import _ok, _ok_reference, close

N = 3 * _compare._FAST_MIN  # above the size the shortcuts start at


def _pairs(rng: np.random.Generator, dt: np.dtype) -> list[tuple[np.ndarray, np.ndarray]]:
    base = (rng.standard_normal(N) * 10).astype(dt)
    out = [(base.copy(), base.copy())]  # equal
    for scale in (1e-7, 1e-5, 1e-4, 1e-3, 1.0):  # around the tolerances below
        out.append(((base.astype(np.float64) + rng.standard_normal(N) * scale).astype(dt), base.copy()))
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=np.float64)
    for sp in specials:
        for where in ("a", "b", "both"):
            a, b = base.copy(), base.copy()
            i = int(rng.integers(N))
            if where in ("a", "both"):
                a[i] = sp
            if where in ("b", "both"):
                b[i] = sp
            out.append((a, b))
    # exactly at the edge: |a - b| == atol + rtol * |b| in float64 for one element
    a, b = base.copy(), base.copy()
    a[7] = np.asarray(np.float64(b[7]) + 1e-4 + 1e-4 * abs(np.float64(b[7]))).astype(dt)
    out.append((a, b))
    return out


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("tol", [(1e-4, 1e-4), (0.0, 0.0), (1e-3, 0.0), (0.0, 1e-2)])
def test_fast_ok_is_the_definition(dt: type, tol: tuple[float, float]) -> None:
    rng = np.random.default_rng(7)
    atol, rtol = tol
    for a, b in _pairs(rng, np.dtype(dt)):
        assert _ok(a, b, atol, rtol) == _ok_reference(a, b, atol, rtol)
        assert _ok(b, a, atol, rtol) == _ok_reference(b, a, atol, rtol)


def test_mixed_and_other_dtypes_are_the_definition() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(N)
    for a, b in [(x.astype(np.float32), x.astype(np.float64)), (x.astype(np.float16), x.astype(np.float32)),
                 (x.astype(ml_dtypes.bfloat16), x.astype(np.float32)),
                 (x.astype(ml_dtypes.bfloat16), x.astype(ml_dtypes.bfloat16)),
                 ((x * 1000).astype(np.int32), (x * 1000).astype(np.int64)),
                 (np.full(N, 2**62, np.int64), np.full(N, 2**62 + 1, np.int64))]:
        for atol, rtol in [(1e-4, 1e-4), (0.0, 0.0), (2.0, 0.0)]:
            assert _ok(a, b, atol, rtol) == _ok_reference(a, b, atol, rtol), (a.dtype, b.dtype, atol, rtol)


def test_equal_blocks_with_an_infinity_are_not_close() -> None:
    a = np.ones(N, np.float32)
    a[5] = np.inf
    assert not _ok(a, a.copy(), 1e-4, 1e-4)  # inf - inf is NaN (the definition says so too)
    assert _ok(np.ones(N, np.float32), np.ones(N, np.float32), 0.0, 0.0)
    assert close(np.ones((2, N), np.float32), np.ones((2, N), np.float32), 1e-4, 1e-4)


def test_strided_views_and_later_sub_blocks_are_the_definition() -> None:
    rng = np.random.default_rng(11)
    big = rng.standard_normal((300, 700)).astype(np.float32)
    near = (big.astype(np.float64) + rng.standard_normal(big.shape) * 1e-5).astype(np.float32)
    far = near.copy()
    far[290, 650] += 1.0  # a departure in the last sub-block
    nan = near.copy()
    nan[200, 3] = np.nan
    for other in (near, far, nan):
        for ix in [(slice(None), slice(None)), (slice(1, None, 3), slice(5, 600)), (slice(None), slice(None, None, 2))]:
            for atol, rtol in [(1e-4, 1e-4), (1e-6, 0.0)]:
                assert _ok(other[ix], big[ix], atol, rtol) == _ok_reference(other[ix], big[ix], atol, rtol)
    assert not _ok(far, big, 1e-4, 1e-4) and _ok(near, big, 1e-4, 1e-4) and not _ok(nan, big, 1e-4, 1e-4)
    cube = rng.standard_normal((4, 3, 50_000)).astype(np.float32)  # rows longer than a sub-block
    assert _ok(cube + np.float32(1e-6), cube, 1e-4, 1e-4) == _ok_reference(cube + np.float32(1e-6), cube, 1e-4, 1e-4)


def _fit_reference(a: np.ndarray, b: np.ndarray) -> tuple[float, float | None]:
    """``_compare.fit`` as it was written before its copies were cut (session 6)."""
    import math

    n = n_big = 0
    sa = sb = saa = sbb = sab = 0.0
    ratios: list[np.ndarray] = []
    for ix in _compare.blocks(a.shape, min(_compare.CHUNK, _compare.FIT_MAX)):
        if n >= _compare.FIT_MAX:
            break
        fa, fb = np.asarray(a[ix], np.float64).ravel(), np.asarray(b[ix], np.float64).ravel()
        ok = np.isfinite(fa) & np.isfinite(fb)
        fa, fb = fa[ok], fb[ok]
        n += fa.size
        sa += float(fa.sum())
        sb += float(fb.sum())
        saa += float((fa * fa).sum())
        sbb += float((fb * fb).sum())
        sab += float((fa * fb).sum())
        big = np.abs(fb) > 1e-6
        n_big += int(big.sum())
        if big.any() and sum(r.size for r in ratios) < 4096:
            ratios.append(fa[big][:4096] / fb[big][:4096])
    corr = 0.0
    if n > 2:
        va, vb = saa - sa * sa / n, sbb - sb * sb / n
        if va > 1e-300 and vb > 1e-300:
            corr = abs((sab - sa * sb / n) / math.sqrt(va * vb))
            corr = min(corr, 1.0) if math.isfinite(corr) else 0.0
    k: float | None = None
    if ratios and n_big >= max(2, n // 2):
        r = np.concatenate(ratios)
        if r.size >= 2:
            med = float(np.median(r))
            if math.isfinite(med) and abs(med - 1.0) > 1e-3 and np.allclose(r, med, rtol=1e-2, atol=1e-6):
                k = med
    return corr, k


def test_fit_is_unchanged() -> None:
    rng = np.random.default_rng(5)
    b = rng.standard_normal((600, 700)).astype(np.float32)
    small = b.copy()
    small[::2] = 1e-8  # half the golden below the ratio threshold
    cases = [(b * 2, b), (b + 1, b), (rng.standard_normal(b.shape).astype(np.float32), b), (b * 2, small)]
    with_nan = (b * 3).copy()
    with_nan[3, ::5] = np.nan
    with_nan[10, 1] = np.inf
    cases += [(with_nan, b), (b[:, ::3] * 0.5, b[:, ::3]), (b[:5, :7] * 4, b[:5, :7])]
    for a, g in cases:
        assert _compare.fit(a, g) == _fit_reference(a, g)
