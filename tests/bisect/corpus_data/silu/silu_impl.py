"""SiLU kernel: [16, 32] tiles over rows and columns, fp32."""

import numpy as np
import pypto

T = 16
C = 32
D = 64


@pypto.frontend.jit
def silu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, C)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, T)):
        valid = (n - i * T).min(T)
        for j in pypto.loop(D // C):
            xt = pypto.view(x, [T, C], [i * T, j * C], valid_shape=[valid, C])
            nx = pypto.neg(xt)
            e = pypto.exp(nx)
            den = e + 1.0
            yt = xt / den
            pypto.assemble(yt, [i * T, j * C], y)


def silu_wrapper(x):
    y = np.zeros(x.shape, dtype=x.dtype)
    silu_kernel(x, y)
    return y
