"""s = (2q * 0.125) @ k^T in row tiles of q; the scale on its own statement, the matmul reading it (bisect test op)."""

import numpy as np
import pypto

N, D, T = 32, 16, 16


@pypto.frontend.jit
def scaled_kernel(
    q: pypto.Tensor([N, D], pypto.DT_BF16),
    k: pypto.Tensor([N, D], pypto.DT_BF16),
    s: pypto.Tensor([N, N], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, N)
    pypto.set_cube_tile_shapes([T, T], [D, D], [N, N])
    k_f = pypto.cast(k, pypto.DT_FP32)
    for i in pypto.loop(N // T, name="LOOP", idx_name="i"):
        q_t = pypto.cast(pypto.view(q, [T, D], [i * T, 0]), pypto.DT_FP32)
        q_n = pypto.mul(q_t, 2.0)
        q_s = pypto.mul(q_n, 0.125)
        s_t = pypto.matmul(q_s, k_f, pypto.DT_FP32, b_trans=True)
        pypto.assemble(s_t, [i * T, 0], s)


def scaled_wrapper(q, k):
    s = np.zeros((q.shape[0], q.shape[0]), dtype=np.float32)
    scaled_kernel(q, k, s)
    return s
