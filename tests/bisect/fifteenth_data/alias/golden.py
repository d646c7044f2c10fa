"""alias golden: y = (x * x) * 0.5 + 1 (fp32 inside, returned in x's dtype)."""

import numpy as np


def golden(x):
    xf = x.astype(np.float32)
    sq = xf * xf
    ms = sq * 0.5
    y = ms + 1.0
    return y.astype(x.dtype)
