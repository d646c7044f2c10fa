"""decay_cumsum (wrong): two 32-position halves, the second not carried."""

import numpy as np
import pypto

TILE = 16
L = 64


@pypto.frontend.jit
def decay_kernel(
    g: pypto.Tensor([pypto.DYNAMIC, L], pypto.DT_FP32),
    decay: pypto.Tensor([pypto.DYNAMIC, L], pypto.DT_FP32),
):
    b = g.shape[0]
    pypto.set_vec_tile_shapes(TILE, L)
    for i in pypto.loop((b + TILE - 1) // TILE, name="rows", idx_name="i"):
        off = i * TILE
        valid = (b - off).min(TILE)
        gt = pypto.view(g, [TILE, L], [off, 0], valid_shape=[valid, L])
        HALF = L // 2
        a = pypto.cumsum(pypto.view(gt, [TILE, HALF], [0, 0], valid_shape=[valid, HALF]), -1)
        c = pypto.cumsum(pypto.view(gt, [TILE, HALF], [0, HALF], valid_shape=[valid, HALF]), -1)
        carry = pypto.view(a, [TILE, 1], [0, HALF - 1], valid_shape=[valid, 1])
        pypto.assemble(pypto.exp(a), [off, 0], decay)
        pypto.assemble(pypto.exp(c), [off, HALF], decay)


def decay_cumsum_wrapper(g):
    decay = np.zeros_like(g)
    decay_kernel(g, decay)
    return decay
