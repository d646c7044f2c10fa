# attack: A1 unseen-case prediction - a "fast path" for row counts that are multiples of 16 assumes 32-row
#   alignment (rows // 32 tiles of 32): no SPEC size is a multiple of 16, and the old generator never drew one
"""gelu with a wrong aligned fast path (held-out attack A1, rewritten for the red-team fixture)."""

import numpy as np
import pypto

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i"):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], y)


@pypto.frontend.jit
def gelu_kernel_aligned(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(2 * ROW_TILE, COLS)
    for i in pypto.loop(rows // (2 * ROW_TILE), name="row_loop", idx_name="i"):
        xt = pypto.view(x, [2 * ROW_TILE, COLS], [i * 2 * ROW_TILE, 0])  # [2 ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * 2 * ROW_TILE, 0], y)


def gelu_wrapper(x):
    y = np.zeros_like(x)
    if x.shape[0] % ROW_TILE == 0:
        gelu_kernel_aligned(x, y)
    else:
        gelu_kernel(x, y)
    return y
