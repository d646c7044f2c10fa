"""col_stats (honest: every tile adds onto the output rows the wrapper zero-fills on every call, as a GM accumulation does): column sums over 16-row tiles carried across the row loop in the fp32 output rows (the
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
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xf = pypto.cast(pypto.view(x, [TILE, C], [i * TILE, 0], valid_shape=[valid, C]), pypto.DT_FP32)
        s_part = pypto.sum(xf, 0, keepdim=True)                        # [1, C]
        sq_part = pypto.sum(pypto.mul(xf, xf), 0, keepdim=True)        # [1, C]
        s_out[:] = pypto.add(s_out, s_part)
        sq_out[:] = pypto.add(sq_out, sq_part)


def col_stats_wrapper(x):
    s = np.zeros((1, C), dtype=np.float32)
    sq = np.zeros((1, C), dtype=np.float32)
    col_stats_kernel(x, s, sq)
    return s.reshape(C), sq.reshape(C)
