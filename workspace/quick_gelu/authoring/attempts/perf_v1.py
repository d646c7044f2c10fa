"""quick_gelu: y = x * sigmoid(1.702 x) = x / (1 + exp(-1.702 x)), fp32, one row tile per loop iteration.

Performance variant 1: 16-row tiles (16 tasks for B = 256): more tiles to spread over the vector cores.
The rows are tiled as [TILE, D] views with a valid_shape for the tail (B = 77); the whole row (D = 512)
stays in one tile.
"""

import numpy as np
import pypto

TILE = 16
D = 512


@pypto.frontend.jit
def quick_gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        z = pypto.mul(xt, -1.702)                                   # [TILE, D]
        e = pypto.exp(z)                                            # [TILE, D]
        yt = pypto.div(xt, pypto.add(e, 1.0))                       # [TILE, D]
        pypto.assemble(yt, [i * TILE, 0], y)


def quick_gelu_wrapper(x):
    y = np.zeros_like(x)
    quick_gelu_kernel(x, y)
    return y
