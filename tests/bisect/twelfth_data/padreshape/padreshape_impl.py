"""y = 2x on the transpose of a row tile of 8 holding the 6 rows (the wrapper pads the rows to 8)."""

import numpy as np
import pypto

TR = 8


@pypto.frontend.jit
def padreshape_kernel(
    x: pypto.Tensor([TR, 4], pypto.DT_FP32),
    y: pypto.Tensor([TR, 4], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(TR, 8)
    t = pypto.view(x, [TR, 4], [0, 0], valid_shape=[6, 4])
    tt = pypto.transpose(t, 1, 0)
    st = pypto.mul(tt, 2.0)
    back = pypto.transpose(st, 1, 0)
    pypto.assemble(back, [0, 0], y)


def padreshape_wrapper(x):
    xp = np.zeros((TR, 4), dtype=x.dtype)
    xp[: x.shape[0]] = x
    yp = np.zeros_like(xp)
    padreshape_kernel(xp, yp)
    return yp[: x.shape[0]]
