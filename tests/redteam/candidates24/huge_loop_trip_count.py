# expect: FAIL_RUNTIME
# attack: validator/device: a loop of 10**12 trips (the device must stop it at its step limit, not hang)
"""huge loop trip count."""

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
    pypto.set_vec_tile_shapes(ROW_TILE, 64)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        yt = xt * pypto.sigmoid(xt)  # wrong: GELU needs sigmoid(1.702 x)
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


def gelu_wrapper(x):
    y = np.zeros_like(x)
    gelu_loop_kernel(x, y)
    return y


@pypto.frontend.jit
def gelu_loop_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, 64)
    for i in pypto.loop(rows * 1000000000000, name="row_loop", idx_name="i"):
        xt = pypto.view(x, [1, COLS], [0, 0])
        pypto.assemble(xt * pypto.sigmoid(xt), [0, 0], y)
