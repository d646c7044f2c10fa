"""RMSNorm kernel: 16-row tiles over a dynamic row count, fp32."""

import numpy as np
import pypto

T = 16
D = 64
EPS = 1e-6


@pypto.frontend.jit
def rms_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    gamma: pypto.Tensor([1, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, D)
    n = x.shape[0]
    g = pypto.view(gamma, [1, D], [0, 0])
    for i in pypto.loop(pypto.ceildiv(n, T)):
        valid = (n - i * T).min(T)
        xt = pypto.view(x, [T, D], [i * T, 0], valid_shape=[valid, D])
        xf = pypto.cast(xt, pypto.DT_FP32)
        sq = xf * xf
        ss = pypto.sum(sq, -1, keepdim=True)
        ms = ss * (1.0 / D)
        inv = pypto.rsqrt(ms + EPS)
        xn = xf * inv
        yt = xn * g
        pypto.assemble(yt, [i * T, 0], y)


def rms_norm_wrapper(x, gamma):
    y = np.zeros(x.shape, dtype=x.dtype)
    rms_norm_kernel(x, gamma, y)
    return y
