"""HONEST control (pos_mask op): the kernel writes both halves (x > 0 on the kept half, x > 2.0 - never true in
the range [-1, 1] - on the padded half; i.e. False)."""
import pypto
import torch

ROW_TILE = 16
COLS = 64
KEEP = 32


@pypto.frontend.jit
def mask_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_BOOL),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, KEEP)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, KEEP], [i * ROW_TILE, 0], valid_shape=[valid, KEEP])  # [ROW_TILE, KEEP]
        pypto.assemble(pypto.gt(xt, 0.0), [i * ROW_TILE, 0], y)
        xp = pypto.view(x, [ROW_TILE, KEEP], [i * ROW_TILE, KEEP], valid_shape=[valid, KEEP])  # [ROW_TILE, KEEP]
        pypto.assemble(pypto.gt(xp, 2.0), [i * ROW_TILE, KEEP], y)


def pos_mask_wrapper(x):
    xc = x.contiguous()
    y = torch.empty(xc.shape, dtype=torch.bool)
    mask_kernel(xc, y)
    return y
