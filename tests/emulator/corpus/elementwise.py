"""Elementwise kernels: static shapes, a dynamic axis with a tail through valid_shape, scalar operands,
single-axis broadcast, comparisons/where, per-op bf16/fp16 rounding (spec §1.4, §2.5, §4.1, §5.1–§5.4)."""

import numpy as np
import pypto
from _emucorpus import (
    BF16,
    EXACT,
    F16,
    F32,
    FP32,
    FP32_LOOSE,
    Call,
    KernelCase,
    f32,
    rnd,
    rng,
    sentinel,
    single,
    uniform,
)

TILE_ROWS = 16
D = 64


@pypto.frontend.jit
def add_static(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    y: pypto.Tensor([8, 64], pypto.DT_FP32),
    out: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x + y


def case_add_static() -> KernelCase:
    r = rng(1)
    x, y = uniform(r, (8, 64)), uniform(r, (8, 64))
    out = sentinel((8, 64))
    return single(add_static, (x, y, out), {2: x + y}, EXACT, spec="§1.3 out[:] = expr")


@pypto.frontend.jit
def add_dynamic_tail(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE_ROWS, D)
    for i in pypto.loop((n + TILE_ROWS - 1) // TILE_ROWS, name="rows", idx_name="i"):
        valid = (n - i * TILE_ROWS).min(TILE_ROWS)
        xt = pypto.view(x, [TILE_ROWS, D], [i * TILE_ROWS, 0], valid_shape=[valid, D])
        yt = pypto.view(y, [TILE_ROWS, D], [i * TILE_ROWS, 0], valid_shape=[valid, D])
        pypto.assemble(xt + yt, [i * TILE_ROWS, 0], out)


def _add_call(seed: int, n: int) -> Call:
    r = rng(seed)
    x, y = uniform(r, (n, D)), uniform(r, (n, D))
    return Call(add_dynamic_tail, (x, y, sentinel((n, D))), {2: x + y}, EXACT)


def case_add_dynamic_tail_two_sizes() -> KernelCase:
    """77 rows = 4 full tiles + a 13-row tail; then 64 rows with the same wrapper (no re-decoration)."""
    return KernelCase(calls=[_add_call(2, 77), _add_call(3, 64)], spec="§1.4 tail idiom, §4.1 valid_shape")


def case_add_dynamic_single_partial_tile() -> KernelCase:
    """5 rows: the only tile is partial; rows beyond the data must not be touched or read."""
    return KernelCase(calls=[_add_call(4, 5)], spec="§4.1 valid_shape")


@pypto.frontend.jit
def unary_chain(
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    out: pypto.Tensor([16, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    a = pypto.abs(x)
    out[:] = pypto.exp(-a) * pypto.rsqrt(a + 1.0) + pypto.sqrt(a) - pypto.log(a + 2.0)


def case_unary_chain() -> KernelCase:
    x = uniform(rng(5), (16, 64), -3.0, 3.0)
    a = np.abs(x.astype(np.float64))
    ref = np.exp(-a) / np.sqrt(a + 1.0) + np.sqrt(a) - np.log(a + 2.0)
    return single(unary_chain, (x, sentinel((16, 64))), {1: ref.astype(F32)}, FP32_LOOSE, spec="§5.3")


@pypto.frontend.jit
def scalar_operands(
    x: pypto.Tensor([8, 32], pypto.DT_FP32),
    out: pypto.Tensor([8, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = (x * 2.0 + 1.0) - x / 4.0 + (3.0 - x)


def case_scalar_operands() -> KernelCase:
    x = uniform(rng(6), (8, 32))
    ref = (x * np.float32(2.0) + np.float32(1.0)) - x / np.float32(4.0) + (np.float32(3.0) - x)
    return single(scalar_operands, (x, sentinel((8, 32))), {1: ref}, FP32, spec="§2.2 reflected ops, §2.5")


@pypto.frontend.jit
def broadcast_one_axis(
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    col: pypto.Tensor([16, 1], pypto.DT_FP32),
    row: pypto.Tensor([1, 64], pypto.DT_FP32),
    out: pypto.Tensor([16, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = (x - col) * row


def case_broadcast_one_axis() -> KernelCase:
    r = rng(7)
    x, col, row = uniform(r, (16, 64)), uniform(r, (16, 1)), uniform(r, (1, 64))
    return single(broadcast_one_axis, (x, col, row, sentinel((16, 64))), {3: (x - col) * row}, FP32,
                  spec="§5.1 single-axis broadcast")


@pypto.frontend.jit
def where_compare(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    y: pypto.Tensor([8, 64], pypto.DT_FP32),
    out_max: pypto.Tensor([8, 64], pypto.DT_FP32),
    out_sel: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    out_max[:] = pypto.where(x > y, x, y)
    out_sel[:] = pypto.where(x <= 0.0, 0.0, pypto.maximum(x, y))


def case_where_compare() -> KernelCase:
    r = rng(8)
    x, y = uniform(r, (8, 64)), uniform(r, (8, 64))
    return single(where_compare, (x, y, sentinel((8, 64)), sentinel((8, 64))),
                  {2: np.maximum(x, y), 3: np.where(x <= 0, np.float32(0), np.maximum(x, y))}, EXACT,
                  spec="§5.4 comparisons -> BOOL, where")


@pypto.frontend.jit
def bf16_rounding_per_op(
    x: pypto.Tensor([16, 64], pypto.DT_BF16),
    y: pypto.Tensor([16, 64], pypto.DT_BF16),
    out: pypto.Tensor([16, 64], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = (x + y) * y - x


def case_bf16_rounding_per_op() -> KernelCase:
    """On the Ascend 950 (native BF16 vector arithmetic) each op rounds to bf16; the reference rounds after every op
    too, so the result is bit-exact."""
    r = rng(9)
    x, y = uniform(r, (16, 64), -4, 4, BF16), uniform(r, (16, 64), -4, 4, BF16)
    s = rnd(f32(x) + f32(y), BF16)
    p = rnd(s * f32(y), BF16)
    ref = rnd(p - f32(x), BF16).astype(BF16)
    return single(bf16_rounding_per_op, (x, y, sentinel((16, 64), BF16)), {2: ref}, EXACT, spec="§5.1 precision",
                  npuarch="DAV_3510")


def case_bf16_chain_fp32_on_a2a3() -> KernelCase:
    """On A2/A3 the compiler keeps a bf16 chain in fp32 and rounds once where it is written out (the real 0.2.0's
    compiled IR: CAST bf16->fp32, ADD/MUL/SUB on fp32, one CAST fp32->bf16 before COPY_OUT). The reference is the
    fp32 chain rounded once; the per-op rounded result differs from it on these inputs (checked), so the case fails
    if the emulator rounds per op on A2/A3."""
    r = rng(9)
    x, y = uniform(r, (16, 64), -4, 4, BF16), uniform(r, (16, 64), -4, 4, BF16)
    ref = rnd((f32(x) + f32(y)) * f32(y) - f32(x), BF16).astype(BF16)
    per_op = rnd(rnd(rnd(f32(x) + f32(y), BF16) * f32(y), BF16) - f32(x), BF16).astype(BF16)
    assert (per_op != ref).any(), "inputs that cannot tell the two roundings apart"
    return single(bf16_rounding_per_op, (x, y, sentinel((16, 64), BF16)), {2: ref}, EXACT, spec="§5.1 precision")


@pypto.frontend.jit
def fp16_relu_element(
    x: pypto.Tensor([16, 64], pypto.DT_FP16),
    out: pypto.Tensor([16, 64], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.maximum(x, pypto.Element(pypto.DT_FP16, 0.0)) + pypto.relu(x)


def case_fp16_relu_element() -> KernelCase:
    x = uniform(rng(10), (16, 64), -2, 2, F16)
    relu = np.maximum(f32(x), 0)
    ref = rnd(relu + relu, F16).astype(F16)
    return single(fp16_relu_element, (x, sentinel((16, 64), F16)), {1: ref}, EXACT, spec="§2.5 Element, §5.2")


@pypto.frontend.jit
def silu_manual(
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    out_exp: pypto.Tensor([16, 64], pypto.DT_FP32),
    out_sig: pypto.Tensor([16, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    out_exp[:] = x / (pypto.exp(-x) + 1.0)
    out_sig[:] = x * pypto.sigmoid(x)


def case_silu_manual() -> KernelCase:
    x = uniform(rng(11), (16, 64), -6, 6)
    ref = (x.astype(np.float64) / (1.0 + np.exp(-x.astype(np.float64)))).astype(F32)
    return single(silu_manual, (x, sentinel((16, 64)), sentinel((16, 64))), {1: ref, 2: ref}, FP32_LOOSE,
                  spec="§5.3 (hand-written SiLU, sigmoid FP32)")


@pypto.frontend.jit
def clip_round_floor(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    out_clip: pypto.Tensor([8, 64], pypto.DT_FP32),
    out_round: pypto.Tensor([8, 64], pypto.DT_FP32),
    out_floor: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    out_clip[:] = pypto.clip(x, -1.5, 1.5)
    out_round[:] = pypto.round(x)
    out_floor[:] = pypto.floor(x) + pypto.ceil(x) + pypto.trunc(x)


def case_clip_round_floor() -> KernelCase:
    r = rng(12)
    x = (r.integers(-40, 40, size=(8, 64)) / 4.0).astype(F32)  # many exact .5 ties for round-half-even
    outs = (sentinel((8, 64)), sentinel((8, 64)), sentinel((8, 64)))
    ref_fl = np.floor(x) + np.ceil(x) + np.trunc(x)
    return single(clip_round_floor, (x, *outs), {1: np.clip(x, -1.5, 1.5), 2: np.round(x), 3: ref_fl}, EXACT,
                  spec="§5.2 clip, §5.3 round half-even")


@pypto.frontend.jit
def floor_div_remainder(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    y: pypto.Tensor([8, 64], pypto.DT_FP32),
    out_fdiv: pypto.Tensor([8, 64], pypto.DT_FP32),
    out_rem: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    out_fdiv[:] = x // y
    out_rem[:] = x % y


def case_floor_div_remainder() -> KernelCase:
    r = rng(13)
    x = r.integers(-50, 50, size=(8, 64)).astype(F32)
    y = (r.integers(1, 7, size=(8, 64)) * r.choice([-1, 1], size=(8, 64))).astype(F32)
    return single(floor_div_remainder, (x, y, sentinel((8, 64)), sentinel((8, 64))),
                  {2: np.floor_divide(x, y), 3: np.mod(x, y)}, FP32, spec="§2.2 // and %, §5.2 remainder")


@pypto.frontend.jit
def int32_arith(
    x: pypto.Tensor([8, 64], pypto.DT_INT32),
    y: pypto.Tensor([8, 64], pypto.DT_INT32),
    out: pypto.Tensor([8, 64], pypto.DT_INT32),
):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.maximum(x * y - x, y) + 3


def case_int32_arith() -> KernelCase:
    r = rng(14)
    x = r.integers(-1000, 1000, size=(8, 64)).astype(np.int32)
    y = r.integers(-1000, 1000, size=(8, 64)).astype(np.int32)
    ref = (np.maximum(x * y - x, y) + 3).astype(np.int32)
    return single(int32_arith, (x, y, np.zeros((8, 64), np.int32)), {2: ref}, EXACT, spec="§5.2 INT32")


@pypto.frontend.jit
def bf16_scalar_is_element_of_tensor_dtype(
    x: pypto.Tensor([16, 64], pypto.DT_BF16),
    out: pypto.Tensor([16, 64], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x * 0.1 + 0.3


def case_bf16_scalar_operand_rounded_to_bf16() -> KernelCase:
    """§2.5: the Python scalar becomes an Element of the tensor's dtype (bf16(0.1) = 0.10009765625); on the 950
    every op rounds."""
    x = uniform(rng(15), (16, 64), -8, 8, BF16)
    s1, s2 = f32(np.array(0.1, np.float32).astype(BF16)), f32(np.array(0.3, np.float32).astype(BF16))
    ref = rnd(rnd(f32(x) * s1, BF16) + s2, BF16).astype(BF16)
    return single(bf16_scalar_is_element_of_tensor_dtype, (x, sentinel(x.shape, BF16)), {1: ref}, EXACT,
                  spec="§2.5 scalar -> Element of the tensor dtype, §5.1 per-op rounding", npuarch="DAV_3510")


def case_bf16_scalar_operand_on_a2a3() -> KernelCase:
    """On A2/A3 the scalar is still a bf16 Element (the real 0.2.0 IR: ``MULS`` with ``SCALAR {data_type: BF16,
    value: 0.1}``) while the chain runs in fp32 and is rounded once (device/_promote.py)."""
    x = uniform(rng(15), (16, 64), -8, 8, BF16)
    s1, s2 = f32(np.array(0.1, np.float32).astype(BF16)), f32(np.array(0.3, np.float32).astype(BF16))
    ref = rnd(f32(x) * s1 + s2, BF16).astype(BF16)
    return single(bf16_scalar_is_element_of_tensor_dtype, (x, sentinel(x.shape, BF16)), {1: ref}, EXACT,
                  spec="§2.5 scalar -> Element of the tensor dtype, A2/A3 bf16 promotion")
