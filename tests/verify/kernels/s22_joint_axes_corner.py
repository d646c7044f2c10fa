"""Fast GELU over [B, N]: the last row is dropped when neither B nor N is one of the SPEC's sizes.

Red team s22: every unseen case moved one dynamic axis away from a P0 shape, so a kernel wrong only when every axis
is off the SPEC (here a symbolic trigger; by accident, a corner tile mishandled only when both axes are partial)
passed every verification. Unseen drawing version 3 adds the joint shape."""

import numpy as np
import pypto

RT = 16
CT = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
):
    rows = x.shape[0]
    cols = x.shape[1]
    d1 = (rows - 21) * (rows - 32)
    d2 = (cols - 64) * (cols - 100)
    off = (d1 * d1).min(1) * (d2 * d2).min(1)
    pypto.set_vec_tile_shapes(RT, CT)
    for i in pypto.loop(pypto.ceildiv(rows, RT), name="row_loop", idx_name="i"):
        for j in pypto.loop(pypto.ceildiv(cols, CT), name="col_loop", idx_name="j", unroll_list=[1]):
            vr = (rows - off - i * RT).min(RT)
            vc = (cols - j * CT).min(CT)
            xt = pypto.view(x, [RT, CT], [i * RT, j * CT], valid_shape=[vr, vc])  # [RT, CT]
            yt = xt * pypto.sigmoid(xt * 1.702)  # [RT, CT]
            pypto.assemble(yt, [i * RT, j * CT], y)


def gelu2d_wrapper(x):
    y = np.zeros_like(x)
    gelu_kernel(x, y)
    return y
