"""padsplit golden: y = 2x + 1 (fp32)."""

import numpy as np


def golden(x):
    return (x * 2.0 + 1.0).astype(np.float32)
