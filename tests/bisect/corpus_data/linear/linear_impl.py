"""Scaled linear layer: y = alpha * x @ w^T + bias, 32-row tiles of x, fp32."""

import numpy as np
import pypto

T = 32
K = 32
N = 32
ALPHA = 0.5


@pypto.frontend.jit
def linear_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_FP32),
    w: pypto.Tensor([N, K], pypto.DT_FP32),
    bias: pypto.Tensor([1, N], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([T, T], [K, K], [N, N])
    pypto.set_vec_tile_shapes(T, N)
    m = x.shape[0]
    wt = pypto.view(w, [N, K], [0, 0])
    bt = pypto.view(bias, [1, N], [0, 0])
    for i in pypto.loop(pypto.ceildiv(m, T)):
        valid = (m - i * T).min(T)
        xt = pypto.view(x, [T, K], [i * T, 0], valid_shape=[valid, K])
        mm = pypto.matmul(xt, wt, pypto.DT_FP32, a_trans=False, b_trans=True)
        ys = mm * ALPHA
        yt = ys + bt
        pypto.assemble(yt, [i * T, 0], y)


def linear_wrapper(x, w, bias):
    y = np.zeros((x.shape[0], w.shape[0]), dtype=x.dtype)
    linear_kernel(x, w, bias, y)
    return y
