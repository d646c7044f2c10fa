"""pairtwo golden: y = 2 * mean of x's row pairs + mean of z's row pairs (fp32)."""

import numpy as np


def golden(x, z):
    a_mean = (x[0::2] + x[1::2]) / 2.0
    b_mean = (z[0::2] + z[1::2]) / 2.0
    y = a_mean * 2.0 + b_mean
    return y.astype(np.float32)
