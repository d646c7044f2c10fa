"""Model-shaped kernels: a linear layer over a dynamic token count (matmul on tail tiles), a SwiGLU MLP in
bf16 with FP32 accumulation, RoPE on the last-axis halves, a block prefix sum that reads its own output
written in the previous iteration, INT8 matmul into INT32, and top-k values (spec §3.1, §4.1, §5.6, §5.8)."""

import numpy as np
import pypto
from _emucorpus import BF16, EXACT, F32, FP32, Call, KernelCase, Tol, f32, rnd, rng, sentinel, single, uniform

TOK, KIN, NOUT = 16, 64, 32


@pypto.frontend.jit
def linear_dynamic_tokens(
    x: pypto.Tensor([pypto.DYNAMIC, KIN], pypto.DT_FP32),
    w: pypto.Tensor([KIN, NOUT], pypto.DT_FP32),
    bias: pypto.Tensor([1, NOUT], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, NOUT], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TOK, NOUT)
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    for i in pypto.loop(pypto.ceildiv(n, TOK), name="tokens", idx_name="t"):
        valid = (n - i * TOK).min(TOK)
        xt = pypto.view(x, [TOK, KIN], [i * TOK, 0], valid_shape=[valid, KIN])
        y = pypto.matmul(xt, w, pypto.DT_FP32) + bias
        pypto.assemble(pypto.maximum(y, 0.0), [i * TOK, 0], out)


def _linear_call(seed: int, n: int) -> Call:
    r = rng(seed)
    x, w, b = uniform(r, (n, KIN)), uniform(r, (KIN, NOUT)), uniform(r, (1, NOUT))
    ref = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0).astype(F32)
    return Call(linear_dynamic_tokens, (x, w, b, sentinel((n, NOUT))), {3: ref}, Tol(1e-5, 1e-5))


def case_linear_relu_dynamic_tokens_tail() -> KernelCase:
    """37 tokens: two full 16-row tiles and a 5-row tail through matmul (valid M), bias and relu."""
    return KernelCase(calls=[_linear_call(150, 37), _linear_call(151, 16)], spec="§5.8 valid M, §4.1 tail")


HID, FF = 64, 128


@pypto.frontend.jit
def swiglu_mlp(
    x: pypto.Tensor([16, HID], pypto.DT_BF16),
    w_gate: pypto.Tensor([HID, FF], pypto.DT_BF16),
    w_up: pypto.Tensor([HID, FF], pypto.DT_BF16),
    w_down: pypto.Tensor([FF, HID], pypto.DT_BF16),
    out: pypto.Tensor([16, HID], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(16, 64)
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [64, 128])
    gate = pypto.matmul(x, w_gate, pypto.DT_FP32)
    up = pypto.matmul(x, w_up, pypto.DT_FP32)
    act = gate / (pypto.exp(-gate) + 1.0) * up
    h = pypto.cast(act, pypto.DT_BF16)
    pypto.set_cube_tile_shapes([16, 16], [128, 128], [64, 64])
    out[:] = pypto.matmul(h, w_down, pypto.DT_BF16)


def case_swiglu_mlp_bf16() -> KernelCase:
    r = rng(152)
    x = uniform(r, (16, HID), -1, 1, BF16)
    wg, wu = uniform(r, (HID, FF), -0.3, 0.3, BF16), uniform(r, (HID, FF), -0.3, 0.3, BF16)
    wd = uniform(r, (FF, HID), -0.3, 0.3, BF16)
    g = f32(x).astype(np.float64) @ f32(wg).astype(np.float64)
    u = f32(x).astype(np.float64) @ f32(wu).astype(np.float64)
    h = rnd((g / (1 + np.exp(-g)) * u).astype(np.float32), BF16)
    ref = (h.astype(np.float64) @ f32(wd).astype(np.float64)).astype(np.float32).astype(BF16)
    return single(swiglu_mlp, (x, wg, wu, wd, sentinel((16, HID), BF16)), {4: ref}, Tol(2e-2, 2e-2),
                  spec="§5.8 bf16 matmuls (FP32 accumulation, BF16 out), hand-written SiLU")


SEQ, HD = 16, 64


@pypto.frontend.jit
def rope(
    x: pypto.Tensor([SEQ, HD], pypto.DT_FP32),
    cos: pypto.Tensor([SEQ, HD // 2], pypto.DT_FP32),
    sin: pypto.Tensor([SEQ, HD // 2], pypto.DT_FP32),
    out: pypto.Tensor([SEQ, HD], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(SEQ, HD)
    x1 = x[:, 0:HD // 2]
    x2 = x[:, HD // 2:HD]
    out[:] = pypto.concat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=1)


def case_rope_rotate_halves() -> KernelCase:
    r = rng(153)
    x = uniform(r, (SEQ, HD))
    ang = r.uniform(0, np.pi, size=(SEQ, HD // 2))
    cos, sin = np.cos(ang).astype(F32), np.sin(ang).astype(F32)
    x1, x2 = x[:, :HD // 2], x[:, HD // 2:]
    ref = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], 1)
    return single(rope, (x, cos, sin, sentinel((SEQ, HD))), {3: ref}, FP32, spec="§2.3 slices, §4.4 concat")


@pypto.frontend.jit
def block_prefix_sum(
    x: pypto.Tensor([32, 32], pypto.DT_FP32),
    out: pypto.Tensor([32, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    pypto.assemble(pypto.view(x, [8, 32], [0, 0]) * 1.0, [0, 0], out)
    for i in pypto.loop(1, 4):
        prev = pypto.view(out, [8, 32], [(i - 1) * 8, 0])
        cur = pypto.view(x, [8, 32], [i * 8, 0])
        pypto.assemble(prev + cur, [i * 8, 0], out)


def case_block_prefix_sum_reads_previous_iteration_output() -> KernelCase:
    x = uniform(rng(154), (32, 32))
    ref = np.cumsum(x.reshape(4, 8, 32), axis=0, dtype=np.float32).reshape(32, 32)
    return single(block_prefix_sum, (x, sentinel(x.shape)), {1: ref}, FP32,
                  spec="§3.1 sequential iterations: assemble of k visible to views in k+1 through GM")


@pypto.frontend.jit
def matmul_int8(
    a: pypto.Tensor([16, 64], pypto.DT_INT8),
    b: pypto.Tensor([64, 32], pypto.DT_INT8),
    c: pypto.Tensor([16, 32], pypto.DT_INT32),
):
    pypto.set_vec_tile_shapes(16, 32)
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    c[:] = pypto.matmul(a, b, pypto.DT_INT32)


def case_matmul_int8_to_int32() -> KernelCase:
    r = rng(155)
    a = r.integers(-128, 128, size=(16, 64)).astype(np.int8)
    b = r.integers(-128, 128, size=(64, 32)).astype(np.int8)
    ref = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    return single(matmul_int8, (a, b, np.zeros((16, 32), np.int32)), {2: ref}, EXACT,
                  spec="§5.8 INT8 x INT8 -> INT32 accumulation")


@pypto.frontend.jit
def topk_values(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    out: pypto.Tensor([8, 4], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    vals, idx = pypto.topk(x, 4, -1, True)
    out[:] = vals


def case_topk_largest_values() -> KernelCase:
    r = rng(156)
    x = np.stack([r.permutation(64) for _ in range(8)]).astype(F32) / 8.0  # distinct values per row
    ref = -np.sort(-x, axis=-1)[:, :4]
    return single(topk_values, (x, sentinel((8, 4))), {1: np.ascontiguousarray(ref)}, EXACT,
                  spec="§5.6 topk (values, sorted descending)")


TR, TC = 16, 64


@pypto.frontend.jit
def adamw_step(
    param: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
    grad: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
    exp_avg: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
    exp_avg_sq: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    step: int,
):
    rows, cols = param.shape
    bc1 = 1.0 - beta1 ** step
    bc2 = 1.0 - beta2 ** step
    pypto.set_vec_tile_shapes(TR, TC)
    for i in pypto.loop((rows + TR - 1) // TR, name="row_tiles", idx_name="i"):
        for j in pypto.loop((cols + TC - 1) // TC, name="col_tiles", idx_name="j"):
            vr = (rows - i * TR).min(TR)
            vc = (cols - j * TC).min(TC)
            p = pypto.view(param, [TR, TC], [i * TR, j * TC], valid_shape=[vr, vc])
            g = pypto.view(grad, [TR, TC], [i * TR, j * TC], valid_shape=[vr, vc])
            m = pypto.view(exp_avg, [TR, TC], [i * TR, j * TC], valid_shape=[vr, vc])
            v = pypto.view(exp_avg_sq, [TR, TC], [i * TR, j * TC], valid_shape=[vr, vc])
            m_new = m * beta1 + g * (1.0 - beta1)
            v_new = v * beta2 + g * g * (1.0 - beta2)
            denom = pypto.sqrt(v_new / bc2) + eps
            p_new = p - (m_new / bc1 / denom + p * weight_decay) * lr
            pypto.assemble(m_new, [i * TR, j * TC], exp_avg)
            pypto.assemble(v_new, [i * TR, j * TC], exp_avg_sq)
            pypto.assemble(p_new, [i * TR, j * TC], param)


def case_adamw_step_2d_tails_in_place() -> KernelCase:
    """37 x 150: tails on both axes; param, exp_avg, exp_avg_sq are read and updated in place (gym ApplyAdamWV2)."""
    r = rng(157)
    shape = (37, 150)
    p, g = uniform(r, shape), uniform(r, shape)
    m, v = uniform(r, shape, -0.1, 0.1), uniform(r, shape, 0.0, 0.01)
    hp = {"lr": 1e-2, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01, "step": 3}
    p64, g64, m64, v64 = (a.astype(np.float64) for a in (p, g, m, v))
    m_new = m64 * hp["beta1"] + g64 * (1 - hp["beta1"])
    v_new = v64 * hp["beta2"] + g64 * g64 * (1 - hp["beta2"])
    bc1, bc2 = 1 - hp["beta1"] ** hp["step"], 1 - hp["beta2"] ** hp["step"]
    p_new = p64 - (m_new / bc1 / (np.sqrt(v_new / bc2) + hp["eps"]) + p64 * hp["weight_decay"]) * hp["lr"]
    expect = {0: p_new.astype(F32), 2: m_new.astype(F32), 3: v_new.astype(F32)}
    return single(adamw_step, (p, g, m, v), expect, Tol(1e-5, 1e-4), kwargs=hp,
                  spec="§4.1 2-D tails, in-place read-modify-write of GM arguments, float/int params")
