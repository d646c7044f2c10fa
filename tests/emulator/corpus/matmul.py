"""Matmul kernels: 2-D, a_trans/b_trans, batched (incl. batch broadcast), bias through extend_params,
bf16 in / fp32 out, fp16 out with FP32 accumulation, the ``@`` operator, and a K-tiled loop with
is_loop_begin/is_loop_end accumulators (spec §3.3, §5.8, §6.2, §9.6)."""

import numpy as np
import pypto
from _emucorpus import BF16, F16, F32, FP16, KernelCase, Tol, f32, rng, sentinel, single, uniform

MM = Tol(1e-4, 1e-5)  # fp32 accumulation compared with a float64 reference


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(f32(a).astype(np.float64), f32(b).astype(np.float64))


@pypto.frontend.jit
def matmul_basic(
    a: pypto.Tensor([64, 128], pypto.DT_FP32),
    b: pypto.Tensor([128, 32], pypto.DT_FP32),
    c: pypto.Tensor([64, 32], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [64, 128], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


def case_matmul_basic_fp32() -> KernelCase:
    r = rng(40)
    a, b = uniform(r, (64, 128)), uniform(r, (128, 32))

    def check(session) -> None:
        assert session.counters.matmul_flops == 2 * 64 * 32 * 128, session.counters

    return single(matmul_basic, (a, b, sentinel((64, 32))), {2: _mm(a, b).astype(F32)}, MM, check=check,
                  spec="§9.6 basic; cost counters (issue 3 item 6): 2*M*N*K matmul flops")


@pypto.frontend.jit
def matmul_trans(
    at: pypto.Tensor([128, 64], pypto.DT_FP32),
    bt: pypto.Tensor([32, 128], pypto.DT_FP32),
    c_a: pypto.Tensor([64, 64], pypto.DT_FP32),
    c_b: pypto.Tensor([128, 128], pypto.DT_FP32),
    c_ab: pypto.Tensor([64, 32], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 64])
    pypto.set_vec_tile_shapes(32, 64)
    c_a[:] = pypto.matmul(at, at, pypto.DT_FP32, a_trans=True)
    c_b[:] = pypto.matmul(bt, bt, pypto.DT_FP32, a_trans=True, b_trans=False)
    c_ab[:] = pypto.matmul(at, bt, pypto.DT_FP32, a_trans=True, b_trans=True)


def case_matmul_a_trans_b_trans() -> KernelCase:
    r = rng(41)
    at, bt = uniform(r, (128, 64)), uniform(r, (32, 128))
    expect = {2: _mm(at.T, at).astype(F32), 3: _mm(bt.T, bt).astype(F32), 4: _mm(at.T, bt.T).astype(F32)}
    outs = (sentinel((64, 64)), sentinel((128, 128)), sentinel((64, 32)))
    return single(matmul_trans, (at, bt, *outs), expect, MM, spec="§5.8 a_trans/b_trans")


@pypto.frontend.jit
def matmul_b_trans_fp16(
    a: pypto.Tensor([32, 64], pypto.DT_FP16),
    bt: pypto.Tensor([48, 64], pypto.DT_FP16),
    c: pypto.Tensor([32, 48], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [16, 48])
    pypto.set_vec_tile_shapes(32, 48)
    c[:] = pypto.matmul(a, bt, pypto.DT_FP32, b_trans=True)


def case_matmul_b_trans_fp16_to_fp32() -> KernelCase:
    r = rng(42)
    a, bt = uniform(r, (32, 64), dtype=F16), uniform(r, (48, 64), dtype=F16)
    return single(matmul_b_trans_fp16, (a, bt, sentinel((32, 48))), {2: _mm(a, bt.T).astype(F32)}, MM,
                  spec="§5.8 b_trans, FP16 -> FP32")


@pypto.frontend.jit
def matmul_batch(
    a: pypto.Tensor([4, 32, 64], pypto.DT_FP16),
    b: pypto.Tensor([4, 64, 32], pypto.DT_FP16),
    a1: pypto.Tensor([1, 32, 64], pypto.DT_FP16),
    c: pypto.Tensor([4, 32, 32], pypto.DT_FP32),
    c_bcast: pypto.Tensor([4, 32, 32], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(1, 32, 32)
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    c_bcast[:] = pypto.matmul(a1, b, pypto.DT_FP32)


def case_matmul_batch_and_batch_broadcast() -> KernelCase:
    r = rng(43)
    a, b, a1 = uniform(r, (4, 32, 64), dtype=F16), uniform(r, (4, 64, 32), dtype=F16), uniform(r, (1, 32, 64),
                                                                                                dtype=F16)
    expect = {3: _mm(a, b).astype(F32), 4: _mm(np.broadcast_to(a1, (4, 32, 64)), b).astype(F32)}
    return single(matmul_batch, (a, b, a1, sentinel((4, 32, 32)), sentinel((4, 32, 32))), expect, MM,
                  spec="§9.6 batch, §5.8 batch broadcast from 1")


@pypto.frontend.jit
def matmul_bias(
    a: pypto.Tensor([32, 64], pypto.DT_FP32),
    b: pypto.Tensor([64, 32], pypto.DT_FP32),
    bias: pypto.Tensor([1, 32], pypto.DT_FP32),
    c: pypto.Tensor([32, 32], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    c[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params={"bias_tensor": bias})


def case_matmul_bias() -> KernelCase:
    r = rng(44)
    a, b, bias = uniform(r, (32, 64)), uniform(r, (64, 32)), uniform(r, (1, 32))
    return single(matmul_bias, (a, b, bias, sentinel((32, 32))), {3: (_mm(a, b) + bias).astype(F32)}, MM,
                  spec="§9.6 bias, §5.8 extend_params")


@pypto.frontend.jit
def matmul_bf16_fp32_out(
    a: pypto.Tensor([32, 256], pypto.DT_BF16),
    b: pypto.Tensor([256, 64], pypto.DT_BF16),
    c: pypto.Tensor([32, 64], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [64, 256], [64, 64])
    pypto.set_vec_tile_shapes(32, 64)
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


def case_matmul_bf16_in_fp32_out() -> KernelCase:
    r = rng(45)
    a, b = uniform(r, (32, 256), dtype=BF16), uniform(r, (256, 64), dtype=BF16)
    return single(matmul_bf16_fp32_out, (a, b, sentinel((32, 64))), {2: _mm(a, b).astype(F32)}, MM,
                  spec="§5.8 BF16 x BF16 -> FP32")


@pypto.frontend.jit
def matmul_fp16_out(
    a: pypto.Tensor([16, 512], pypto.DT_FP16),
    b: pypto.Tensor([512, 32], pypto.DT_FP16),
    c: pypto.Tensor([16, 32], pypto.DT_FP16),
):
    pypto.set_cube_tile_shapes([16, 16], [128, 512], [32, 32])
    pypto.set_vec_tile_shapes(16, 32)
    c[:] = pypto.matmul(a, b, pypto.DT_FP16)


def case_matmul_fp16_out_fp32_accumulation() -> KernelCase:
    """K=512 of positive values: accumulating in fp16 would drift by many ulps; FP32 L0C rounds once."""
    r = rng(46)
    a, b = uniform(r, (16, 512), 0.0, 1.0, F16), uniform(r, (512, 32), 0.0, 1.0, F16)
    ref = _mm(a, b).astype(np.float32).astype(F16)
    return single(matmul_fp16_out, (a, b, sentinel((16, 32), F16)), {2: ref}, FP16,
                  spec="§5.1/§5.8 FP32 accumulation, one rounding")


@pypto.frontend.jit
def matmul_operator(
    a: pypto.Tensor([32, 64], pypto.DT_FP32),
    b: pypto.Tensor([64, 32], pypto.DT_FP32),
    c: pypto.Tensor([32, 32], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    c[:] = a @ b + 1.0


def case_matmul_at_operator() -> KernelCase:
    r = rng(47)
    a, b = uniform(r, (32, 64)), uniform(r, (64, 32))
    return single(matmul_operator, (a, b, sentinel((32, 32))), {2: (_mm(a, b) + 1.0).astype(F32)}, MM,
                  spec="§2.2 a @ b (out_dtype = b.dtype)")


KT = 64


@pypto.frontend.jit
def matmul_k_loop(
    a: pypto.Tensor([32, 4 * KT], pypto.DT_BF16),
    b: pypto.Tensor([4 * KT, 64], pypto.DT_BF16),
    c: pypto.Tensor([32, 64], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [KT, KT], [64, 64])
    pypto.set_vec_tile_shapes(32, 64)
    acc = pypto.tensor([32, 64], pypto.DT_FP32, "acc")
    for k in pypto.loop(4, name="k_loop", idx_name="k"):
        part = pypto.matmul(pypto.view(a, [32, KT], [0, k * KT]), pypto.view(b, [KT, 64], [k * KT, 0]),
                            pypto.DT_FP32)
        if pypto.is_loop_begin(k):
            acc[:] = part
        else:
            acc[:] = acc + part
        if pypto.is_loop_end(k):
            pypto.assemble(acc, [0, 0], c)


def case_matmul_k_loop_begin_end_accumulator() -> KernelCase:
    r = rng(48)
    a, b = uniform(r, (32, 4 * KT), dtype=BF16), uniform(r, (4 * KT, 64), dtype=BF16)
    return single(matmul_k_loop, (a, b, sentinel((32, 64))), {2: _mm(a, b).astype(F32)}, MM,
                  spec="§3.3 is_loop_begin/end accumulator")
