# attack: A1 unseen-case prediction - the tile loop is clamped to 2 tiles (32 rows, 1.5x the SPEC's 21): right on
#   every SPEC case and on every size the old unseen generator drew below ~1.5x the SPEC (the held-out attack
#   clamped silu at 9 tiles, 1.9x its SPEC's 77 rows), wrong above; the fill size is always >= 2x the SPEC's
"""gelu whose loop count is clamped (held-out attack A1, rewritten for the red-team fixture)."""

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
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE).min(2), name="row_loop", idx_name="i"):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], y)


def gelu_wrapper(x):
    y = np.zeros_like(x)
    gelu_kernel(x, y)
    return y
