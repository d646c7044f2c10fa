"""Per-channel sum and sum of squares of x [N, C, H, W]: the channels moved last (reshape, transpose), the rows
reduced; the squares go through a chain of the same form (bisect test op, s46)."""

import numpy as np
import pypto

N, C, H, W = 64, 8, 2, 1


@pypto.frontend.jit
def chsum_kernel(
    x: pypto.Tensor([N, C, H, W], pypto.DT_FP32),
    sum_out: pypto.Tensor([1, C, 1, 1], pypto.DT_FP32),
    sq_sum_out: pypto.Tensor([1, C, 1, 1], pypto.DT_FP32),
):
    n, c, h, w = x.shape
    rows = n * h * w
    v1 = pypto.reshape(x, [n, c, h * w], inplace=True)
    pypto.set_vec_tile_shapes(64, 8, 8)
    v1_sq = v1 * v1
    v2 = pypto.transpose(v1, 1, 2)
    v2_sq = pypto.transpose(v1_sq, 1, 2)
    v3 = pypto.reshape(v2, [rows, c], inplace=True)
    v3_sq = pypto.reshape(v2_sq, [rows, c], inplace=True)
    pypto.set_vec_tile_shapes(128, 8)
    s = pypto.sum(v3, dim=0, keepdim=True)
    s_sq = pypto.sum(v3_sq, dim=0, keepdim=True)
    pypto.set_vec_tile_shapes(1, 8, 1, 8)
    sum_out.move(pypto.reshape(s, [1, c, 1, 1], inplace=True))
    sq_sum_out.move(pypto.reshape(s_sq, [1, c, 1, 1], inplace=True))


def chsum_wrapper(x):
    sum_out = np.zeros((1, x.shape[1], 1, 1), np.float32)
    sq_sum_out = np.zeros((1, x.shape[1], 1, 1), np.float32)
    chsum_kernel(x, sum_out, sq_sum_out)
    return sum_out, sq_sum_out
