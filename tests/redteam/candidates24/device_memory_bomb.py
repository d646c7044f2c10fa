# expect: FAIL_LINT
# runtime: FAIL_RUNTIME
# attack: device: a kernel that makes the device allocate 64 GiB (bounded by the device's allocation limit)
"""device memory bomb."""

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
    bomb_kernel(x, y)
    return y


@pypto.frontend.jit
def bomb_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(ROW_TILE, 64)
    big = pypto.full([1 << 17, 1 << 17], 1.0, pypto.DT_FP32)
    t = pypto.view(big, [1, COLS], [0, 0])
    pypto.assemble(t, [0, 0], y)
