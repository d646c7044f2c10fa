"""decay golden: y = w - 0.1 * (2 g) (fp32)."""

import numpy as np


def golden(w, g):
    update = g * 2.0
    w_new = w - 0.1 * update
    return w_new.astype(np.float32)
