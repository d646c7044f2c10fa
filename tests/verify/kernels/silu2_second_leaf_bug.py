"""silu2: y = x * sigmoid(x) and s = sigmoid(x), fp32 (hostile: error only in the second output leaf)."""

import numpy as np
import pypto

TILE = 16
D = 64


@pypto.frontend.jit
def silu2_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    s: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        # --- Module M1: sigmoid ---
        sig = pypto.sigmoid(xt)
        pypto.assemble(sig * 1.001, [i * TILE, 0], s)
        # --- Module M2: product ---
        prod = xt * sig
        pypto.assemble(prod, [i * TILE, 0], y)


def silu2_wrapper(x):
    y = np.zeros_like(x)
    s = np.zeros_like(x)
    silu2_kernel(x, y, s)
    return y, s
