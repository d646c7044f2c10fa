# attack: A3b device memory - three stride-0 output views of 1.4 GB each: the device kept every leaf's bytes
#   before checking the leaf count, ran out of memory, and the verdict became ERROR ("infrastructure")
"""gelu whose outputs exhaust the device's memory (held-out attack A3b, rewritten)."""

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


FLOOD = 350_000_000


def gelu_wrapper(x):
    y = np.empty_like(x)
    gelu_kernel(x, y)
    b = np.broadcast_to(y.reshape(-1)[:1], (FLOOD,))
    return y, b, b, b
