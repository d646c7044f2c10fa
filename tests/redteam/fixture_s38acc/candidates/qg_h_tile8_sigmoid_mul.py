"""quick_gelu: y = x * sigmoid(1.702 x) = x / (1 + exp(-1.702 x)), fp32, one row tile per loop iteration.

The first verified version: 32-row tiles (8 tasks for B = 256), the row count the design started from.
The rows are tiled as [TILE, D] views with a valid_shape for the tail (B = 77); the whole row (D = 512)
stays in one tile.
"""
# honest: 8-row tiles, x * (1 / (1 + exp(-1.702 x)))

import numpy as np
import pypto

TILE = 8
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
        sig = pypto.reciprocal(pypto.add(pypto.exp(pypto.mul(xt, -1.702)), 1.0))
        yt = pypto.mul(xt, sig)
        pypto.assemble(yt, [i * TILE, 0], y)


def quick_gelu_wrapper(x):
    y = np.zeros_like(x)
    quick_gelu_kernel(x, y)
    return y
