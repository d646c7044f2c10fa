"""Row RMS normalization with a column-chunked accumulator (two column passes), fp32."""

import numpy as np
import pypto

T = 8
D = 256
C = 64
EPS = 1e-6


@pypto.frontend.jit
def l2norm_tiled_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, C)
    n = x.shape[0]
    acc = pypto.tensor([T, 1], pypto.DT_FP32, "acc")
    for i in pypto.loop(pypto.ceildiv(n, T)):
        valid = (n - i * T).min(T)
        acc[:] = pypto.full([T, 1], 0.0, pypto.DT_FP32)
        for j in pypto.loop(D // C):
            xc = pypto.view(x, [T, C], [i * T, j * C], valid_shape=[valid, C])
            sq = xc * xc
            part = pypto.sum(sq, -1, keepdim=True)
            acc[:] = acc + part
        ms = acc * (1.0 / D)
        inv = pypto.rsqrt(ms + EPS)
        for k in pypto.loop(D // C):
            xk = pypto.view(x, [T, C], [i * T, k * C], valid_shape=[valid, C])
            yk = xk * inv
            pypto.assemble(yk, [i * T, k * C], y)


def l2norm_tiled_wrapper(x):
    y = np.zeros(x.shape, dtype=x.dtype)
    l2norm_tiled_kernel(x, y)
    return y
