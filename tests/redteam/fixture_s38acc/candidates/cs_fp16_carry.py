"""col_stats (accident: the carried sums kept in the input dtype, fp16): column sums over 16-row tiles carried across the row loop in the fp32 output rows (the
layer_norm_backward pattern): the first tile writes, later tiles add."""

import numpy as np
import pypto

TILE = 16
C = 64


@pypto.frontend.jit
def col_stats_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP16),
    s_out: pypto.Tensor([1, C], pypto.DT_FP32),
    sq_out: pypto.Tensor([1, C], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, C)
    acc_s = pypto.tensor([1, C], pypto.DT_FP16, "acc_s")
    acc_sq = pypto.tensor([1, C], pypto.DT_FP16, "acc_sq")
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xf = pypto.cast(pypto.view(x, [TILE, C], [i * TILE, 0], valid_shape=[valid, C]), pypto.DT_FP32)
        s_part = pypto.cast(pypto.sum(xf, 0, keepdim=True), pypto.DT_FP16)          # [1, C]
        sq_part = pypto.cast(pypto.sum(pypto.mul(xf, xf), 0, keepdim=True), pypto.DT_FP16)
        if pypto.is_loop_begin(i):
            acc_s[:] = s_part
            acc_sq[:] = sq_part
        else:
            acc_s[:] = pypto.add(acc_s, s_part)
            acc_sq[:] = pypto.add(acc_sq, sq_part)
        if pypto.is_loop_end(i):
            s_out[:] = pypto.cast(acc_s, pypto.DT_FP32)
            sq_out[:] = pypto.cast(acc_sq, pypto.DT_FP32)


def col_stats_wrapper(x):
    s = np.zeros((1, C), dtype=np.float32)
    sq = np.zeros((1, C), dtype=np.float32)
    col_stats_kernel(x, s, sq)
    return s.reshape(C), sq.reshape(C)
