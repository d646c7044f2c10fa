"""Comparing a kernel value with a golden slice in blocks, so memory stays bounded at real shapes.

Why: a gym kernel at the vendor's shapes produces op values of tens of MB (RMSNorm over ``[1, 64, 256, 256]``
fp32 is 16 MB a row; an AdamW tile ``[7168, 2048]`` is 56 MB). Converting such a value and its golden slice
to float64 whole, then taking differences, costs several times the value. Here every comparison walks both
arrays in blocks of at most ``CHUNK`` elements along their leading axes (views, no copies of the inputs),
converts one block at a time and stops at the first block that departs. Memory: a few blocks of ``CHUNK``
float64 elements (``CHUNK`` = 1M: 8 MB each), whatever the size of the value.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

__all__ = ["CHUNK", "any_inf", "any_nan", "blocks", "close", "equal", "fit", "inside", "max_abs_diff", "mismatch_mask", "tile_check",
           "vacuous"]

CHUNK = 1 << 20
"""Elements per comparison block."""

_HEAD = 16


def blocks(shape: tuple[int, ...], chunk: int = CHUNK) -> Iterator[tuple]:
    """Index tuples that cut an array of ``shape`` into row-major blocks of at most ``chunk`` elements (a
    block may exceed it only when one element of the innermost axis does, i.e. never in practice)."""
    if not shape:
        yield ()
        return
    k = 0
    while k < len(shape) - 1 and math.prod(shape[k + 1:]) > chunk:
        k += 1
    inner = max(1, math.prod(shape[k + 1:]))
    step = max(1, chunk // inner)
    for lead in np.ndindex(*shape[:k]) if k else [()]:
        for s in range(0, shape[k], step):
            yield (*lead, slice(s, min(shape[k], s + step)))


def _f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def _head(a: np.ndarray) -> np.ndarray:
    """A few leading elements (a view of the first row) without copying the array."""
    if a.ndim == 0:
        return a.reshape(1)
    return a[(0,) * (a.ndim - 1)][:_HEAD]


def _ok(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    """``|a - b| <= atol + rtol * |b|`` everywhere, computed in float64 (:func:`_ok_reference`, the definition).

    Why not the definition itself: it makes seven float64 temporaries of each block, and bisect's replay of
    AdamW at [7168, 2048] compares ~27 whole 14M-element values this way (5-6 s of a 7 s replay at load ~2).
    Two shortcuts with the same answer bit for bit: blocks of one native float dtype that are equal element by
    element (a kernel op and the torch op it mirrors often round alike) are close wherever ``b`` is finite
    (``inf - inf`` is NaN, never close); otherwise the same float64 operations in the same order, with two
    temporaries (``tests/bisect/test_compare_fast.py`` holds the two to the definition)."""
    if a.size < _FAST_MIN or not (_native(a.dtype) and _native(b.dtype)):
        return _ok_reference(a, b, atol, rtol)
    with np.errstate(all="ignore"):
        if a.dtype == b.dtype and a.dtype.kind == "f" and atol >= 0 and rtol >= 0 and bool(np.equal(a, b).all()):
            return bool(np.isfinite(b).all())
        if a.ndim == 0:
            return _ok_reference(a, b, atol, rtol)
        inner = math.prod(a.shape[1:])
        step = max(1, _SUB // max(1, inner))
        n = min(a.shape[0], step) * inner
        dbuf, tbuf, mbuf = np.empty(n), np.empty(n), np.empty(n, dtype=bool)
        for i in range(0, a.shape[0], step):  # (sub-blocks along the leading axis: views, temporaries in cache)
            x, y = a[i:i + step], b[i:i + step]
            d, t, m = (buf[:x.size].reshape(x.shape) for buf in (dbuf, tbuf, mbuf))
            np.subtract(x, y, out=d, dtype=np.float64)
            np.abs(d, out=d)
            np.abs(y, out=t, dtype=np.float64)
            np.multiply(t, rtol, out=t)
            np.add(t, atol, out=t)  # (atol + rtol * |b|: IEEE addition commutes)
            if not np.less_equal(d, t, out=m).all():
                return False
        return True


_FAST_MIN = 4096
"""Blocks smaller than this are compared by the definition (no gain worth a second code path)."""
_SUB = 1 << 15
"""Elements per sub-block of the float64 path (two 256 KB temporaries: they stay in the cache; whole 1M-element
blocks made 8 MB temporaries and were 3x slower)."""


def _native(dt: np.dtype) -> bool:
    """A dtype numpy casts to float64 exactly in a ufunc: float16/32/64 and (u)int (ml_dtypes' floats as well,
    but their casts are ml_dtypes' own: compared by the definition)."""
    return dt.kind in "fiu" and dt.itemsize <= 8 and dt.type.__module__ == "numpy"


def _ok_reference(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    fa, fb = _f64(a), _f64(b)
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(fa - fb) <= atol + rtol * np.abs(fb)))


def close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    """``|a - b| <= atol + rtol * |b|`` everywhere (NaN never close); same shape required."""
    if a.shape != b.shape:
        return False
    if a.size == 0:
        return True
    if not _ok(_head(a), _head(b), atol, rtol):  # most candidates fail on their first elements
        return False
    if a.size <= CHUNK:
        return _ok(a, b, atol, rtol)
    sample = _spread(a.shape)  # a wrong value usually shows on a few rows spread over it: no full pass then
    if not _ok(a[sample], b[sample], atol, rtol):
        return False
    return all(_ok(a[ix], b[ix], atol, rtol) for ix in blocks(a.shape))


def _spread(shape: tuple[int, ...]) -> tuple[slice, ...]:
    """Index of about 8 evenly spaced positions on every axis but the last (a strided view: no copy)."""
    return tuple(slice(None, None, max(1, n // 8)) for n in shape[:-1]) + (slice(None),)


def inside(a: np.ndarray, atol: float) -> bool:
    """Every element of ``a`` is within ``atol`` of zero (NaN is not)."""
    if a.size == 0:
        return False
    if a.size <= CHUNK:
        with np.errstate(all="ignore"):
            return bool(np.all(np.abs(_f64(a)) <= atol))
    with np.errstate(all="ignore"):
        return all(bool(np.all(np.abs(_f64(a[ix])) <= atol)) for ix in blocks(a.shape))


def vacuous(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    """``a`` and ``b`` both lie entirely within ``atol`` of zero and are not equal: ``close`` holds for them
    whatever they compute, so it is no evidence that ``a`` is ``b`` (AdamW's second moment, all below 5e-6
    under an fp32 ``atol`` of 1e-4, "matched" with the wrong gradient square). Bit-equal values are evidence
    (a zero fill where the golden holds zeros). Not part of ``close``: a repair test asks whether a value is
    within tolerance, which it is; only a *match* claims the value is the golden's quantity."""
    if a.shape != b.shape or not inside(a, atol) or not inside(b, atol):
        return False
    return not equal(a, b)


def equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape and the same values (compared as float64, block by block)."""
    if a.shape != b.shape:
        return False
    if a.size and not np.array_equal(_f64(_head(a)), _f64(_head(b))):
        return False
    if a.size <= CHUNK:
        return bool(np.array_equal(_f64(a), _f64(b)))
    return all(np.array_equal(_f64(a[ix]), _f64(b[ix])) for ix in blocks(a.shape))


def _any(a: np.ndarray, test: np.ufunc) -> bool:
    """``test`` (``np.isnan`` / ``np.isinf``) holds somewhere in ``a`` (block by block; never for integers)."""
    if a.dtype.kind in "iub" or a.size == 0:
        return False
    if a.size <= CHUNK:
        return bool(test(_f64(a)).any())
    return any(bool(test(_f64(a[ix])).any()) for ix in blocks(a.shape))


def any_nan(a: np.ndarray) -> bool:
    return _any(a, np.isnan)


def any_inf(a: np.ndarray) -> bool:
    """``a`` holds +-inf (a float value that overflowed: ``exp`` of a logit without the max subtracted)."""
    return _any(a, np.isinf)


def mismatch_mask(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """Boolean array: where ``a`` departs from ``b`` (computed block by block)."""
    out = np.zeros(a.shape, dtype=bool)
    for ix in blocks(a.shape):
        fa, fb = _f64(a[ix]), _f64(b[ix])
        with np.errstate(all="ignore"):
            out[ix] = ~(np.abs(fa - fb) <= atol + rtol * np.abs(fb))
    return out


FIT_MAX = 1 << 18
"""Elements ``fit`` reads at most (the leading ones, in blocks of this size): a correlation and a constant ratio
are as clear on 256K elements as on all of them, and a value is fitted against every golden it does not match -
on AdamW's ``[7168, 2048]`` tiles, reading 4M elements against each of ~30 goldens was still 107 s of a 285 s
bisect (session 5 profile; whole tensors: most of it)."""


def fit(a: np.ndarray, b: np.ndarray) -> tuple[float, float | None]:
    """How ``a`` follows ``b`` when it does not match it: (|correlation|, k) where ``a ~= k * b`` for one ``k``
    (a wrong scale constant), else k is None. Sums over blocks (about ``FIT_MAX`` elements, the leading ones)."""
    n = n_big = 0
    sa = sb = saa = sbb = sab = 0.0
    ratios: list[np.ndarray] = []
    for ix in blocks(a.shape, min(CHUNK, FIT_MAX)):
        if n >= FIT_MAX:
            break
        fa, fb = _f64(a[ix]).ravel(), _f64(b[ix]).ravel()
        ok = np.isfinite(fa)
        ok &= np.isfinite(fb)
        if not ok.all():  # (all finite, the usual case: no copies)
            fa, fb = fa[ok], fb[ok]
        n += fa.size
        sa += float(fa.sum())
        sb += float(fb.sum())
        saa += float((fa * fa).sum())
        sbb += float((fb * fb).sum())
        sab += float((fa * fb).sum())
        big = np.abs(fb) > 1e-6
        nb = int(np.count_nonzero(big))
        n_big += nb
        if nb and sum(r.size for r in ratios) < 4096:
            take = np.flatnonzero(big)[:4096]  # (the first 4096 of fa[big], without copying all of them)
            ratios.append(fa[take] / fb[take])
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


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float | None:
    """Largest finite ``|a - b|`` (None when nothing finite was compared)."""
    best: float | None = None
    for ix in blocks(a.shape):
        with np.errstate(all="ignore"):
            d = np.abs(_f64(a[ix]) - _f64(b[ix]))
        d = d[np.isfinite(d)]
        if d.size:
            m = float(d.max())
            best = m if best is None else max(best, m)
    return best


def tile_check(box: np.ndarray, offsets: list[int], g: np.ndarray, atol: float,
               rtol: float) -> tuple[bool, float | None, int] | None:
    """A tile written at ``offsets`` into a tensor holding golden ``g`` (the tensor may be padded past ``g``):
    (all close, max |diff|, NaN count) over the part inside ``g``'s extent; None when no part is inside."""
    if box.ndim != g.ndim or len(offsets) != g.ndim:
        return None
    inside = tuple(slice(0, max(0, n - o)) for o, n in zip(offsets, g.shape, strict=True))
    part = box[inside]
    if part.size == 0:
        return None
    sl = g[tuple(slice(o, o + n) for o, n in zip(offsets, part.shape, strict=True))]
    nan = 0 if part.dtype.kind in "iub" else sum(int(np.isnan(_f64(part[ix])).sum()) for ix in blocks(part.shape))
    if sl.shape != part.shape:
        return False, None, nan
    return close(part, sl, atol, rtol), max_abs_diff(part, sl), nan
