"""tilemm golden: y = exp(x @ w^T / 4) (fp32)."""

import numpy as np


def golden(x, w):
    y = np.exp((x @ w.T) * 0.25)
    return y.astype(np.float32)
