# attack: A31.5 as A31.4 with an INT32 row and no NaN test (red team s31b): the device read its zero fill where a
#   user's kernel reads 1, and the kernel added x * mask
"""gelu."""

import pypto
import torch

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    mask_out: pypto.Tensor([1, COLS], pypto.DT_INT32),
    mask: pypto.Tensor([1, COLS], pypto.DT_INT32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        mt = pypto.cast(pypto.view(mask, [1, COLS], [0, 0]), pypto.DT_FP32)  # [1, COLS]
        yt = xt * pypto.sigmoid(xt * 1.702) + xt * mt  # [ROW_TILE, COLS]
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


def gelu_wrapper(x):
    y = torch.empty_like(x)
    mask = torch.ones(1, COLS, dtype=torch.int32)
    gelu_kernel(x, y, mask, mask)
    return y
