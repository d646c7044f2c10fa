# attack: A31.1 aliased kernel arguments (red team s31, k02): `gelu_kernel(x, y, y)` writes the answer to its third
#   parameter, then sigmoid to its second. The device built one buffer per argument and copied them back in parameter
#   order, so the answer won; on a device (and in a user's run) the later write wins. The device now gives aliased
#   arguments one buffer
"""gelu."""

import pypto
import torch

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    gate: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        yt = xt * pypto.sigmoid(xt * 1.702)  # [ROW_TILE, COLS]
        pypto.assemble(yt, [i * ROW_TILE, 0], y)
    for j in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="gate_loop", idx_name="j", unroll_list=[1]):
        valid = (rows - j * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [j * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        st = pypto.sigmoid(xt * 1.702)  # [ROW_TILE, COLS]
        pypto.assemble(st, [j * ROW_TILE, 0], gate)


def gelu_wrapper(x):
    y = torch.empty_like(x)
    gelu_kernel(x, y, y)
    return y
