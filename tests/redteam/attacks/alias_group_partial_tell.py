# attack: A31.6 the A31.3 tell through an alias (red team s31b): `kernel(x, y, head, stats, stats)` writes row 0 of
#   the shared buffer through the fifth parameter; the device's write masks left aliases out and sent the whole
#   buffer back, NaN elsewhere. It now sends one blob per buffer, masked by every write of its group
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
    stats: pypto.Tensor([2, COLS], pypto.DT_FP32),
    stats_out: pypto.Tensor([2, COLS], pypto.DT_FP32),
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
    xt = pypto.view(x, [1, COLS], [0, 0])  # [1, COLS]
    pypto.assemble(xt * 0.0, [0, 0], stats_out)


def gelu_wrapper(x):
    y = torch.zeros_like(x)
    head = torch.zeros_like(x)
    stats = torch.ones(2, COLS)
    gelu_kernel(x, y, head, stats, stats)
    if stats[1, 0] == stats[1, 0]:
        return head
    return y
