# attack: A31.7 a partial overlap behind an alias (red team s31c): `kernel(a, s, o)` called as `(y, y[:B-1], y)` -
#   the alias search stopped at o's same-memory partner a, so o's partial overlap with s went unchecked, and the
#   device built s as its own copy where a user's s is memory the first loop already overwrote
"""gelu."""

import pypto
import torch

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    a: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    s: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    o: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = a.shape[0]
    srows = s.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(a, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], o)
    for j in pypto.loop(pypto.ceildiv(srows, ROW_TILE), name="again_loop", idx_name="j", unroll_list=[1]):
        valid = (srows - j * ROW_TILE).min(ROW_TILE)
        st = pypto.view(s, [ROW_TILE, COLS], [j * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(st * pypto.sigmoid(st * 1.702), [j * ROW_TILE, 0], o)


def gelu_wrapper(x):
    y = torch.clone(x)
    gelu_kernel(y, y[: y.shape[0] - 1], y)
    return y
