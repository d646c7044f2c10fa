"""Design point 5: numerics as the device (per-op bf16/fp16 rounding, FP32 accumulation, casts, integers)."""

import ml_dtypes
import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator._enums import CastMode, DataType, SaturationMode
from runtime.emulator._numerics import cast_array

pypto = emu.install()
F32 = np.float32
BF16 = ml_dtypes.bfloat16


@pypto.frontend.jit
def chain_bf16(a: pypto.Tensor([8, 16], pypto.DT_BF16), b: pypto.Tensor([8, 16], pypto.DT_BF16),
               out: pypto.Tensor([8, 16], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = (a * b + a) * b


def _chain_refs(a: np.ndarray, b: np.ndarray) -> tuple[bytes, bytes]:
    """(bf16 rounded after every op, the fp32 chain rounded once) of ``(a * b + a) * b``."""
    f = np.float32
    step1 = (a.astype(f) * b.astype(f)).astype(BF16)
    step2 = (step1.astype(f) + a.astype(f)).astype(BF16)
    per_op = (step2.astype(f) * b.astype(f)).astype(BF16)
    fused = ((a.astype(f) * b.astype(f) + a.astype(f)) * b.astype(f)).astype(BF16)
    assert per_op.tobytes() != fused.tobytes()  # the test can tell per-op rounding from fused fp32
    return per_op.tobytes(), fused.tobytes()


@pytest.mark.parametrize(("npuarch", "rounding"), [("DAV_3510", 0), ("DAV_2201", 1)], ids=["950-per-op", "a2a3-fp32-once"])
def test_bf16_chain_rounding_follows_the_arch(npuarch: str, rounding: int):
    """The 950 rounds a bf16 chain after every op; the real 0.2.0 compiler for A2/A3 (the default arch) promotes
    it to fp32 and rounds once (device/_promote.py)."""
    r = np.random.default_rng(3)
    a = r.uniform(-3, 3, (8, 16)).astype(BF16)
    b = r.uniform(-3, 3, (8, 16)).astype(BF16)
    out = np.zeros((8, 16), BF16)
    with emu.session(options=emu.Options(npuarch=npuarch)):
        chain_bf16(a, b, out)
    assert out.tobytes() == _chain_refs(a, b)[rounding]


@pypto.frontend.jit
def mm_bf16(a: pypto.Tensor([16, 256], pypto.DT_BF16), b: pypto.Tensor([256, 16], pypto.DT_BF16),
            c: pypto.Tensor([16, 16], pypto.DT_BF16)):
    pypto.set_cube_tile_shapes([16, 16], [64, 256], [16, 16])
    c[:] = pypto.matmul(a, b, pypto.DT_BF16)


def test_matmul_accumulates_in_fp32_and_rounds_once():
    r = np.random.default_rng(4)
    a = r.uniform(-1, 1, (16, 256)).astype(BF16)
    b = r.uniform(-1, 1, (256, 16)).astype(BF16)
    c = np.zeros((16, 16), BF16)
    mm_bf16(a, b, c)
    ref = (a.astype(F32) @ b.astype(F32)).astype(BF16)
    np.testing.assert_allclose(c.astype(F32), ref.astype(F32), rtol=1e-2, atol=1e-2)
    diff = np.abs(c.astype(F32) - ref.astype(F32))
    assert (diff <= np.abs(ref.astype(F32)) * 2 ** -7 + 1e-6).all()  # at most one bf16 ulp from the fp32 sum


@pytest.mark.parametrize("mode, expected", [
    (CastMode.CAST_NONE, [2, -2, 2, -2, 3]),     # float -> int default is TRUNC
    (CastMode.CAST_TRUNC, [2, -2, 2, -2, 3]),
    (CastMode.CAST_RINT, [2, -2, 3, -3, 4]),     # nearest, ties to even
    (CastMode.CAST_ROUND, [3, -3, 3, -3, 4]),    # ties away from zero
    (CastMode.CAST_FLOOR, [2, -3, 2, -3, 3]),
    (CastMode.CAST_CEIL, [3, -2, 3, -2, 4]),
])
def test_float_to_int_cast_modes(mode, expected):
    x = np.array([2.5, -2.5, 2.7, -2.7, 3.5], F32)
    got = cast_array(x, DataType.DT_FP32, DataType.DT_INT32, mode)
    assert got.dtype == np.int32 and got.tolist() == expected


def test_saturation_on_clamps_off_wraps():
    x = np.array([300.0, -300.0, 1e10], F32)
    on = cast_array(x, DataType.DT_FP32, DataType.DT_INT16, CastMode.CAST_TRUNC, SaturationMode.ON)
    off = cast_array(x, DataType.DT_FP32, DataType.DT_INT16, CastMode.CAST_TRUNC, SaturationMode.OFF)
    assert on.tolist() == [300, -300, 32767]
    assert off[:2].tolist() == [300, -300] and off[2] != 32767


def test_fp32_to_bf16_directed_rounding():
    x = np.array([1.0 + 2 ** -9, -(1.0 + 2 ** -9)], F32)  # between two bf16 values
    dn = cast_array(x, DataType.DT_FP32, DataType.DT_BF16, CastMode.CAST_FLOOR).astype(F32)
    up = cast_array(x, DataType.DT_FP32, DataType.DT_BF16, CastMode.CAST_CEIL).astype(F32)
    tr = cast_array(x, DataType.DT_FP32, DataType.DT_BF16, CastMode.CAST_TRUNC).astype(F32)
    assert dn.tolist() == [1.0, -(1 + 2 ** -7)]
    assert up.tolist() == [1 + 2 ** -7, -1.0]
    assert tr.tolist() == [1.0, -1.0]


def test_fp32_to_fp16_overflow_is_inf_regardless_of_satmode():
    x = np.array([1e6, -1e6], F32)
    for sat in (SaturationMode.ON, SaturationMode.OFF):
        y = cast_array(x, DataType.DT_FP32, DataType.DT_FP16, CastMode.CAST_NONE, sat)
        assert np.isinf(y).all()


@pypto.frontend.jit
def int_ops(a: pypto.Tensor([1, 8], pypto.DT_INT32), b: pypto.Tensor([1, 8], pypto.DT_INT32),
            rem: pypto.Tensor([1, 8], pypto.DT_INT32), quo: pypto.Tensor([1, 8], pypto.DT_FP32),
            s: pypto.Tensor([1, 8], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(1, 8)
    rem[:] = a % b
    quo[:] = a / b
    s[:] = a + b


def test_integer_semantics():
    a = np.array([[7, -7, 7, -7, 2**31 - 1, 0, 9, -9]], np.int32)
    b = np.array([[3, 3, -3, -3, 1, 5, 4, 4]], np.int32)
    rem, quo, s = np.zeros((1, 8), np.int32), np.zeros((1, 8), F32), np.zeros((1, 8), np.int32)
    int_ops(a, b, rem, quo, s)
    assert rem.tolist() == [[1, 2, -2, -1, 0, 0, 1, 3]]  # Python modulo: sign of the divisor
    np.testing.assert_allclose(quo, a.astype(F32) / b.astype(F32))  # int div -> FP32 result
    assert s[0, 4] == np.iinfo(np.int32).min  # int32 add wraps


@pypto.frontend.jit
def sum_rows(x: pypto.Tensor([4, 512], pypto.DT_BF16), out: pypto.Tensor([4, 1], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(4, 512)
    out[:] = pypto.sum(x, -1, keepdim=True)


def test_sum_accumulates_fp32_and_warns_on_non_fp32():
    x = np.full((4, 512), 1.0 + 2 ** -7, BF16)
    out = np.zeros((4, 1), BF16)
    with emu.session() as s:
        sum_rows(x, out)
    assert np.allclose(out.astype(F32), 512 * (1 + 2 ** -7), rtol=2 ** -8)  # a bf16 running sum would stall
    assert any(d.code == "EMU_SUM_FP32" for d in s.warnings)


@pypto.frontend.jit
def fmod_kernel(a: pypto.Tensor([1, 4], pypto.DT_FP32), b: pypto.Tensor([1, 4], pypto.DT_FP32),
                out: pypto.Tensor([1, 4], pypto.DT_FP32), rnd: pypto.Tensor([1, 4], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 8)
    out[:] = pypto.fmod(a, b)
    rnd[:] = pypto.round(a)


def test_fmod_sign_of_dividend_and_round_half_even():
    a = np.array([[-7.0, 7.0, 2.5, 3.5]], F32)
    b = np.array([[3.0, -3.0, 2.0, 2.0]], F32)
    out, rnd = np.zeros_like(a), np.zeros_like(a)
    fmod_kernel(a, b, out, rnd)
    assert out.tolist() == [[-1.0, 1.0, 0.5, 1.5]]
    assert rnd.tolist() == [[-7.0, 7.0, 2.0, 4.0]]


def test_fp32_to_fp32_cast_with_a_mode_rounds_to_integers():
    x = np.array([1.5, -1.5, 2.5, 0.4], F32)
    assert cast_array(x, DataType.DT_FP32, DataType.DT_FP32, CastMode.CAST_NONE).tolist() == x.tolist()
    assert cast_array(x, DataType.DT_FP32, DataType.DT_FP32, CastMode.CAST_RINT).tolist() == [2, -2, 2, 0]
    assert cast_array(x, DataType.DT_FP32, DataType.DT_FP32, CastMode.CAST_FLOOR).tolist() == [1, -2, 2, 0]
