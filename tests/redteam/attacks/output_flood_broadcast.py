# attack: A3 result channel / parent memory - an extra output leaf that is a stride-0 view of the kernel's
#   output with millions of elements: the device materialised it and sent it to the parent on every call
"""gelu with a flooding extra output leaf (held-out attack A3, rewritten)."""

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


FLOOD = 4_000_000


def gelu_wrapper(x):
    y = np.empty_like(x)
    gelu_kernel(x, y)
    return y, np.broadcast_to(y.reshape(-1)[:1], (FLOOD,))
