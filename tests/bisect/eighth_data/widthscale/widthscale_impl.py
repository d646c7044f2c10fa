"""Rows scaled by 2 in tiles of 8 rows; the tile width is a local constant (the gym rms_norm's ``W = 256``)."""

import numpy as np
import pypto

ROWS = 8


@pypto.frontend.jit
def widthscale_kernel(
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    out: pypto.Tensor([16, 64], pypto.DT_FP32),
):
    W = 64
    n = x.shape[0]
    pypto.set_vec_tile_shapes(ROWS, W)
    for i in pypto.loop(n // ROWS, name="r_loop"):
        x_t = pypto.view(x, [ROWS, W], [i * ROWS, 0])
        y = pypto.mul(x_t, 2.0)
        pypto.assemble(y, [i * ROWS, 0], out)


def widthscale_wrapper(x):
    out = np.zeros_like(x)
    widthscale_kernel(x, out)
    return out
