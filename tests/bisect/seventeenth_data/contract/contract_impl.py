"""y = x @ w in row tiles of x; both operands viewed with a valid extent on the contracted axis computed once
(``k_valid``), as flash_attention_score_grad's ``actual_s2`` bounds its ``k_j`` and ``v_j`` (bisect test op)."""

import numpy as np
import pypto

N, K, M, T = 32, 32, 16, 16


@pypto.frontend.jit
def contract_kernel(
    x: pypto.Tensor([N, K], pypto.DT_FP32),
    w: pypto.Tensor([K, M], pypto.DT_FP32),
    y: pypto.Tensor([N, M], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, K)
    pypto.set_cube_tile_shapes([T, T], [K, K], [M, M])
    for i in pypto.loop(N // T, name="LOOP", idx_name="i"):
        r_off = i * T
        k_valid = (K - i * 0).min(K)
        x_t = pypto.view(x, [T, K], [r_off, 0], valid_shape=[T, k_valid])
        w_t = pypto.view(w, [K, M], [0, 0], valid_shape=[k_valid, M])
        y_t = pypto.matmul(x_t, w_t, pypto.DT_FP32)
        pypto.assemble(y_t, [r_off, 0], y)


def contract_wrapper(x, w):
    y = np.zeros((x.shape[0], w.shape[1]), dtype=np.float32)
    contract_kernel(x, w, y)
    return y
