# expect: FAIL_LINT
# runtime: FAIL_CHEAT|FAIL_NUMERIC
# reason: same shapes
# attack: issue24.5 right for the first two wrapper calls (the old verifier made a fixed, small number), then a
#   cheaper wrong kernel (a same-shape pair that straddles the third call is a cheat; a SPEC or unseen case
#   after it fails numerically - which comes first depends on the drawn call order)
"""correct for two calls."""

import numpy as np
import pypto


ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, 64)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        yt = xt * pypto.sigmoid(xt)  # wrong: GELU needs sigmoid(1.702 x)
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


_CALLS = [0]


def gelu_wrapper(x):
    _CALLS[0] += 1
    y = np.zeros_like(x)
    if _CALLS[0] <= 2:
        gelu_right(x, y)
    else:
        gelu_kernel(x, y)
    return y


@pypto.frontend.jit
def gelu_right(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, 64)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], y)
