"""y = 2x + 1 on a [4, 8] tile valid [4, 4], split into lane groups [4, 2, 4] (the padding is the second group)."""

import numpy as np
import pypto


@pypto.frontend.jit
def padsplit_kernel(
    x: pypto.Tensor([4, 8], pypto.DT_FP32),
    y: pypto.Tensor([4, 2, 4], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, 8)
    t = pypto.view(x, [4, 8], [0, 0], valid_shape=[4, 4])
    g = pypto.reshape(t, [4, 2, 4])
    pypto.set_vec_tile_shapes(4, 2, 4)
    a = pypto.mul(g, 2.0)
    b = pypto.add(a, 1.0)
    pypto.assemble(b, [0, 0, 0], y)


def padsplit_wrapper(x):
    xp = np.zeros((4, 8), dtype=x.dtype)
    xp[:, :4] = x
    yp = np.zeros((4, 2, 4), dtype=x.dtype)
    padsplit_kernel(xp, yp)
    return np.ascontiguousarray(yp[:, 0, :])
