# expect: FAIL_NUMERIC
# reason: dtype fp64, expected fp32
# class: own: float64 output whose values equal the golden's (a float cast of the kernel's bytes is accepted as the
# device's own rounding since s32 - the output is judged, and its dtype is not the SPEC's)
"""Fast GELU kernel: y = x * sigmoid(1.702 x) over 16-row tiles of a dynamic row count, tail via valid_shape."""

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
        yt = xt * pypto.sigmoid(xt * 1.702)  # [ROW_TILE, COLS]
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


def gelu_wrapper(x):
    y = np.empty_like(x)
    gelu_kernel(x, y)
    return y.astype(np.float64)
