"""The fast float16 <-> float32 conversions (`_numerics._f16_to_f32` / `_f32_to_f16`) give numpy's bits, and the
bfloat16 ones (`_numerics.compute`, `_f32_to_bf16`, `to_bf16`) ml_dtypes' bits.

Both forms are checked, each test runs twice: the bit-level one (numpy ufuncs on the bits) and, when torch is
installed, torch's copy (the CPU's conversion instructions, `_numerics._torch_half`, used when the process
imported torch). Every float16 pattern is checked; float32 -> float16 on every pattern around each float16
rounding boundary, the subnormal range and a random sample of all patterns (an exhaustive run over the 2^32
patterns was made once for each form when it was written: identical - for torch's, 2,399,125,504 patterns with
|x| < 65504 on a Sapphire Rapids core, 189 s). Infinities and NaNs go through numpy's own loop."""

import ml_dtypes
import numpy as np
import pytest

from runtime.emulator import _numerics
from runtime.emulator._buffers import POISON_BITS, is_poison, poison_array
from runtime.emulator._enums import CastMode, DataType
from runtime.emulator._numerics import (
    _f16_to_f32,
    _f32_to_bf16,
    _f32_to_f16,
    cast_array,
    compute,
    narrow_float,
    to_bf16,
)

BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(params=["bits", "torch"], autouse=True)
def form(request, monkeypatch) -> str:
    """Which conversion the test runs: the bit-level form, or torch's (skipped without torch)."""
    if request.param == "torch":
        pytest.importorskip("torch", reason="torch's conversions are only used when the process has torch")
    monkeypatch.setattr(_numerics, "_TORCH_HALF_OFF", request.param == "bits")
    return request.param


def test_the_form_under_test_is_the_one_used(form):
    h = np.ones((128, 256), np.float16)
    assert (_numerics._torch_copy(h, np.dtype(np.float32)) is not None) == (form == "torch")
    assert (_numerics._torch_copy(h.astype(BF16), np.dtype(np.float32)) is not None) == (form == "torch")


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


def test_a_thread_that_flushes_denormals_gets_numpys_bits(form):
    """``torch.set_flush_denormal(True)`` sets FTZ and DAZ: then neither fast form is used for what it changes."""
    torch = pytest.importorskip("torch")
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    every = bits.view(np.float16)
    x = _near_boundaries()
    if not torch.set_flush_denormal(True):
        pytest.skip("this CPU cannot flush denormals")
    try:
        assert not _numerics._subnormals_exact()
        assert _numerics._torch_copy(every, np.dtype(np.float32)) is None
        assert _f32_bits(_f16_to_f32(every)) == _f32_bits(every.astype(np.float32))
        with np.errstate(over="ignore"):
            assert _f16_bits(_f32_to_f16(x)) == _f16_bits(x.astype(np.float16))
    finally:
        torch.set_flush_denormal(False)
    assert _numerics._subnormals_exact()


def test_a_read_only_array_is_converted_by_the_bit_level_form():
    h = np.arange(20000, dtype=np.float16)
    h.flags.writeable = False  # torch.from_numpy warns on it: never handed to torch
    assert _numerics._torch_copy(h, np.dtype(np.float32)) is None
    assert _f32_bits(compute(h)) == _f32_bits(h.astype(np.float32))


def test_every_bfloat16_widens_like_ml_dtypes(form):
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(BF16)  # NaN payloads and poison too
    assert _f32_bits(compute(every)) == _f32_bits(every.astype(np.float32))
    strided = every.reshape(256, 256)[:, ::3]
    assert _f32_bits(compute(strided)) == _f32_bits(strided.astype(np.float32))
    p = poison_array((128, 256), BF16)
    assert is_poison(compute(p)) == p.size


def _near_bf16_boundaries() -> np.ndarray:
    """float32 patterns within a few ulps of every finite bfloat16 value and of every midpoint between two of them
    (denormals and the overflow to infinity included), with infinities."""
    b = np.arange(1 << 15, dtype=np.uint32)
    b = b[(b & 0x7F80) != 0x7F80]  # finite magnitudes
    c = (b << 16).astype(np.int64)
    mids = c[:-1] + (1 << 15)
    centers = np.concatenate([c, mids, [0x7F7FFFFF, 0x7F800000]])
    near = (centers[:, None] + np.arange(-3, 4)[None, :]).ravel()
    near = near[(near >= 0) & (near <= 0x7F800000)].astype(np.uint32)
    return np.concatenate([near, near | np.uint32(0x80000000)]).view(np.float32)


def test_float32_to_bfloat16_rounds_like_ml_dtypes_at_every_boundary(form):
    x = _near_bf16_boundaries()
    assert x.size > 400_000
    with np.errstate(over="ignore"):
        want = x.astype(BF16)
    assert _f16_bits(_f32_to_bf16(x)) == _f16_bits(want)
    assert _f16_bits(narrow_float(x, BF16, CastMode.CAST_RINT)) == _f16_bits(want)
    assert _f16_bits(to_bf16(x)) == _f16_bits(want)


def test_float32_to_bfloat16_with_nans_and_poison(form):
    r = np.random.default_rng(2)
    x = r.integers(0, 1 << 32, size=1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)  # ~0.4% NaN
    with np.errstate(all="ignore"):
        want = x.astype(BF16)
    assert np.isnan(x).any()
    assert _f16_bits(_f32_to_bf16(x)) == _f16_bits(want)
    p = poison_array((128, 256), np.dtype(np.float32))
    assert is_poison(to_bf16(p)) == p.size  # poison stays poison (ml_dtypes' path: a NaN in the array)


@pytest.mark.parametrize("view", ["T", "cols", "rows"])
def test_bfloat16_results_are_laid_out_as_ml_dtypes_lays_them_out(form, view):
    """The layout is part of the bits: a float32 BLAS picks its kernel by the operands' strides, so a converted
    operand must have the strides ``astype`` gives it (a C-contiguous copy of a transposed operand changed one ulp
    of 27 bytes of gqa_decode_attn's output when the torch form had it)."""
    r = np.random.default_rng(3)
    x = (r.standard_normal((256, 384)) * 10).astype(np.float32)
    pick = {"T": lambda a: a.T, "cols": lambda a: a[:, ::2], "rows": lambda a: a[::3]}[view]
    xv, bv = pick(x), pick(x.astype(BF16))
    for got, want in ((compute(bv), bv.astype(np.float32)), (_f32_to_bf16(xv), xv.astype(BF16)),
                      (to_bf16(xv), xv.astype(BF16)), (narrow_float(xv, BF16, CastMode.CAST_RINT), xv.astype(BF16))):
        assert got.strides == want.strides and got.tobytes() == want.tobytes()
