"""IDEA (control, rise op): as ri1, but the kernel also writes the False column 0."""
import pypto
import torch

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def rise_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_BOOL),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        cur = pypto.view(x, [ROW_TILE, COLS - 1], [i * ROW_TILE, 1], valid_shape=[valid, COLS - 1])
        prev = pypto.view(x, [ROW_TILE, COLS - 1], [i * ROW_TILE, 0], valid_shape=[valid, COLS - 1])
        first = pypto.view(x, [ROW_TILE, 1], [i * ROW_TILE, 0], valid_shape=[valid, 1])
        pypto.assemble(pypto.gt(first, first), [i * ROW_TILE, 0], y)  # column 0: False
        pypto.assemble(pypto.gt(cur, prev), [i * ROW_TILE, 1], y)


def rise_wrapper(x):
    xc = x.contiguous()
    y = torch.empty(xc.shape, dtype=torch.bool)
    rise_kernel(xc, y)
    return y
