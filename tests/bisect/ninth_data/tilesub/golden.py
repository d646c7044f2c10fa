"""tilesub golden: y = exp(x @ w^T / 2) (fp32)."""

import numpy as np


def golden(x, w):
    y = np.exp((x @ w.T) * 0.5)
    return y.astype(np.float32)
