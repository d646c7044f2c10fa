"""out = (q_s @ k^T * decay) @ v over one 16-row chunk: the scaled query, the score matmul, the decay mask and the
value matmul each on their own statement, as gated_delta_rule's ``qkt`` / ``attn_chunk`` (bisect test op)."""

import numpy as np
import pypto

L, D = 16, 16


@pypto.frontend.jit
def decayattn_kernel(
    q: pypto.Tensor([L, D], pypto.DT_FP32),
    k: pypto.Tensor([L, D], pypto.DT_FP32),
    v: pypto.Tensor([L, D], pypto.DT_FP32),
    g: pypto.Tensor([L, 1], pypto.DT_FP32),
    lower: pypto.Tensor([L, L], pypto.DT_FP32),
    out: pypto.Tensor([L, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(L, L)
    pypto.set_cube_tile_shapes([L, L], [L, L], [L, L])
    q_n = pypto.mul(q, 2.0)
    q_s = pypto.mul(q_n, 0.125)
    g_t = pypto.transpose(g, 0, 1)
    g_diff = pypto.mul(pypto.sub(g, g_t), lower)
    decay_mask = pypto.mul(pypto.exp(g_diff), lower)
    qkt = pypto.matmul(q_s, k, pypto.DT_FP32, b_trans=True)
    attn_chunk = pypto.mul(qkt, decay_mask)
    o = pypto.matmul(attn_chunk, v, pypto.DT_FP32)
    out[:] = o


def decayattn_wrapper(q, k, v, g):
    out = np.zeros_like(q)
    lower = np.tril(np.ones((q.shape[0], q.shape[0]), dtype=np.float32))
    decayattn_kernel(q, k, v, g, lower, out)
    return out
