"""Row RMS normalisation by a square root and a division (the golden multiplies by a reciprocal square root), with
the row tile's extent held in a local (gym sum_lstm's ``current_tile_bs``)."""

import numpy as np
import pypto

ROWS = 8
COLS = 32
EPS = 1e-6


@pypto.frontend.jit
def rmsrow_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    n = x.shape[0]
    for i in pypto.loop((n + ROWS - 1) // ROWS, name="r_loop"):
        rows = ROWS
        pypto.set_vec_tile_shapes(rows, COLS)
        valid = (n - i * ROWS).min(rows)
        x_t = pypto.view(x, [rows, COLS], [i * ROWS, 0], valid_shape=[valid, COLS])
        sq = pypto.mul(x_t, x_t)
        ms = pypto.mul(pypto.sum(sq, -1, keepdim=True), 1.0 / COLS)
        r = pypto.sqrt(pypto.add(ms, EPS))
        y_t = pypto.div(x_t, r)
        pypto.assemble(y_t, [i * ROWS, 0], y)


def rmsrow_wrapper(x):
    y = np.zeros_like(x)
    rmsrow_kernel(x, y)
    return y
