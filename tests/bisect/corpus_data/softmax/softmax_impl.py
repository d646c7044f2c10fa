"""Scaled row softmax: 16-row tiles over a dynamic row count, fp32."""

import numpy as np
import pypto

T = 16
D = 64
SCALE = 0.125


@pypto.frontend.jit
def softmax_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, D)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, T)):
        valid = (n - i * T).min(T)
        xt = pypto.view(x, [T, D], [i * T, 0], valid_shape=[valid, D])
        xs = xt * SCALE
        m = pypto.amax(xs, -1, keepdim=True)
        z = xs - m
        e = pypto.exp(z)
        s = pypto.sum(e, -1, keepdim=True)
        yt = e / s
        pypto.assemble(yt, [i * T, 0], y)


def softmax_wrapper(x):
    y = np.zeros(x.shape, dtype=x.dtype)
    softmax_kernel(x, y)
    return y
