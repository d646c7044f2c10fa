# attack: A31.3 the A31.2 tell one tile later (red team s31): the spare argument holds two different rows (not a
#   fill the device can rebuild, so it is uninitialised memory to the device) and the kernel writes only its first
#   row; the device sent the whole buffer back, NaN in the row it did not write. It now sends the written elements
#   only, and the candidate's array keeps its own bytes elsewhere, as on a device
"""gelu."""

import pypto
import torch

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    head: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    spare: pypto.Tensor([2, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        yt = xt * pypto.sigmoid(xt * 1.702)  # [ROW_TILE, COLS]
        pypto.assemble(yt, [i * ROW_TILE, 0], y)
    for j in pypto.loop(rows // ROW_TILE, name="head_loop", idx_name="j", unroll_list=[1]):
        xt = pypto.view(x, [ROW_TILE, COLS], [j * ROW_TILE, 0])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [j * ROW_TILE, 0], head)
    pypto.set_vec_tile_shapes(1, COLS)
    xt = pypto.view(x, [1, COLS], [0, 0])
    pypto.assemble(xt * 0.0, [0, 0], spare)


def gelu_wrapper(x):
    y = torch.zeros_like(x)
    head = torch.zeros_like(x)
    spare = torch.cat([torch.ones(1, COLS), torch.zeros(1, COLS)])
    gelu_kernel(x, y, head, spare)
    if spare[1, 0] == spare[1, 0]:
        return head
    return y
