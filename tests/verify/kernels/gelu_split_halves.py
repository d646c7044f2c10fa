"""gelu whose one kernel call writes the two halves of the output through two arguments (A14, honest)."""

import numpy as np
import pypto

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    top: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    bottom: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    h = top.shape[0]
    rest = bottom.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(h, ROW_TILE), name="top_loop", idx_name="i", unroll_list=[1]):
        valid = (h - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], top)
    for j in pypto.loop(pypto.ceildiv(rest, ROW_TILE), name="bottom_loop", idx_name="j", unroll_list=[1]):
        valid = (rest - j * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [h + j * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [j * ROW_TILE, 0], bottom)


def gelu_wrapper(x):
    y = np.zeros_like(x)
    h = x.shape[0] // 2
    gelu_kernel(x, y[:h], y[h:])
    return y
