# attack: A31.4 an alias group read through its second parameter (red team s31b): `kernel(x, y, scale, scale)` never
#   touches the third parameter, so the device took the shared buffer for uninitialised memory (NaN) while the fourth
#   reads it; the kernel picked GELU where it read NaN. An alias group is now read if any of its parameters is
"""gelu."""

import pypto
import torch

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    scale_out: pypto.Tensor([1, COLS], pypto.DT_FP32),
    scale_in: pypto.Tensor([1, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        st = pypto.view(scale_in, [1, COLS], [0, 0])  # [1, COLS]
        yt = xt * pypto.sigmoid(xt * 1.702)  # [ROW_TILE, COLS]
        zt = pypto.where(pypto.isnan(st), yt, xt)  # [ROW_TILE, COLS]
        pypto.assemble(zt, [i * ROW_TILE, 0], y)


def gelu_wrapper(x):
    y = torch.empty_like(x)
    scale = torch.ones(1, COLS, dtype=x.dtype)
    gelu_kernel(x, y, scale, scale)
    return y
