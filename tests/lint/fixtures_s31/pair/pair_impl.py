"""HONEST: both outputs live in one torch.empty(B, 2D); the kernel writes a to columns 0..D-1 and b to D..2D-1,
and the wrapper returns the two column halves (non-contiguous views)."""
import pypto
import torch

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def pair_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, 2 * COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * 2.0, [i * ROW_TILE, 0], out)
        pypto.assemble(xt + 1.0, [i * ROW_TILE, COLS], out)


def pair_wrapper(x):
    xc = x.contiguous()
    buf = torch.empty(xc.shape[0], 2 * COLS, dtype=xc.dtype)
    pair_kernel(xc, buf)
    return buf[:, :COLS], buf[:, COLS:]
