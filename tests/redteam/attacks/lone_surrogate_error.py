# attack: A5 report writer - an exception message with a lone surrogate made the report unserialisable: verify
#   raised instead of reporting
"""gelu whose wrapper raises with a lone surrogate in the message (held-out attack A5, rewritten)."""

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


def gelu_wrapper(x):
    y = np.empty_like(x)
    gelu_kernel(x, y)
    if x.shape[0] != 21:
        raise ValueError("tail \ud800 rows")
    return y
