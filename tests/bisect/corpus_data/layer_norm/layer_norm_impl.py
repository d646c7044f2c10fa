"""LayerNorm kernel: bf16 in/out, fp32 inside, 16-row tiles over a dynamic row count."""

import numpy as np
import pypto

T = 16
D = 64
EPS = 1e-5


@pypto.frontend.jit
def layer_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    gamma: pypto.Tensor([1, D], pypto.DT_FP32),
    beta: pypto.Tensor([1, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(T, D)
    n = x.shape[0]
    g = pypto.view(gamma, [1, D], [0, 0])
    b = pypto.view(beta, [1, D], [0, 0])
    for i in pypto.loop(pypto.ceildiv(n, T)):
        valid = (n - i * T).min(T)
        xt = pypto.view(x, [T, D], [i * T, 0], valid_shape=[valid, D])
        xf = pypto.cast(xt, pypto.DT_FP32)
        s = pypto.sum(xf, -1, keepdim=True)
        mean = s * (1.0 / D)
        d = xf - mean
        d2 = d * d
        vs = pypto.sum(d2, -1, keepdim=True)
        var = vs * (1.0 / D)
        rstd = pypto.rsqrt(var + EPS)
        xn = d * rstd
        yg = xn * g
        yf = yg + b
        yb = pypto.cast(yf, pypto.DT_BF16)
        pypto.assemble(yb, [i * T, 0], y)


def layer_norm_wrapper(x, gamma, beta):
    y = np.zeros(x.shape, dtype=x.dtype)
    layer_norm_kernel(x, gamma, beta, y)
    return y
