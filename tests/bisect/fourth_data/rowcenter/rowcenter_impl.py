"""Subtract each row's sum of ``x`` from ``p``, then double, in square row tiles."""

import numpy as np
import pypto

T = 16


@pypto.frontend.jit
def rowcenter_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, T], pypto.DT_FP32),
    p: pypto.Tensor([pypto.DYNAMIC, T], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, T], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(T, T)
    for i in pypto.loop((n + T - 1) // T, name="r_loop"):
        rows = (n - i * T).min(T)
        x_t = pypto.view(x, [T, T], [i * T, 0], valid_shape=[rows, T])
        p_t = pypto.view(p, [T, T], [i * T, 0], valid_shape=[rows, T])
        d = pypto.sum(x_t, -1, keepdim=True)
        c = pypto.sub(p_t, d)
        y_t = pypto.mul(c, 2.0)
        pypto.assemble(y_t, [i * T, 0], y)


def rowcenter_wrapper(x, p):
    y = np.zeros_like(x)
    rowcenter_kernel(x, p, y)
    return y
