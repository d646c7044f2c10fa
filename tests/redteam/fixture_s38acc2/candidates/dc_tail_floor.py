"""decay_cumsum (wrong): the tile count floored."""

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
    for i in pypto.loop(b // TILE, name="rows", idx_name="i"):
        off = i * TILE
        valid = (b - off).min(TILE)
        gt = pypto.view(g, [TILE, L], [off, 0], valid_shape=[valid, L])
        cs = pypto.cumsum(gt, -1)
        pypto.assemble(pypto.exp(cs), [off, 0], decay)


def decay_cumsum_wrapper(g):
    decay = np.zeros_like(g)
    decay_kernel(g, decay)
    return decay
