"""inplace golden: y = x * 2 + x (fp32)."""

import numpy as np


def golden(x):
    return (x * 2.0 + x).astype(np.float32)
