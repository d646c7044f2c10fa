"""chsum golden: per-channel sum and sum of squares over N, H, W (fp32)."""

import numpy as np


def golden(x):
    xf = x.astype(np.float32)
    sum_out = xf.sum(axis=(0, 2, 3), keepdims=True)
    sq = xf * xf
    sq_sum_out = sq.sum(axis=(0, 2, 3), keepdims=True)
    return sum_out, sq_sum_out
