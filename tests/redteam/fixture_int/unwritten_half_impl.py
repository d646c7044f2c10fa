"""half_mask, int32: the kernel computes 3x+1 on the kept columns and never writes the masked half (the output is
torch.empty). On the device an uninitialised int32 buffer is 0 - the golden's value there - so verify sees the
right answer; a user gets whatever torch.empty held."""

import pypto
import torch

ROW_TILE = 16
COLS = 64
KEEP = 32


@pypto.frontend.jit
def mask_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_INT32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_INT32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, KEEP)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, KEEP], [i * ROW_TILE, 0], valid_shape=[valid, KEEP])  # [ROW_TILE, KEEP]
        pypto.assemble(xt * 3 + 1, [i * ROW_TILE, 0], y)


def half_mask_wrapper(x):
    y = torch.empty_like(x)
    mask_kernel(x, y)
    return y
