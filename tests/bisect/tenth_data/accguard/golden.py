"""accguard golden: y = x @ w (fp32)."""

import numpy as np


def golden(x, w):
    return (x @ w).astype(np.float32)
